"""SQLAlchemy Core tables. The schema is created and changed only by Alembic migrations.

Case bodies are content-addressed: ``case_bodies`` holds one canonical JSON body per SHA-256
(under an integer id). A version is a row in ``dataset_versions`` plus its ordered
``(position, case_id, body_id)`` rows in ``version_cases``; equal body ids mean equal hashes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect

metadata = MetaData()

SHARED_WORKSPACE = "_shared"
DEFAULT_WORKSPACE = "default"


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite keeps naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


workspaces = Table(
    "workspaces",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

# Bodies are appended in load order under an integer id (migration 0004); the UNIQUE index on the
# full ``hash`` keeps one body per SHA-256 even across concurrent imports (migration 0005).
case_bodies = Table(
    "case_bodies",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("hash", String(64), nullable=False),
    Column("body", Text, nullable=False),
)
Index("uq_case_bodies_hash", case_bodies.c.hash, unique=True)

dataset_versions = Table(
    "dataset_versions",
    metadata,
    Column(
        "pk", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("dataset_id", String(128), nullable=False),
    Column("version", String(128), nullable=False),
    Column("is_prerelease", Boolean, nullable=False),
    Column("description", Text),
    Column("tags", Text, nullable=False),  # canonical JSON list of content tags
    Column("produced_by", Text),  # canonical JSON of Provenance, or NULL
    Column("content_hash", String(64), nullable=False),
    Column("case_count", Integer, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("deleted_at", UTCDateTime()),
    Column("deleted_by", String(200)),
    UniqueConstraint("workspace", "dataset_id", "version", name="uq_dataset_versions_key"),
)
Index("ix_dataset_versions_ws_live", dataset_versions.c.workspace, dataset_versions.c.deleted_at)

# One row per (workspace, id) with a live version, kept by ``store.dataset_heads`` in the same
# transaction as every version write (migration 0011): the datasets list and owner resolution
# read ~1 row per id instead of every version.
dataset_heads = Table(
    "dataset_heads",
    metadata,
    Column("workspace", String(64), ForeignKey("workspaces.id"), primary_key=True),
    Column("dataset_id", String(128), primary_key=True),
    Column(
        "latest_pk",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("dataset_versions.pk"),
        nullable=False,
    ),
    Column("versions", Integer, nullable=False),  # live versions of the id
    Column("case_count", Integer, nullable=False),  # the latest version's
    Column("updated_at", UTCDateTime(), nullable=False),  # newest live created_at
    Column("first_pk", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
    # What the list's search matches, folded (``str.lower``) and joined by ``\x1f``: the id, the
    # latest's description and content tags, every live version's tags (migration 0013).
    Column("search_text", Text, nullable=False),
)

version_cases = Table(
    "version_cases",
    metadata,
    Column(
        "version_pk",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("dataset_versions.pk"),
        primary_key=True,
    ),
    Column("position", Integer, primary_key=True),
    Column("case_id", String(512), nullable=False),
    Column("body_id", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
)
Index("ix_version_cases_case_id", version_cases.c.version_pk, version_cases.c.case_id)

version_tags = Table(
    "version_tags",
    metadata,
    Column("workspace", String(64), primary_key=True),
    Column("dataset_id", String(128), primary_key=True),
    Column("tag", String(60), primary_key=True),
    Column(
        "version_pk",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("dataset_versions.pk"),
        nullable=False,
    ),
    Column("set_by", String(200), nullable=False),
    Column("set_at", UTCDateTime(), nullable=False),
)

# The import keys a version was read under (``datasets/import_key.py``, migration 0015): an
# import of the same file under a recorded key registers nothing without building rows.
version_sources = Table(
    "version_sources",
    metadata,
    Column(
        "version_pk",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("dataset_versions.pk"),
        primary_key=True,
    ),
    Column("import_key", String(64), primary_key=True),
)

events = Table(
    "events",
    metadata,
    Column(
        "pk", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("workspace", String(64), nullable=False),
    Column("resource_type", String(32), nullable=False),
    Column("resource_id", String(200), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("at", UTCDateTime(), nullable=False),
    Column("details", Text, nullable=False),
)
Index("ix_events_resource", events.c.workspace, events.c.resource_type, events.c.resource_id)

# --- accounts, API keys, sessions, secrets, comments (migration 0002) ---------------------------

users = Table(
    "users",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("email", String(320), nullable=False),
    Column("email_key", String(320), nullable=False, unique=True),  # lower-cased email
    Column("display_name", String(200), nullable=False),
    Column("password_hash", Text),  # argon2id; NULL means password login is disabled
    Column("installation_admin", Boolean, nullable=False, default=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

memberships = Table(
    "memberships",
    metadata,
    Column("workspace", String(64), ForeignKey("workspaces.id"), primary_key=True),
    Column("user_id", String(64), ForeignKey("users.id"), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)
Index("ix_memberships_user", memberships.c.user_id)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("user_id", String(64), ForeignKey("users.id"), nullable=False),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("prefix", String(16), nullable=False),  # first characters of the key, for display
    Column("key_hash", String(64), nullable=False, unique=True),  # sha256 hex of the whole key
    Column("scope", String(16), nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("last_used_at", UTCDateTime()),
    Column("revoked_at", UTCDateTime()),
)
Index("ix_api_keys_workspace", api_keys.c.workspace, api_keys.c.user_id)

sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),  # sha256 hex of the cookie token
    Column("user_id", String(64), ForeignKey("users.id"), nullable=False),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
)

secrets = Table(
    "secrets",
    metadata,
    Column(
        "pk", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("scope", String(16), nullable=False),  # user | workspace
    Column("owner", String(200), nullable=False),  # user id or workspace id
    Column("name", String(128), nullable=False),
    Column("ciphertext", Text, nullable=False),  # Fernet token; never the plain value
    Column("updated_by", String(200), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    # JSON list of the hosts the value may be sent to (migration 0016); [] = nowhere
    Column("hosts", Text, nullable=False, server_default="[]"),
    UniqueConstraint("scope", "owner", "name", name="uq_secrets_key"),
)

comments = Table(
    "comments",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("resource_type", String(32), nullable=False),
    Column("resource_id", String(200), nullable=False),
    Column("parent_id", BigInteger().with_variant(Integer, "sqlite"), ForeignKey("comments.id")),
    Column("author", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("deleted_at", UTCDateTime()),
    Column("deleted_by", String(200)),
)
Index(
    "ix_comments_resource",
    comments.c.workspace,
    comments.c.resource_type,
    comments.c.resource_id,
    comments.c.created_at,
)

# --- recipes and import jobs (migration 0003) ---------------------------------------------

recipes = Table(
    "recipes",
    metadata,
    Column(
        "pk", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("recipe_id", String(128), nullable=False),
    Column("version", String(128), nullable=False),
    Column("is_prerelease", Boolean, nullable=False),
    Column("body", Text, nullable=False),  # canonical JSON of the parsed Recipe
    Column("content_hash", String(64), nullable=False),  # sha256 hex of ``body``
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("workspace", "recipe_id", "version", name="uq_recipes_key"),
)

import_jobs = Table(
    "import_jobs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("state", String(16), nullable=False),  # queued|running|succeeded|failed|cancelled
    Column("request", Text, nullable=False),  # ImportRequest JSON without inline ``text``
    Column("file_name", String(512)),
    Column("rows_read", BigInteger, nullable=False),
    Column("cases_built", BigInteger, nullable=False),
    Column("total", BigInteger),
    Column("fraction", Float),  # share of the source read, 0.0-1.0 (migration 0012)
    Column("result", Text),  # ImportResult JSON once succeeded
    Column("error", Text),  # {code, message, details} JSON once failed or cancelled
    Column("cancel_requested", Boolean, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("started_at", UTCDateTime()),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime()),
    Column("claimed_by", String(80)),  # the process running the job (host:pid:nonce)
    Column("lease_expires_at", UTCDateTime()),  # past it, the job's process is taken as gone
)
Index("ix_import_jobs_workspace", import_jobs.c.workspace, import_jobs.c.created_at)

worker_leases = Table(
    "worker_leases",
    metadata,
    Column("name", String(40), primary_key=True),  # "runs": the one runs worker on SQLite
    Column("holder", String(80), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
)

uploads = Table(
    "uploads",
    metadata,
    Column("id", String(40), primary_key=True),  # upl_<hex>
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("user_id", String(200), nullable=False),
    Column("name", String(512), nullable=False),  # the file name as the user sent it
    Column("size_bytes", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)
Index("ix_uploads_created", uploads.c.created_at)

upload_chunks = Table(
    "upload_chunks",
    metadata,
    Column("upload_id", String(40), ForeignKey("uploads.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),  # ≤ 1 MiB of the file, in order
)

_BIGPK = BigInteger().with_variant(Integer, "sqlite")

harnesses = Table(
    "harnesses",
    metadata,
    Column("pk", _BIGPK, primary_key=True, autoincrement=True),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("harness_id", String(128), nullable=False),
    Column("version", String(128), nullable=False),
    Column("is_prerelease", Boolean, nullable=False),
    Column("kind", String(16), nullable=False),  # command|openai|python|agent|external
    Column("body", Text, nullable=False),  # canonical JSON of the parsed Harness
    Column("content_hash", String(64), nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("deleted_at", UTCDateTime()),  # tombstone: hidden from reads, bytes kept
    UniqueConstraint("workspace", "harness_id", "version", name="uq_harnesses_key"),
)

# --- registered code and model endpoints (migration 0016) ------------------------------------

registered_code = Table(
    "registered_code",
    metadata,
    Column("pk", _BIGPK, primary_key=True, autoincrement=True),
    Column("noun", String(16), nullable=False),  # grader | environment
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("item_id", String(128), nullable=False),
    Column("version", String(128), nullable=False),
    Column("is_prerelease", Boolean, nullable=False),
    Column("body", Text, nullable=False),  # canonical JSON of the parsed item
    Column("content_hash", String(64), nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("deleted_at", UTCDateTime()),  # tombstone: hidden from reads, bytes kept
    UniqueConstraint("noun", "workspace", "item_id", "version", name="uq_registered_code"),
)

endpoints = Table(
    "endpoints",
    metadata,
    Column("pk", _BIGPK, primary_key=True, autoincrement=True),
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("name", String(128), nullable=False),
    Column("url", Text, nullable=False),  # normalized: no trailing slash
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("workspace", "name", name="uq_endpoints_name"),
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(40), primary_key=True),  # run_<hex>
    Column("workspace", String(64), ForeignKey("workspaces.id"), nullable=False),
    Column("dataset_pk", BigInteger, ForeignKey("dataset_versions.pk"), nullable=False),
    Column("dataset_id", String(128), nullable=False),
    Column("dataset_version", String(128), nullable=False),
    Column("dataset_content_hash", String(64), nullable=False),
    Column("harness_pk", BigInteger, ForeignKey("harnesses.pk"), nullable=False),
    Column("harness_ref", String(260), nullable=False),  # id@version
    Column("harness_hash", String(64), nullable=False),
    Column("plan", Text, nullable=False),  # RunPlan JSON
    Column("plan_hash", String(64), nullable=False),
    Column("settings", Text, nullable=False),  # RunSettings JSON
    Column("status", String(20), nullable=False),
    Column("error", Text),
    Column("total", BigInteger, nullable=False),  # (case, sample) pairs selected
    Column("spent_usd", Float, nullable=False),
    Column("scorecard_id", String(40)),  # the run's own scorecard
    Column("cancel_requested", Boolean, nullable=False),
    Column("claimed_by", String(80)),  # the executing process (host:pid:nonce)
    Column("heartbeat_at", UTCDateTime()),
    Column("lease_expires_at", UTCDateTime()),  # the holder's claim lapses then (renewed)
    Column("reproducibility", Text, nullable=False),  # JSON (SPEC H.9)
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("started_at", UTCDateTime()),
    Column("finished_at", UTCDateTime()),
    # native | reported (| imported): where the results came from (migration 0016)
    Column("origin", String(16), nullable=False, server_default="native"),
    Column("reported_by", String(200)),  # the reporter's user id for origin reported
    Column("budget_caps", Text),  # [{budget_usd, set_by, set_at}] JSON (migration 0017)
)
Index("ix_runs_workspace", runs.c.workspace, runs.c.created_at)
Index("ix_runs_dataset", runs.c.dataset_pk)
Index("ix_runs_status", runs.c.status)

case_results = Table(
    "case_results",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("case_id", String(512), primary_key=True),
    Column("sample", Integer, primary_key=True),
    Column("position", BigInteger, nullable=False),  # the case's position in the version
    Column("status", String(10), nullable=False),  # ok|error|not_run
    Column("error", Text),
    Column("answer", Text, nullable=False),
    Column("passed", Boolean),
    Column("cost_usd", Float),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Column("trace", LargeBinary),  # zlib-compressed Trace JSON (None when kept as a file)
    Column("trace_path", Text),  # relative to BENCHBOOK_HOME/traces for traces over 1 MiB
    Column("trace_sha256", String(64)),  # of the uncompressed trace JSON
    Column("finished_at", UTCDateTime(), nullable=False),
    Column("grader_error", Text),  # what grading could not decide (migration 0017)
    Column("agent_limit", String(16)),  # steps|messages|tokens|time: an agent stopped at it
)
Index(
    "ix_case_results_order", case_results.c.run_id, case_results.c.position, case_results.c.sample
)
# covers a run's counts (status × passed) and finds its errored results without the rows
Index(
    "ix_case_results_outcome", case_results.c.run_id, case_results.c.status, case_results.c.passed
)

scorecards = Table(
    "scorecards",
    metadata,
    Column("id", String(40), primary_key=True),  # sc_<hex>
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False),
    Column("plan", Text, nullable=False),
    Column("plan_hash", String(64), nullable=False),
    Column("rescore_of", String(40)),
    Column("summary", Text),  # Scorecard JSON once computed
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)
Index("ix_scorecards_run", scorecards.c.run_id, scorecards.c.created_at)

scorecard_scores = Table(
    "scorecard_scores",
    metadata,
    Column("scorecard_id", String(40), ForeignKey("scorecards.id"), primary_key=True),
    Column("case_id", String(512), primary_key=True),
    Column("sample", Integer, primary_key=True),
    Column("passed", Boolean),
    Column("scores", Text, nullable=False),  # [Score] JSON
    Column("grader_error", Text),  # what grading could not decide (migration 0017)
)

judge_verdicts = Table(
    "judge_verdicts",
    metadata,
    Column("workspace", String(64), primary_key=True),
    Column("judge_hash", String(64), primary_key=True),
    Column("input_hash", String(64), primary_key=True),
    Column("verdict", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

scorecard_tags = Table(
    "scorecard_tags",
    metadata,
    Column("workspace", String(64), ForeignKey("workspaces.id"), primary_key=True),
    Column("dataset_id", String(128), primary_key=True),  # a tag names one scorecard per dataset
    Column("tag", String(60), primary_key=True),
    Column("scorecard_id", String(40), ForeignKey("scorecards.id"), nullable=False),
    Column("set_by", String(200), nullable=False),
    Column("set_at", UTCDateTime(), nullable=False),
)
Index("ix_scorecard_tags_scorecard", scorecard_tags.c.scorecard_id)

verdict_vectors = Table(
    "verdict_vectors",
    metadata,
    # one per scorecard: its (case_id, sample, outcome) of every result in dataset order, as
    # one blob (store/verdicts.py), so a comparison reads no 100k-row query (migration 0018)
    Column("scorecard_id", String(40), ForeignKey("scorecards.id"), primary_key=True),
    Column("run_stamp", String(80), nullable=False),  # the run's status|finished_at then
    Column("pairs", BigInteger, nullable=False),
    Column("vector", LargeBinary, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

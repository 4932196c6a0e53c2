"""Run contracts (SPEC H.2, H.4): what a harness receives, what it leaves, and the run record.

Layering (DESIGN §1): the runtime receives a :class:`CaseInput` — never a
:class:`~benchbook.contracts.dataset.Case` — and returns a :class:`RuntimeResult` holding a
:class:`Trace`. Grading happens in ``eval/`` afterwards and produces the scores of a
:class:`CaseResult`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    NonNegativeInt,
    PositiveInt,
    model_validator,
)

from benchbook.contracts.common import (
    JSON_INT,
    STRICT,
    STRICT_EAGER,
    CaseId,
    IdRef,
    JsonBool,
    JsonCount,
    JsonFloat,
    JsonPositiveInt,
    NonEmptyStr,
    PinnedRef,
)
from benchbook.contracts.dataset import (
    Env,
    GraderSpec,
    Network,
    Placement,
    Resources,
    RunGrader,
)
from benchbook.contracts.score import Score

MAX_REPEATS = 100
"""Most samples a run takes of each case (``RunSettings.repeats``); samples are 0 … 99."""
SampleIndex = Annotated[int, Field(ge=0, le=MAX_REPEATS - 1), JSON_INT]
"""A 0-based repeat index of a (case, sample): 0 to ``MAX_REPEATS - 1``."""


class CaseInput(BaseModel):
    """Everything a harness may see of one (case, sample) (SPEC H.2).

    Built in the evaluation layer from a case with every gold field left out: ``expected``,
    ``milestones``, the case's ``graders`` and the metadata keys named in ``gold_fields`` never
    appear here. ``metadata`` holds the remaining (non-gold) metadata keys.

    Attributes:
        case_id: the case id; ``sample`` the 0-based repeat index.
        timeout_s: seconds the harness may run before it is killed (> 0).
    """

    model_config = STRICT
    case_id: CaseId
    sample: NonNegativeInt = 0
    env: Env
    task: str
    image: str | None = None
    timeout_s: PositiveInt = 1800
    resources: Resources | None = None
    network: Network | None = None
    placement: Placement | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)


class Usage(BaseModel):
    """Token usage summed over a harness's model calls."""

    model_config = STRICT
    input_tokens: JsonCount = 0
    output_tokens: JsonCount = 0


class HarnessOutput(BaseModel):
    """What a ``python`` harness may return instead of a plain answer string.

    ``model`` names the model whose pricing applies to ``usage`` (None: unpriced).
    """

    model_config = STRICT
    answer: str
    messages: list[dict[str, JsonValue]] = Field(default_factory=list)
    tool_calls: list[dict[str, JsonValue]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    events: list[dict[str, JsonValue]] = Field(default_factory=list)


class EnvAudit(BaseModel):
    """A repo environment's state checked before the harness starts (SPEC H.3).

    ``ok`` is True when HEAD equals ``commit``, the tree is clean and nothing is untracked or
    ignored; ``problems`` says what was wrong otherwise.
    """

    model_config = STRICT
    ok: JsonBool
    commit: str | None = None
    head: str | None = None
    clean: JsonBool | None = None
    untracked: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class EnvSnapshot(BaseModel):
    """The environment after the harness (SPEC H.3).

    Attributes:
        diff: repo environments: ``git diff --binary`` against the ref, new files included.
        output: prompt environments: files the harness left in its workdir (name → text), if any.
        url: browser environments: the final page URL.
        screenshot: browser environments: a PNG of the final page, base64-encoded.
        audit: the pre-harness audit of a repo environment.
    """

    model_config = STRICT
    diff: str | None = None
    output: dict[str, str] | None = None
    url: str | None = None
    screenshot: str | None = None
    audit: EnvAudit | None = None


AgentLimit = Literal["steps", "messages", "tokens", "time"]
"""Which limit ended an ``agent`` harness's case before it submitted (issue 33)."""


class Trace(BaseModel):
    """What one (case, sample) left behind (SPEC H.4).

    Attributes:
        messages: chat messages ``{role, content}`` exchanged with a model, if any.
        tool_calls: tool calls the harness reported.
        usage: tokens summed over model calls; ``model`` the model they were priced with.
        cost_usd: ``usage`` priced with the run's pricing table (None: no price known).
        started_at: when the harness started (UTC); ``duration_ms`` its wall time.
        answer: the harness's final answer (text).
        env_snapshot: the environment after the harness.
        stdout_tail, stderr_tail: the last 8 KiB of a command harness's output streams.
        events: trace events a harness wrote (``{type: message|tool_call|tool_result|usage|note}``;
            the ``agent`` kind adds ``model_call`` events: ``{step, input_tokens, output_tokens,
            latency_ms, finish_reason, id, cost_usd?}``).
        limit: the ``agent`` kind's limit that ended the case without a submitted answer
            (``steps|messages|tokens|time``); None when it submitted (or for other kinds).
    """

    model_config = STRICT
    messages: list[dict[str, JsonValue]] = Field(default_factory=list)
    tool_calls: list[dict[str, JsonValue]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    cost_usd: JsonFloat | None = None
    started_at: datetime | None = None
    duration_ms: JsonCount = 0
    answer: str = ""
    env_snapshot: EnvSnapshot = Field(default_factory=EnvSnapshot)
    stdout_tail: str = ""
    stderr_tail: str = ""
    events: list[dict[str, JsonValue]] = Field(default_factory=list)
    limit: AgentLimit | None = None


class RuntimeResult(BaseModel):
    """The runtime's outcome for one (case, sample): ``status`` ``ok`` or ``error`` with the
    reason (``timeout``, ``exit code 3``, ``no environment provider for os-use`` …)."""

    model_config = STRICT
    status: Literal["ok", "error"]
    error: str | None = None
    trace: Trace


CaseStatus = Literal["ok", "error", "not_run"]
ResultFilter = Literal[
    "passed", "failed", "errored", "grader_error", "not_run", "regressed", "fixed", "flaky"
]
"""Which results a page of a run shows (``regressed``/``fixed`` are against a baseline;
``flaky``: cases whose verdict differs across samples or runs of the same harness@version;
``grader_error``: pairs whose grading could not decide)."""
RESULT_FILTERS: tuple[ResultFilter, ...] = get_args(ResultFilter)


class CaseResult(BaseModel):
    """One (case, sample) of a run (SPEC H.4).

    ``passed`` is True when the harness finished (``ok``), no grader failed to decide and every
    score that gives a verdict passed (at least one must); False otherwise; None for
    ``not_run``. ``grader_error`` says what made it a *grader error* (SPEC H.6, fail closed):
    ``"<metric>: <message>"`` of the first score with status ``error`` of a finished harness —
    such a pair is never passed and is counted apart from harness errors. ``position`` is the
    case's 0-based position in the dataset version; ``"<position>:<sample>"`` of the last result
    of a page is the cursor of the next one.
    """

    model_config = STRICT
    case_id: str
    sample: NonNegativeInt
    position: NonNegativeInt | None = None
    status: CaseStatus
    error: str | None = None
    answer: str = ""
    passed: bool | None = None
    grader_error: str | None = None
    scores: list[Score] = Field(default_factory=list)
    cost_usd: float | None = None
    duration_ms: NonNegativeInt = 0
    trace: Trace | None = None


RunStatus = Literal["queued", "running", "finished", "failed", "cancelled", "budget_exhausted"]
Executor = Literal["local", "ray"]
RAY_ADDRESS = r"^(auto|(ray://)?[A-Za-z0-9.\-\[\]:]+:[0-9]{1,5})$"
"""``auto``, ``ray://host:port`` or ``host:port``."""


#: JSON Schema of :class:`RunSettings`' rule: no ``ray_address`` or ``ray_num_cpus`` unless
#: ``executor`` is ``ray``
#: (an absent executor is ``local``).
RAY_FIELDS_ONLY_WITH_RAY: dict[str, Any] = {
    "allOf": [
        {
            "not": {
                "required": [name],
                "properties": {name: {"type": kind}, "executor": {"not": {"const": "ray"}}},
            }
        }
        for name, kind in (("ray_address", "string"), ("ray_num_cpus", "number"))
    ]
}


class RunSettings(BaseModel):
    """How a run executes (SPEC H.4).

    Attributes:
        concurrency: cases in flight at once (≥ 1).
        repeats: samples per case (≥ 1), for pass@k and pass^k.
        case_ids, tags, limit: the subset: only these ids, only cases with one of these tags,
            then the first ``limit`` of them in dataset order. The subset must select a case.
        budget_usd: no new case starts once the spent cost reaches it (≥ 0).
        timeout_s: per-case timeout overriding each case's ``timeout_s``.
        executor: ``local`` (asyncio in this process) or ``ray`` (each case a Ray task; the
            ``ray`` extra).
        ray_address: the cluster for ``ray``: ``auto`` (default: the cluster this machine
            belongs to), ``ray://host:port`` (Ray Client) or ``host:port`` (the head's GCS).
        ray_max_retries: how often Ray resubmits a case whose worker or node died before it is
            recorded ``error`` (0–20).
        ray_num_cpus: the logical CPUs Ray reserves for a case that declares no
            ``cpu_millicores`` (0.0001–1024). None (default): the cluster's CPUs / ``concurrency``,
            at most 1 — so ``concurrency`` such cases run at once, as with the local executor.
            Only with executor ``ray``.

    Raises (on validation): ``ray_address`` or ``ray_num_cpus`` with an executor other than
    ``ray``.
    """

    model_config = ConfigDict(**STRICT, json_schema_extra=RAY_FIELDS_ONLY_WITH_RAY)
    concurrency: Annotated[int, Field(ge=1, le=1024), JSON_INT] = 4
    repeats: Annotated[int, Field(ge=1, le=MAX_REPEATS), JSON_INT] = 1
    case_ids: list[NonEmptyStr] | None = None
    tags: list[NonEmptyStr] | None = None
    limit: JsonPositiveInt | None = None
    budget_usd: Annotated[JsonFloat, Field(ge=0)] | None = None
    timeout_s: JsonPositiveInt | None = None
    executor: Executor = "local"
    ray_address: Annotated[str, Field(pattern=RAY_ADDRESS)] | None = None
    ray_max_retries: Annotated[int, Field(ge=0, le=20), JSON_INT] = 3
    ray_num_cpus: Annotated[JsonFloat, Field(ge=0.0001, le=1024)] | None = None

    @model_validator(mode="after")
    def _ray_fields_only_with_ray(self) -> RunSettings:
        for name in ("ray_address", "ray_num_cpus"):
            if getattr(self, name) is not None and self.executor != "ray":
                raise ValueError(f"{name} is only allowed with executor 'ray'")
        return self


class RunPlan(BaseModel):
    """The grading plan: grader specs (``judge`` graders included) replacing each case's own
    ``graders``; empty means each case's default graders. ``hash`` covers them all (H.5)."""

    model_config = STRICT
    graders: list[GraderSpec] = Field(default_factory=list)


class Interval(BaseModel):
    """A confidence interval ``[low, high]`` at ``level`` (0.95) computed by ``method``."""

    model_config = STRICT
    low: float
    high: float
    level: float = 0.95
    method: str = "wilson"


class RunCounts(BaseModel):
    """Progress of a run in (case, sample) units: ``error`` counts harness errors,
    ``grader_errors`` the ``ok`` pairs whose grading could not decide (SPEC H.6; never passed)."""

    model_config = STRICT
    total: NonNegativeInt = 0
    done: NonNegativeInt = 0
    ok: NonNegativeInt = 0
    error: NonNegativeInt = 0
    not_run: NonNegativeInt = 0
    passed: NonNegativeInt = 0
    grader_errors: NonNegativeInt = 0


class StartRunRequest(BaseModel):
    """``start_run``'s body: what to run, on which data, graded how.

    ``dataset`` and ``harness`` are ``id`` or ``id@ref`` (a version, a tag or ``latest``;
    default ``latest``). ``graders`` replace each case's own graders when given. ``preflight``
    (default true): ask every model endpoint the run needs (its judges, an ``openai`` harness)
    once before storing the run, and refuse it when one does not answer.
    """

    model_config = STRICT_EAGER
    dataset: IdRef
    harness: IdRef
    graders: list[RunGrader] | None = None
    settings: RunSettings = Field(default_factory=RunSettings)
    preflight: JsonBool = True


class ErrorCount(BaseModel):
    """One distinct error message of a run and how many (case, sample) pairs had it:
    ``kind`` ``harness`` (the harness or its environment failed) or ``grader`` (grading could
    not decide, SPEC H.6)."""

    model_config = STRICT
    error: str
    count: PositiveInt
    kind: Literal["harness", "grader"] = "harness"


class BudgetCap(BaseModel):
    """A spend cap a run was given after it started (``runs resume``/``retry --budget-usd``):
    the new cap in USD for the rest of the run, who set it and when (UTC), and what the run had
    spent before it (not counted against it)."""

    model_config = STRICT
    budget_usd: Annotated[JsonFloat, Field(ge=0)]
    set_by: str
    set_at: datetime
    spent_before_usd: float = 0.0


RunOrigin = Literal["native", "reported", "imported"]
"""Where a run's results came from: ``native`` (executed here), ``reported`` (an external
harness's answers sent to ``report_run``, graded here), ``imported`` (another tool's log)."""


class Run(BaseModel):
    """A run record (SPEC H.4, H.9); ``top_errors`` are the most frequent error messages
    (harness errors, then grader errors, five of each at most), so a run whose cases all failed
    says why without opening a trace; ``budget_caps`` the caps given since it started (the last
    one applies). ``origin`` says where the results came from and ``reported_by`` who reported
    them (a user id)."""

    model_config = STRICT
    id: str
    workspace: str
    dataset: str
    dataset_content_hash: str
    harness: str
    harness_hash: str
    plan: RunPlan
    plan_hash: str
    settings: RunSettings
    status: RunStatus
    counts: RunCounts
    spent_usd: float = 0.0
    scorecard_id: str | None = None
    pass_rate: float | None = None
    pass_interval: Interval | None = None
    error: str | None = None
    top_errors: list[ErrorCount] = Field(default_factory=list)
    budget_caps: list[BudgetCap] = Field(default_factory=list)
    created_by: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    reproducibility: dict[str, JsonValue] = Field(default_factory=dict)
    origin: RunOrigin = "native"
    reported_by: str | None = None


class ReportedResult(BaseModel):
    """One (case, sample) an external harness ran, as reported to ``report_run``.

    ``answer`` is graded like a harness's answer; ``error`` (a message) marks the harness's own
    failure on the case (status ``error``, no grading); ``trace`` is kept as the result's trace
    (its ``answer`` is replaced by ``answer``).
    """

    model_config = STRICT
    case_id: NonEmptyStr
    sample: SampleIndex = 0
    answer: str = ""
    error: str | None = None
    trace: Trace | None = None


class ReportRunRequest(BaseModel):
    """``report_run``'s body: results an external harness produced, to be graded here.

    ``dataset`` is ``id`` or ``id@ref``; ``harness`` is ``id@version`` (SemVer) naming the
    external harness (registered as kind ``external`` on first use). ``graders`` replace each
    case's own graders when given. ``results`` holds each (case, sample) once.
    """

    model_config = STRICT_EAGER
    dataset: IdRef
    harness: PinnedRef
    graders: list[RunGrader] | None = None
    results: list[ReportedResult] = Field(min_length=1)


class DatasetRuns(BaseModel):
    """A dataset's runs in one workspace: how many, and the newest finished run with its pass
    rate (None when no run finished or nothing was graded)."""

    model_config = STRICT
    runs: NonNegativeInt
    last_run_id: str | None = None
    last_pass_rate: float | None = None

"""Alembic environment: runs against the engine handed in by ``store.engine.migrate``."""

from __future__ import annotations

from alembic import context

from benchbook.store.tables import metadata

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # pragma: no cover - only when alembic is run by hand
    from benchbook.settings import get_settings
    from benchbook.store.engine import make_engine

    engine = make_engine(get_settings().resolved_database_url())

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()

"""Persistence: SQLAlchemy Core tables, engine, Alembic migrations and one repo per noun."""

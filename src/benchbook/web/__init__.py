"""The web layer (see docs/architecture.md)."""

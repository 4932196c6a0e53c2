"""The mcp layer (see docs/architecture.md)."""

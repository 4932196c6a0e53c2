"""HTTP transport (FastAPI): turns requests into service calls and errors into envelopes."""

"""Re-exports :mod:`benchbook.validation` (pydantic errors as InvalidInput) for the services."""

from benchbook.validation import issues_of, parse_model

__all__ = ["issues_of", "parse_model"]

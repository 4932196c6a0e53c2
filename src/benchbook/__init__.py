"""Benchbook: versioned evaluation datasets and the evaluations run on them."""

__version__ = "0.1.0"

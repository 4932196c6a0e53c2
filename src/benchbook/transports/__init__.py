"""What every transport shares, below all of them (issue 9 item 7: transports independent).

- ``auth.py``: the ONE place a request (API key, session cookie, local admin) or a local
  process (``BENCHBOOK_API_KEY``, local admin) becomes a ``Principal``.
- ``limits.py``: request bounds applied app-wide (body limits, no NUL in request strings).
- ``nouns.py``: the versioned registered nouns (harnesses, recipes, graders, environment
  recipes) and their operations, which each transport's ``registered`` module serves alike.

``api/``, ``mcp/``, ``web/`` and ``cli/`` import this package and ``services/``, never each other
(import-linter ``independence`` contract); ``benchbook.app`` composes the ASGI app above them.
"""

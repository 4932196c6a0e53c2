"""Runs made by other evaluation tools, read into Benchbook's shapes (issue 31).

- :mod:`~benchbook.eval.interop.foreign` — :class:`ForeignLog` / :class:`ForeignSample`, what a
  reader hands the import service, and the tool-score → :class:`~benchbook.contracts.score.Score`
  rule both tools share.
- :mod:`~benchbook.eval.interop.inspect_logs` — Inspect AI ``.eval`` / ``.json`` logs, read with
  Inspect's own reader (extra ``inspect``), bounded before a byte of sample data is parsed.
- :mod:`~benchbook.eval.interop.lm_eval_samples` — lm-evaluation-harness ``--log_samples``
  output (``samples_<task>_*.jsonl`` + ``results_*.json``), plain JSON read line by line.

Readers never see the dataset: matching samples to cases is the service's
(:mod:`benchbook.services.run_imports`).
"""

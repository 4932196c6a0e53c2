"""Executors: how a run's (case, sample) work items reach the runtime (SPEC H.4).

``local`` runs them with asyncio in this process, bounded by the run's concurrency.
"""

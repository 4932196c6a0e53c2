"""Python harnesses used by the run tests (registered as ``tests.eval.harnesses.agents:…``)."""

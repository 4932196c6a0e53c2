"""A local server speaking the Hugging Face Hub and dataset-viewer protocols, for tests.

Use the ``hf_server`` pytest fixture (``tests/hfserver/fixtures.py``) or run
``python -m tests.hfserver`` to serve the default datasets for manual runs.
"""

from .catalog import GATED_ID, GATED_TOKEN, GSM8K_ID, PAGED_ID
from .model import FakeDataset
from .server import HfServer, LoggedRequest

__all__ = [
    "GATED_ID",
    "GATED_TOKEN",
    "GSM8K_ID",
    "PAGED_ID",
    "FakeDataset",
    "HfServer",
    "LoggedRequest",
]

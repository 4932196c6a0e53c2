"""``python -m tests.hfserver [--shared-data PATH]``: serve the default datasets until Ctrl-C."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .catalog import GATED_TOKEN, defaults, viewerless
from .server import HfServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default_data = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    parser.add_argument("--shared-data", type=Path, default=default_data)
    args = parser.parse_args()
    server = HfServer()
    for dataset in defaults(args.shared_data):
        server.add(dataset)
    csv = '\ufeffid,question,answer\n1,"two\nlines","say ""hi"""\n2,plain,ok\n'.encode()
    server.add(viewerless("example-org/raw-csv", {"data/test.csv": csv}))
    with server:
        print(f"HF_ENDPOINT={server.url}")
        print(f"BENCHBOOK_HF_VIEWER_ENDPOINT={server.viewer_url}")
        print(f"gated token: {GATED_TOKEN}")
        print("datasets:", ", ".join(server.datasets))
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

"""Collects benchmark results and prints them as one table with the targets of issue #2."""

from __future__ import annotations

from typing import Any

TARGET_IMPORT_RATIO = 0.5  # import rows/s ≥ 0.5 × raw baseline rows/s (SQLite)
TARGET_PEAK_MB_1M = 300.0  # peak RSS of a 1M-row import
TARGET_REREGISTER_RATIO = 1.5  # identical re-register ≤ 1.5 × hashing the same cases
TARGET_DIFF_S = 0.5  # diff of two 100k versions, 1% changed
TARGET_PAGE_S = 0.050  # first page of 50 cases


def _lbl(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def _ok(good: bool) -> str:
    return "ok" if good else "MISSED"


class Report:
    """Rows of ``(measurement, backend, size, value, ratio/peak, target verdict)``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.raw: dict[int, float] = {}
        self.hash_s: dict[int, float] = {}
        self.rows: list[tuple[str, str, str, str, str, str]] = []
        self.results: list[dict[str, Any]] = []
        self._tries: list[dict[str, Any]] = []

    def _put(self, what: str, backend: str, n: int, value: str, extra: str, verdict: str) -> None:
        self.rows.append((what, backend, _lbl(n), value, extra, verdict))

    def _keep(self, what: str, backend: str, n: int, r: dict[str, Any]) -> None:
        self.results.append({"what": what, "backend": backend, "size": n, **r})

    def add_raw(self, n: int, r: dict[str, Any]) -> None:
        """The raw orjson + one-table SQLite baseline."""
        self._keep("raw", "sqlite", n, r)
        rate = r["rows"] / r["seconds"]
        self.raw[n] = rate
        self._put("raw baseline insert", "sqlite", n, f"{rate:,.0f} rows/s", _mb(r), "")

    def add_import(self, backend: str, n: int, r: dict[str, Any], note: str = "") -> None:
        """An import of ``n`` rows; ratio vs the raw baseline, peak RSS."""
        self._keep("import", backend, n, {**r, "note": note})
        rate = r["rows"] / r["seconds"]
        ratio = rate / self.raw[n]
        verdicts = []
        if backend == "sqlite" and not note:
            verdicts.append(f"ratio {_ok(ratio >= TARGET_IMPORT_RATIO)}")
        if n >= 1_000_000:
            verdicts.append(f"peak {_ok(r['peak_mb'] <= TARGET_PEAK_MB_1M)}")
        what = "import" + (f" ({note})" if note else "")
        extra = f"{ratio:.2f}x raw, {_mb(r)}"
        self._put(what, backend, n, f"{rate:,.0f} rows/s", extra, ", ".join(verdicts))

    def add_import_try(self, r: dict[str, Any]) -> None:
        """An extra import attempt (into a throw-away database) for best-of-N."""
        self._tries.append(r)

    def best_import(self, last: dict[str, Any]) -> dict[str, Any]:
        """The fastest of the pending attempts and ``last``; the peak is the largest seen."""
        runs = [*self._tries, last]
        self._tries = []
        fastest = min(runs, key=lambda r: float(r["seconds"]))
        return {**fastest, "peak_mb": max(r["peak_mb"] for r in runs), "runs": len(runs)}

    def add_hash(self, n: int, r: dict[str, Any]) -> None:
        """Building and hashing the cases without storing (re-register bar)."""
        self._keep("hash", "-", n, r)
        self.hash_s[n] = r["seconds"]
        self._put("build+hash cases only", "-", n, f"{r['seconds']:.2f} s", _mb(r), "")

    def add_reregister(self, backend: str, n: int, r: dict[str, Any]) -> None:
        """Identical re-register: must be a no-op, time vs hash-only."""
        self._keep("reregister", backend, n, r)
        assert r["created"] is False, "identical re-register created a version"
        ratio = r["seconds"] / self.hash_s[n]
        verdict = _ok(ratio <= TARGET_REREGISTER_RATIO)
        self._put(
            "identical re-register",
            backend,
            n,
            f"{r['seconds']:.2f} s",
            f"{ratio:.2f}x hash",
            verdict,
        )

    def add_diff(self, backend: str, n: int, r: dict[str, Any]) -> None:
        """Diff of two versions with 1% changed."""
        self._keep("diff", backend, n, r)
        counts = f"{r['changed']} changed/{r['added']} added/{r['removed']} removed"
        self._put(
            "diff 1% changed", backend, n, f"{r['seconds']:.3f} s", counts,
            _ok(r["seconds"] <= TARGET_DIFF_S),
        )  # fmt: skip

    def add_deepdiff(self, n: int, r: dict[str, Any]) -> None:
        """DeepDiff over the same two versions, for comparison."""
        self._keep("deepdiff", "sqlite", n, r)
        extra = f"{r['changed_values']} values changed"
        self._put("DeepDiff (generic)", "sqlite", n, f"{r['seconds']:.1f} s", extra, "")

    def add_page(self, backend: str, n: int, r: dict[str, Any]) -> None:
        """First page of 50 cases."""
        self._keep("first_page", backend, n, r)
        value = f"{r['first_s'] * 1000:.1f} ms"
        extra = f"median {r['median_s'] * 1000:.1f} ms"
        self._put("first page (50)", backend, n, value, extra, _ok(r["first_s"] < TARGET_PAGE_S))

    def add_deep_page(self, backend: str, n: int, r: dict[str, Any]) -> None:
        """A page at the end of the version (keyset cursor)."""
        self._keep("deep_page", backend, n, r)
        value = f"{r['first_s'] * 1000:.1f} ms"
        extra = f"median {r['median_s'] * 1000:.1f} ms"
        self._put("page after n-100 (50)", backend, n, value, extra, "")

    def add_export(self, backend: str, n: int, r: dict[str, Any]) -> None:
        """Full JSONL export."""
        self._keep("export", backend, n, r)
        rate = r["rows"] / r["seconds"]
        extra = f"{r['bytes'] / 1e6:.0f} MB in {r['seconds']:.2f} s, {_mb(r)}"
        self._put("JSONL export", backend, n, f"{rate:,.0f} rows/s", extra, "")

    def print(self) -> None:
        """Print the table."""
        head = ("measurement", "backend", "size", "value", "detail", "target")
        widths = [max(len(row[i]) for row in [head, *self.rows]) for i in range(6)]
        print(f"\nimport path measured: {self.path}")
        for row in [head, tuple("-" * w for w in widths), *self.rows]:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _mb(r: dict[str, Any]) -> str:
    return f"peak {r['peak_mb']:.0f} MB"

"""Where the test suite's time goes, per worker: when each test file started and ended on each.

A pytest plugin and its summary. Run the suite with it, then summarise::

    SUITE_TIMELINE=/tmp/timeline PYTHONPATH=bench python -m pytest -q -n 2 --dist loadfile \\
        --no-loadscope-reorder -p suite_timeline
    python bench/suite_timeline.py /tmp/timeline

Each worker appends one line per test start and end to ``FOLDER/<worker>.jsonl``. The summary gives,
per worker, the second its last test ended (from the first test's start on any worker) and the files
that took over 20 s: start, end, seconds. A file that starts late on one worker while the other has
ended is time the order of the files could save (``tests/conftest.py``, ``LONGEST_FIRST``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    _log("start", nodeid)


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    _log("end", nodeid)


def _log(kind: str, nodeid: str) -> None:
    folder = os.environ.get("SUITE_TIMELINE")
    if not folder:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(folder).mkdir(parents=True, exist_ok=True)
    with open(Path(folder) / f"{worker}.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps({"kind": kind, "test": nodeid, "at": time.time()}) + "\n")


def summary(folder: Path, shown_over: float = 20.0) -> str:
    spans: dict[tuple[str, str], list[float]] = {}
    for path in sorted(folder.glob("gw*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            span = spans.setdefault((path.stem, entry["test"].split("::")[0]), [entry["at"], entry["at"]])
            span[0], span[1] = min(span[0], entry["at"]), max(span[1], entry["at"])
    if not spans:
        return f"No worker's timeline in {folder} (run the suite with -n and SUITE_TIMELINE={folder})."
    zero = min(start for start, _ in spans.values())
    lines = []
    for worker in sorted({worker for worker, _ in spans}):
        files = sorted(
            (span[0] - zero, span[1] - zero, name) for (w, name), span in spans.items() if w == worker
        )
        lines.append(f"{worker}: last test ended at {max(end for _, end, _ in files):,.0f} s")
        for start, end, name in files:
            if end - start > shown_over:
                lines.append(f"  {start:7,.0f} {end:7,.0f} {end - start:6,.0f} s  {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/suite_timeline.py FOLDER")
    print(summary(Path(sys.argv[1])))

"""The real server in a subprocess: ``contamcheck serve --port 0``, its address read from its banner."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass
class LiveServer:
    url: str
    banner: str
    process: subprocess.Popen[str]


@contextmanager
def running_server(data_dir: Path, timeout: float = 60.0) -> Iterator[LiveServer]:
    """Start the server on a free loopback port (the OS picks it), stop it afterwards."""
    process = subprocess.Popen(
        [sys.executable, "-m", "contamcheck", "serve", "--port", "0", "--data", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    try:
        banner = lines[0] if lines else ""
        match = re.search(r"http://127\.0\.0\.1:\d+/", banner)
        if match is None:
            process.kill()
            raise AssertionError(f"no address from the server: {banner!r} {process.communicate()[1][-2000:]}")
        yield LiveServer(match.group(0), banner, process)
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

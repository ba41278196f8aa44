"""Helpers for the web UI tests: fill the form, post it, wait for a job."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

from fastapi.testclient import TestClient

SAMPLE = str(resources.files("contamcheck.benchmarks").joinpath("data/sample.jsonl"))
CHEATER = f"fake:memorise={SAMPLE}"
ORIGIN = "http://127.0.0.1:8000"
FINISHED = ("done", "failed", "cancelled", "interrupted")


def stop(client: TestClient) -> None:
    """Stop the server: its lifespan ends, the worker stops after the current batch."""
    if getattr(client, "_stopped", False):
        return
    client.__exit__(None, None, None)
    client._stopped = True  # type: ignore[attr-defined]


def csrf_token(client: TestClient) -> str:
    page = client.get("/")
    assert page.status_code == 200
    match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert match is not None
    return match.group(1)


def form(**fields: Any) -> dict[str, Any]:
    """A filled audit form: the fake cheater on 40 sample questions, two fast tests."""
    values: dict[str, Any] = {
        "model": CHEATER,
        "benchmark": "sample",
        "limit": "40",
        "seed": "0",
        "reference": "auto",
        "tests": ["completion", "min-k"],
    }
    values.update(fields)
    return values


def submit(client: TestClient, files: dict[str, Any] | None = None, **fields: Any):
    token = csrf_token(client)
    return client.post(
        "/jobs", data={"csrf_token": token, **form(**fields)}, files=files, follow_redirects=False
    )


def start_job(client: TestClient, files: dict[str, Any] | None = None, **fields: Any) -> str:
    response = submit(client, files=files, **fields)
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert re.fullmatch(r"/jobs/[0-9]{8}-[0-9]{6}-[0-9a-f]{8}", location)
    return location.rsplit("/", 1)[1]


def status(client: TestClient, job_id: str) -> dict[str, Any]:
    response = client.get(f"/api/jobs/{job_id}")
    assert response.status_code == 200
    return response.json()


def wait_for(
    client: TestClient, job_id: str, wanted: tuple[str, ...] = FINISHED, timeout: float = 90.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        current = status(client, job_id)
        if current["status"] in wanted:
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} still {current['status']} after {timeout} s: {current}")
        time.sleep(0.05)


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def post_form(client: TestClient, path: str, **headers: str):
    return client.post(path, data={"csrf_token": csrf_token(client)}, headers=headers, follow_redirects=False)

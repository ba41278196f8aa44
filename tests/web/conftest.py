"""Fixtures for the web UI: an app over a fresh data folder, a client that talks like a browser."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from webhelpers import ORIGIN, stop

from contamcheck.web import create_app


@pytest.fixture(autouse=True)
def _own_evidence_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test computes its own evidence, so a slow fake model stays slow (and cancellable)."""
    monkeypatch.setenv("CONTAMCHECK_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "web"


@pytest.fixture
def open_client(data_dir: Path) -> Iterator[Callable[..., TestClient]]:
    """Start the app (with its worker) over ``data_dir``; each call is a server start."""
    clients: list[TestClient] = []

    def start(**options: Any) -> TestClient:
        client = TestClient(create_app(data_dir, **options), base_url=ORIGIN)
        client.__enter__()
        clients.append(client)
        return client

    yield start
    for client in reversed(clients):
        stop(client)


@pytest.fixture
def client(open_client: Callable[..., TestClient]) -> TestClient:
    return open_client()

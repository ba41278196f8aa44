"""``contamcheck serve``: the same audit in a browser, on this machine only.

:func:`create_app` builds the FastAPI app over a data folder of stored jobs; :func:`serve` runs it on
a loopback address with uvicorn. FastAPI and uvicorn (the ``web`` extra) are imported only when one
of them is called, so importing contamcheck stays light. docs/WEB_UI.md describes the pages, the
data folder and the security model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .security import loopback_bind_address

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["create_app", "loopback_bind_address", "serve"]


def create_app(data_dir: Path, **options: Any) -> FastAPI:
    from .app import create_app as create

    return create(data_dir, **options)


def serve(host: str, port: int, data: str | None, max_upload_mb: float) -> int:
    from .server import serve as run

    return run(host, port, data, max_upload_mb)

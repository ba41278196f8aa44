"""``contamcheck serve``: bind a loopback socket, print the address, run uvicorn until Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

import click

from ..cli.app import Terminated, terminate
from ..errors import ContamcheckError, InputError
from ..memory import return_freed_memory
from .security import loopback_bind_address


def default_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("contamcheck")) / "web"


def serve(host: str, port: int, data: str | None, max_upload_mb: float) -> int:
    """Serve the web UI on ``host:port`` (loopback only; port 0 picks a free one) until stopped."""
    address = loopback_bind_address(host)  # refuses anything else before any import below
    try:
        import uvicorn

        from .app import create_app
    except ImportError as exc:
        raise ContamcheckError(
            f"contamcheck serve needs the web extra ({exc.name} is missing): pip install 'contamcheck[web]'"
        ) from None
    folder = Path(data).expanduser() if data else default_data_dir()
    listener = _listen(address, port)  # a port in use fails before the folder is made
    try:
        _check_data_folder(folder)
    except BaseException:
        listener.close()
        raise

    try:
        # another server on the folder (its lock) is said before this one listens
        app = create_app(folder, max_upload_bytes=int(max_upload_mb * 2**20), bind_host=address)
    except BaseException:
        listener.close()
        raise
    return_freed_memory()  # audits run in this long-lived process, one after another (memory.py)
    bound_port = listener.getsockname()[1]
    shown = f"[{address}]" if ":" in address else address
    click.echo(f"contamcheck web UI: http://{shown}:{bound_port}/  (data: {folder}; Ctrl-C stops it)")
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, proxy_headers=False, server_header=False, lifespan="on"
    )
    # uvicorn's shutdown stops the audit runner; then it raises the signal that stopped it again:
    # Ctrl-C's as KeyboardInterrupt, SIGTERM's (`kill`, a service manager) to the handler set here
    previous = signal.signal(signal.SIGTERM, terminate)
    code = 0
    try:
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.Server(config).run(sockets=[listener])
    except Terminated as stop:
        code = 128 + stop.signum
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    if app.state.runner.running():
        # A thread still inside torch at interpreter exit aborts the process (std::terminate);
        # what the audit finished is in the cache already, and the job shows as interrupted.
        click.echo("The running audit did not stop in time; exiting without it (its work so far is kept).")
        sys.stdout.flush()
        os._exit(code)
    click.echo("contamcheck web UI stopped." + (" (SIGTERM)" if code else ""))
    return code


def _check_data_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--data {str(folder)!r} can't be created: {exc.strerror}.") from None
    try:  # a folder that exists but can't be written (a read-only file system): said now, not as a bug
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".check-"):
            pass
    except OSError as exc:
        raise InputError(
            f"--data {str(folder)!r} can't be written ({exc.strerror}); pass --data with a folder you "
            "can write."
        ) from None


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((address, port))
    except OSError as exc:
        listener.close()
        raise InputError(
            f"--port {port}: can't listen on {address} ({exc.strerror}). Pick another port, e.g. --port 0 "
            "for any free one."
        ) from None
    listener.listen(128)  # connections wait in the backlog until uvicorn accepts them
    return listener

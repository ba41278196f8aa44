"""Reaching the Hugging Face Hub, or saying clearly that we can't.

Without a network the Hub's client retries for half a minute before it gives up. We probe the
endpoint once (a TCP connect with a short timeout) so an offline user gets a clear message at once,
naming the local alternative, while online users go through the ordinary loading code.
"""

from __future__ import annotations

import functools
import os
import socket
from urllib.parse import urlparse

PROBE_TIMEOUT_S = 3.0


def offline_mode() -> bool:
    """True when the user asked the Hugging Face libraries to use only their local cache."""
    return any(
        os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co")


@functools.lru_cache(maxsize=1)
def hub_reachable() -> bool:
    """Whether a TCP connection to the Hub endpoint opens within a few seconds."""
    url = urlparse(endpoint())
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def unreachable_message(what: str, local_hint: str) -> str:
    if offline_mode():
        return (
            f"Hugging Face offline mode is on (HF_HUB_OFFLINE) and {what} is not in the local Hugging "
            f"Face cache. {local_hint}"
        )
    return (
        f"Can't reach the Hugging Face Hub ({endpoint()}) to load {what}. "
        f"{local_hint} If it is already in your Hugging Face cache, set HF_HUB_OFFLINE=1."
    )

"""Returning freed memory to the system during an audit (on by default in the CLI; ``--no-low-memory``).

An audit allocates and frees tensors of ever-changing sizes (batches sorted by length, logits of
each batch's width). glibc keeps what is freed in its heap for reuse and raises its mmap threshold
as large blocks come and go, so resident memory can climb stage after stage. Serving every block of
at least 4 MiB from ``mmap`` instead returns it to the system the moment it is freed. On an audit
of 50 HumanEval prompts with SmolLM2-135M that took the peak from about 1.5 to 1.3-1.4 GiB for 1-2%
more time (docs/PERFORMANCE.md; most of the earlier 2.4 GiB went when scoring's slices shrank to
2 MiB, backends/hf.py). The CLI and the web server turn it on for their own process; the Python
API leaves the allocator of its host process alone (call :func:`return_freed_memory` to opt in).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers in glibc's malloc.h
M_MMAP_THRESHOLD = -3
LOW_MEMORY_THRESHOLD = 4 * 2**20
# Setting the mmap threshold also freezes the trim threshold at 128 KiB: the heap would then give
# back, and fault in again, the few MiB that scoring frees and takes at every slice (up to 3.4x the
# page faults and 20% more time, docs/PERFORMANCE.md). Free space at the heap's top is kept up to
# this much instead.
TRIM_THRESHOLD = 64 * 2**20
_returning = False


def return_freed_memory(threshold: int = LOW_MEMORY_THRESHOLD) -> bool:
    """Serve blocks of ``threshold`` bytes or more from mmap; False where glibc isn't there."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    global _returning
    _returning = _returning or bool(
        mallopt(M_MMAP_THRESHOLD, threshold) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
    return _returning


def returning_freed_memory() -> bool:
    """Whether :func:`return_freed_memory` took effect in this process (for the report's run section)."""
    return _returning

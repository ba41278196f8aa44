"""contamcheck: has this language model memorised the benchmark?

The library call is ``audit(AuditConfig(model=..., benchmark=...)) -> Report``. Names are imported
lazily so that ``import contamcheck`` and ``contamcheck --help`` stay instant (no torch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = [
    "AuditConfig",
    "ContamcheckError",
    "InputError",
    "ModelLoadError",
    "Report",
    "ReportInvalid",
    "ReportUnreadable",
    "RuntimeFailure",
    "__version__",
    "audit",
]

if TYPE_CHECKING:
    from .config import AuditConfig
    from .errors import (
        ContamcheckError,
        InputError,
        ModelLoadError,
        ReportInvalid,
        ReportUnreadable,
        RuntimeFailure,
    )
    from .pipeline import audit
    from .report.model import Report

_LAZY = {
    "audit": ("contamcheck.pipeline", "audit"),
    "AuditConfig": ("contamcheck.config", "AuditConfig"),
    "ContamcheckError": ("contamcheck.errors", "ContamcheckError"),
    "InputError": ("contamcheck.errors", "InputError"),
    "ModelLoadError": ("contamcheck.errors", "ModelLoadError"),
    "ReportInvalid": ("contamcheck.errors", "ReportInvalid"),
    "ReportUnreadable": ("contamcheck.errors", "ReportUnreadable"),
    "RuntimeFailure": ("contamcheck.errors", "RuntimeFailure"),
    "Report": ("contamcheck.report.model", "Report"),
}


if not TYPE_CHECKING:  # so a type checker sees only the names above, and a misspelt one is an error

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            import importlib

            module, attribute = _LAZY[name]
            return getattr(importlib.import_module(module), attribute)
        raise AttributeError(f"module 'contamcheck' has no attribute {name!r}")


def __dir__() -> list[str]:
    # what the package offers, not the names this module imports for itself (Any, annotations, ...)
    return sorted(set(__all__) | {name for name in globals() if name.startswith("__")})

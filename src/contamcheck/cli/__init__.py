"""The command-line interface (a thin layer over :func:`contamcheck.audit`)."""

from .app import cli, main

__all__ = ["cli", "main"]

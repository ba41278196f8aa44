"""The contamination tests, one module each, registered by name.

A new test is one new module plus one line here.
"""

from __future__ import annotations

from ..registry import Registry
from .base import MethodSettings, PerTextTest, Test, TestKind, analysis_seed

__all__ = ["TESTS", "MethodSettings", "PerTextTest", "Test", "TestKind", "analysis_seed", "create_test"]

TESTS: Registry[type[Test]] = Registry("test", hint="List them with `contamcheck benchmarks`.")
TESTS.register("completion", "contamcheck.methods.completion:Completion")
TESTS.register("min-k", "contamcheck.methods.min_k:MinK")
TESTS.register("min-k++", "contamcheck.methods.min_k_plus_plus:MinKPlusPlus")
TESTS.register("zlib", "contamcheck.methods.zlib_ratio:ZlibRatio")
TESTS.register("guided", "contamcheck.methods.guided:Guided")
TESTS.register("canonical-order", "contamcheck.methods.canonical_order:CanonicalOrder")


def create_test(name: str, settings: MethodSettings) -> Test:
    return TESTS.get(name)(settings)

"""What every bench script starts from: SmolLM2 loaded as an audit loads it, and the default audit's plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MODEL = "pkg:smollm2-135m-instruct"


def model_and_plan(
    benchmark: str, limit: int, threads: int, cache_dir: Path, model_spec: str = MODEL
) -> tuple[Any, Any]:
    """The model (``HFModel``, torch limited to ``threads``; SmolLM2 unless told) and the plan of
    the default audit without a reference; ``cache_dir`` holds the dequantised model copy."""
    from contamcheck.backends import ModelOptions, describe_model, load_model
    from contamcheck.config import AuditConfig
    from contamcheck.evidence import MemoryStore
    from contamcheck.pipeline import plan_audit

    options = ModelOptions(device="cpu", threads=threads, cache_dir=cache_dir)
    model = load_model(model_spec, options, describe_model(model_spec, options, MemoryStore().file_digest))
    config = AuditConfig(
        model=model_spec, benchmark=benchmark, limit=limit, reference="none", threads=threads
    )
    return model, plan_audit(config)


def requests_of(plan: Any, kind: str) -> list[Any]:
    """The plan's distinct requests of one kind ("score" or "generate")."""
    return [r for r in {r.key: r for r in plan.requests}.values() if r.kind == kind]

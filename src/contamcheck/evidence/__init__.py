"""Evidence: requests that tests declare, and the engine that computes each once."""

from .engine import EngineStats, Evidence, EvidenceEngine, plan_batches
from .requests import GenerateRequest, Request, ScoreRequest, text_hash
from .store import EvidenceStore, MemoryStore

__all__ = [
    "EngineStats",
    "Evidence",
    "EvidenceEngine",
    "EvidenceStore",
    "GenerateRequest",
    "MemoryStore",
    "Request",
    "ScoreRequest",
    "plan_batches",
    "text_hash",
]

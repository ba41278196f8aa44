"""The README's shell lines, and its audit lines run on local equivalents: Hub-only models and
benchmarks replaced by a tiny trained model and the bundled sample, a served model by vLLM serving
SmolLM2. ``test_readme.py`` runs the lines; ``backends/test_server.py`` runs those of a served model,
beside the other tests of the server it starts (``make test`` gives each test file to one worker).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FAST = ["-n", "10", "--permutations", "500", "--quiet", "--threads", "2"]


def code_lines(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def audit_lines() -> list[str]:
    return [line.split("  #")[0].strip() for line in code_lines(README) if line.startswith("contamcheck ")]


def served(line: str) -> bool:
    """A line that audits a model behind a server (``openai:``)."""
    return any(word.startswith("openai:") for word in shlex.split(line))


def local(word: str, tiny_setup, server: str | None = None) -> str:
    """The README's word, or its local equivalent; ``server`` is vLLM's API root, serving SmolLM2 as
    "smollm2"."""
    if word.startswith("openai:"):
        assert server is not None, "a served model's line runs beside the server's tests"
        return f"openai:{server}" + ("#smollm2" if word.partition("#")[2] else "")
    models = {
        "Qwen/Qwen2.5-0.5B", "my-model/", "big-model/", "model.gguf", "pkg:smollm2-135m-instruct",
        "sshleifer/tiny-gpt2",
    }  # fmt: skip
    if word in models:
        return str(tiny_setup.cheater)
    if word in {"EleutherAI/pythia-6.9b", "pkg:gemma-3-270m"}:
        return str(tiny_setup.clean)
    if word in {"gsm8k", "questions.jsonl", "mbpp", "mmlu.jsonl"} or word.startswith("hf:"):
        return str(tiny_setup.benchmark)
    if word == "fresh.jsonl":
        return str(tiny_setup.control)
    return word

"""Real model servers for tests, started once per test session: vLLM's OpenAI-compatible server
(CPU build) on SmolLM2-135M-Instruct, behind an API key that the session's CONTAMCHECK_API_KEY
holds while it runs, and llama-cpp-python's server on the same model's GGUF.

They live in their own environment (``make server-venv``: ``.venv-servers``, or
``CONTAMCHECK_SERVER_PYTHON``); without it their tests are skipped, except under CI, where they
must run. ``conftest.py`` makes the two session fixtures.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from contamcheck.backends import ModelOptions

ROOT = Path(__file__).resolve().parents[1]
SERVER_PYTHON = Path(os.environ.get("CONTAMCHECK_SERVER_PYTHON", ROOT / ".venv-servers" / "bin" / "python"))
MODEL = "pkg:smollm2-135m-instruct"
STARTUP_S = 300
API_KEY = "contamcheck-test-key"  # vLLM is started with it: every request of the tests carries it


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def require_servers() -> None:
    if not SERVER_PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the server tests: {SERVER_PYTHON} is missing (make server-venv)")
        pytest.skip(f"the model servers are not installed at {SERVER_PYTHON} (make server-venv)")


def serve(command: list[str], port: int, log_path: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start a server, yield its API root once it answers, stop it afterwards."""
    with log_path.open("w") as log:
        # its own process group: stopping it stops the workers it starts (vLLM's engine core)
        server = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        url = f"http://127.0.0.1:{port}/v1"
        try:
            wait_until_serving(server, url, str(log_path))
            yield url
        finally:
            stop(server)


def wait_until_serving(server: subprocess.Popen, url: str, log: str) -> None:
    deadline = time.monotonic() + STARTUP_S
    while True:
        if server.poll() is not None:
            pytest.fail(f"the server exited with {server.returncode}; see {log}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                return
        except urllib.error.HTTPError:  # it answers (401 without the key): it is serving
            return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"the server did not start in {STARTUP_S} s; see {log}")
            time.sleep(1)


def stop(server: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()


@functools.cache
def _smollm2_identity() -> str | None:
    from contamcheck.backends.hf import describe
    from contamcheck.evidence import MemoryStore

    return describe(MODEL, ModelOptions(device="cpu"), MemoryStore().file_digest).identity


def smollm2_copy(cache: Path) -> Path:
    """Where the cache folder ``cache`` keeps SmolLM2's GGUF dequantised (what an audit loads)."""
    from contamcheck.backends.hf import converted_copy, resolve_source
    from contamcheck.evidence.cache import CONVERTED_DIR

    copy = converted_copy(resolve_source(MODEL), _smollm2_identity(), cache / CONVERTED_DIR)
    assert copy is not None, "a packaged model is a GGUF"
    return copy


def dequantised_once(cache: Path) -> Path:
    """``cache``, a cache folder, holding SmolLM2's dequantised copy: made unless it is there."""
    if not (smollm2_copy(cache) / "config.json").is_file():
        from contamcheck.backends import load_model

        model = load_model(MODEL, ModelOptions(device="cpu", cache_dir=cache))  # dequantises, keeps it
        assert (smollm2_copy(cache) / "config.json").is_file(), f"not kept: {getattr(model, 'notes', None)}"
    return cache


def sharing_smollm2(cache: Path, shared: Path) -> Path:
    """``cache`` (a cache folder, made if need be) with the dequantised SmolLM2 of the cache folder
    ``shared`` linked into it: an audit there loads it in seconds instead of dequantising it again
    (40-50 s)."""
    copy = smollm2_copy(shared)
    linked = smollm2_copy(cache)
    linked.parent.mkdir(parents=True, exist_ok=True)
    linked.symlink_to(copy, target_is_directory=True)
    return cache


def served_copy(shared: Path, into: Path) -> Path:
    """SmolLM2 as a folder a server loads: the cache folder ``shared``'s dequantised copy in a folder
    of its own under ``into`` (its weights linked, not copied; the rest copied, to be changed)."""

    def link_weights(source: str, target: str) -> None:
        if source.endswith(".safetensors"):
            with contextlib.suppress(OSError):  # a file system without hard links: copied
                return os.link(source, target)
        shutil.copy2(source, target)

    folder = into / "smollm2"
    shutil.copytree(smollm2_copy(shared), folder, copy_function=link_weights)
    return folder


def without_chat_template(folder: Path) -> Path:
    """The folder as a base model's: no chat template anywhere a tokenizer looks for one."""
    (folder / "chat_template.jinja").unlink(missing_ok=True)
    (folder / "chat_template.json").unlink(missing_ok=True)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config.pop("chat_template", None)
    config_path.write_text(json.dumps(config))
    return folder


def appending_end_of_text(folder: Path) -> Path:
    """The folder with a tokenizer that appends its end-of-text to every text, as one saved with
    ``add_eos_token`` does (some fine-tunes' are)."""
    path = folder / "tokenizer.json"
    tokenizer = json.loads(path.read_text())
    end = json.loads((folder / "tokenizer_config.json").read_text())["eos_token"]
    [end_id] = [token["id"] for token in tokenizer["added_tokens"] if token["content"] == end]
    text, ending = {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": end, "type_id": 0}}
    tokenizer["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [text, ending],
        "pair": [text, {"Sequence": {"id": "B", "type_id": 1}}, ending],
        "special_tokens": {end: {"id": end, "ids": [end_id], "tokens": [end]}},
    }
    path.write_text(json.dumps(tokenizer))
    return folder


def vllm_server(
    tmp_path_factory: pytest.TempPathFactory,
    smollm2_cache: Path,
    base_model: bool = False,
    chat_template: str | None = None,
) -> Iterator[str]:
    """vLLM's OpenAI-compatible server on SmolLM2, from a copy of the folder contamcheck converts its
    GGUF to (the one in the cache folder ``smollm2_cache``: ``served_copy``); ``base_model`` serves
    it without its chat template, as a base model is, and with a tokenizer that appends its
    end-of-text (``appending_end_of_text``), as a fine-tune's may be: one server for both;
    ``chat_template`` serves it with that template instead of its own."""
    require_servers()
    folder = served_copy(smollm2_cache, tmp_path_factory.mktemp("served"))
    if base_model:
        appending_end_of_text(without_chat_template(folder))
    port = free_port()
    command = [str(SERVER_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder)]
    if chat_template is not None:
        (folder / "template.jinja").write_text(chat_template, encoding="utf-8")
        command += ["--chat-template", str(folder / "template.jinja")]
    command += ["--served-model-name", "smollm2", "--dtype", "float32", "--max-model-len", "2048"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--api-key", API_KEY]
    # eager PyTorch: its compile warm-up took 113-116 s of a start's 147-152 s on 2 cores (the log), and
    # the tests compare numbers, which eager gives as well (docs/PERFORMANCE.md: answering in 49 s)
    command += ["--enforce-eager"]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    }
    before = os.environ.get("CONTAMCHECK_API_KEY")
    os.environ["CONTAMCHECK_API_KEY"] = API_KEY
    try:
        yield from serve(command, port, tmp_path_factory.mktemp("vllm") / "server.log", env)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
        if before is None:
            os.environ.pop("CONTAMCHECK_API_KEY", None)
        else:
            os.environ["CONTAMCHECK_API_KEY"] = before


def llama_cpp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on SmolLM2's GGUF, as its README starts it."""
    require_servers()
    from contamcheck.backends.packaged import resolve_packaged

    port = free_port()
    command = [str(SERVER_PYTHON), "-m", "llama_cpp.server", "--model", str(resolve_packaged(MODEL))]
    command += ["--n_ctx", "2048", "--host", "127.0.0.1", "--port", str(port)]
    yield from serve(command, port, tmp_path_factory.mktemp("llama-cpp") / "server.log")

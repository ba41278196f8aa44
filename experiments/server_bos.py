"""A tokenizer that adds a beginning-of-sequence token, behind vLLM: cut texts and prompts as in-process?

The server backend cuts a text longer than the window to its first tokens, and a prompt that
leaves too little room to its last ones, with token ids from vLLM's ``/tokenize``; the tests
against vLLM run on SmolLM2, whose tokenizer adds no BOS. This checks Gemma-3-270M, whose does
(``<bos>``, id 2), served by vLLM with a 256-token window, against the same model in-process:
HumanEval prompts longer than the window scored (the served log-probs against the in-process ones
of the same positions), and generations of 40 new tokens from prompts too long for the window and
of 60 from prompts that fit but crowd it (in-process given the same window).

    # convert once: load_model("pkg:gemma-3-270m", ModelOptions(cache_dir=Path("/tmp/gconv"))), then
    vllm serve /tmp/gconv/converted/v2-... --served-model-name gemma --dtype float32 \\
        --max-model-len 256 --port 8012   # vLLM's CPU build, as tests/servers.py starts it
    python experiments/server_bos.py http://127.0.0.1:8012/v1 --cache /tmp/gconv

Measured 2026-12-05 (vLLM 0.32, CPU): the eight prompts over 256 tokens scored on 254 positions
(the BOS unscored, one position left for the echo), their log-probs within 3.1e-05 nats of
in-process; short ones whole; all 10 generations (5 prompts, raw and chat, too long and crowded)
word for word the in-process ones.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from contamcheck.backends import ModelOptions, load_model
from contamcheck.benchmarks import load_benchmark

MODEL = "pkg:gemma-3-270m"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("server", help="the API root of vLLM serving the model (http://HOST:PORT/v1)")
    parser.add_argument("--cache", type=Path, help="where the converted copy is kept")
    args = parser.parse_args(argv)

    served = load_model(f"openai:{args.server}")
    local = load_model(MODEL, ModelOptions(device="cpu", cache_dir=args.cache))
    window = served.context_length
    assert window, "the server's model list gives no window"
    prompts = [item.text for item in load_benchmark("humaneval").items]
    length = {text: len(local.tokenizer(text)["input_ids"]) for text in prompts}
    long = [text for text in prompts if length[text] > window]
    crowded = [text for text in prompts if window - 30 < length[text] < window - 5][:3]
    print(f"window {window}; bos {local.tokenizer.bos_token!r}")
    for text in long + prompts[:2]:
        remote, own = served.score([text])[0], local.score([text])[0]
        n = len(remote.logprobs)
        gap = float(np.abs(remote.logprobs - own.logprobs[:n]).max())
        print(
            f"score: {length[text]} tokens, served {n} (truncated {remote.truncated}), max |diff| {gap:.1e}"
        )
    local.context_length = window  # in-process cuts a prompt to the same window
    for text, budget in [(t, 40) for t in long[:2]] + [(t, 60) for t in crowded]:
        for chat in (False, True):
            same = served.generate([text], [budget], chat)[0] == local.generate([text], [budget], chat)[0]
            kind = "chat" if chat else "raw"
            print(f"generate ({kind}, {length[text]} tokens + {budget}): {'same' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()

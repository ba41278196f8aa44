"""The ``openai`` backend against real servers: vLLM's OpenAI-compatible server (CPU build) serving the
real SmolLM2-135M-Instruct, llama-cpp-python's server (whose echoed log-probs are read one position
late, and must be refused), Python's own http.server as a server that is not an API, a gateway in
front of vLLM that answers "busy" (429, 5xx) as a rate limiter or proxy does, vLLM serving the model
without its chat template (as a base model), and a port with nothing on it. The model servers are
session fixtures (``tests/servers.py``), but for the one without a template, this module's.
"""

from __future__ import annotations

import functools
import http.server
import itertools
import json
import shlex
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import readme_lines
import servers
from servers import API_KEY, MODEL, free_port

from contamcheck.backends import ModelOptions, backend_name, load_model
from contamcheck.backends.hf import HFModel
from contamcheck.backends.server import PROBE, Endpoint, ServerModel, parse_spec, reads_late
from contamcheck.cli import main
from contamcheck.errors import InputError, ModelLoadError, RuntimeFailure

# -- without a model server ---------------------------------------------------------------------


def test_the_spec_names_the_api_root_and_optionally_the_model():
    assert backend_name("openai:http://127.0.0.1:8000/v1") == "openai"
    assert parse_spec("openai:http://127.0.0.1:8000") == Endpoint("http://127.0.0.1:8000/v1", None)
    assert parse_spec("openai:https://host/api/v1/#my-model") == Endpoint("https://host/api/v1", "my-model")
    for bad in ("openai:", "openai:127.0.0.1:8000", "openai:ftp://host/v1", "openai:http://host/v1?x=1"):
        with pytest.raises(InputError, match=r"openai:URL|query"):
            parse_spec(bad)
    assert parse_spec("openai:http://[::1]:8000/v1") == Endpoint("http://[::1]:8000/v1", None)
    refused = {
        "openai:http://[::1": r"Can't read the server address",  # an unclosed bracket
        "openai:http://127.0.0.1:99999/v1": r"no valid port",
        "openai:http://127.0.0.1:x/v1": r"no valid port",
        "openai:http://127.0.0.1:8000/v1#": r"name after '#' .* is empty",
        "openai:http://127.0.0.1:0/v1": r"no valid port",
        "openai:http://ann:secret@127.0.0.1:8000/v1": r"'openai:http://…@127.0.0.1:8000/v1' carries a user "
        r"name or password.*CONTAMCHECK_API_KEY",
        # refused as such whatever else is wrong, and a password holding "#" is not split at it
        "openai:http://ann:secret@127.0.0.1:99999/v1": r"carries a user name or password",
        "openai:ftp://ann:secret@host/v1": r"carries a user name or password",
        "openai:http://ann:secret@[::1/v1": r"carries a user name or password",
        "openai:http://ann:se#cret@127.0.0.1:8000/v1": r"carries a user name or password",
        "openai:http://ann:se/cret@host/v1": r"'openai:http://…@host/v1' has no valid port",
    }
    for spec, message in refused.items():
        with pytest.raises(InputError, match=message) as caught:
            parse_spec(spec)
        assert "secret" not in str(caught.value) and "cret" not in str(caught.value)  # nor any of it


def test_nothing_listening_is_a_clear_load_error(capsys):
    url = f"openai:http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelLoadError, match=r"Can't reach the server at .*Start it"):
        load_model(url)
    assert main([url, "sample", "-n", "20"]) == 3
    err = capsys.readouterr().err
    assert "Can't reach the server" in err and "Traceback" not in err
    assert f"connecting to {url}: failed" in err  # the step that failed has a line of its own


def test_a_server_that_never_answers_stops_the_audit(monkeypatch, capsys):
    """It takes the connection and says nothing, as a wedged server does: no endless wait."""
    monkeypatch.setattr("contamcheck.backends.server.LIST_TIMEOUT_S", 1.0)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"openai:http://127.0.0.1:{listener.getsockname()[1]}/v1"
        assert main([url, "sample", "-n", "20", "--quick"]) == 3
    err = capsys.readouterr().err
    assert "got no answer in 1 s" in err and "stuck" in err and "Traceback" not in err
    assert "curl the model list" in err and "computed is kept" not in err  # nothing was computed


@pytest.fixture
def plain_http_server(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server that is not an OpenAI API: it serves a folder with one HTML page."""
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "models").write_text("<html>not an API</html>", encoding="utf-8")
    (tmp_path / "json").mkdir()  # JSON, but not an OpenAI model list (another API's root)
    (tmp_path / "json" / "models").write_text('{"models": ["m"]}', encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_server_that_is_not_an_api_is_named_with_the_fix(plain_http_server, capsys):
    """A wrong address is bad input (exit 2); a server that can't be reached may only be down (3)."""
    with pytest.raises(InputError, match=r"HTTP 404.*API root, usually ending in /v1"):
        load_model(f"openai:{plain_http_server}/v1")
    assert main([f"openai:{plain_http_server}/v1", "sample"]) == 2
    assert main([f"openai:{plain_http_server}/page", "sample"]) == 2  # an HTML page: not JSON
    assert main([f"openai:{plain_http_server}/json", "sample"]) == 2
    err = capsys.readouterr().err
    assert "/v1/models was not found (HTTP 404" in err and "did not answer JSON" in err
    assert 'answered in an unexpected shape ({"models": ["m"]}' in err
    assert "Traceback" not in err


# The echo of the fingerprint's probe text, and of the probe followed by the server's own greedy
# token, recorded from vLLM's server and llama-cpp-python's on SmolLM2 ("recorded" in the file).
ECHOES = json.loads((Path(__file__).parent / "data" / "server-echoes.json").read_text(encoding="utf-8"))


def test_log_probs_read_one_position_late_are_refused():
    vllm, late = ECHOES["vllm"], ECHOES["llama_cpp"]
    assert not reads_late(vllm["probe"], vllm["continued"], vllm["greedy"])  # read where they stand
    assert reads_late(late["probe"], late["continued"], late["greedy"])
    assert reads_late(late["probe"])  # the probe's counts alone tell
    short = {key: values[:3] for key, values in late["probe"].items()}
    assert not reads_late(short)  # too short to count: nothing refused ...
    assert reads_late(short, late["continued"], late["greedy"])  # ... but the greedy token tells
    assert not reads_late(short, late["continued"], " not its last token")  # another tokenization


class _Recorded(http.server.BaseHTTPRequestHandler):
    """Answers every request with a server's recorded echo of the probe (``echo``: vLLM's, or
    llama-cpp-python's, read a position late), vLLM's with one log-prob replaced by ``bad`` (in the
    echo of the probe itself where ``bad_in_probe``, else in the echo of any other text);
    ``models`` is its model list."""

    echo: ClassVar[str] = "vllm"
    bad: ClassVar[object] = -1.0
    bad_in_probe: ClassVar[bool] = True
    models: ClassVar[list[dict[str, object]]] = [{"id": "m"}]

    def log_message(self, *_: object) -> None:
        pass

    def _reply(self, body: object) -> None:
        data = json.dumps(body).encode()  # NaN and Infinity as Python writes them, as some servers do
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._reply({"data": self.models})

    def do_POST(self) -> None:
        self._reply(
            self._echo(json.loads(self.rfile.read(int(self.headers["Content-Length"]))).get("prompt"))
        )

    def _echo(self, prompt: object) -> dict[str, object]:
        probe = {key: list(values) for key, values in ECHOES[self.echo]["probe"].items()}
        is_probe = isinstance(prompt, str) and prompt.startswith(PROBE)
        if self.echo == "vllm" and is_probe == self.bad_in_probe:
            probe["token_logprobs"][5] = self.bad
        text = "".join(probe["tokens"])
        count = len(probe["tokens"])
        return {"choices": [{"text": text, "logprobs": probe}], "usage": {"prompt_tokens": count}}


@pytest.fixture
def recorded() -> Iterator[type[_Recorded]]:
    class Handler(_Recorded):
        pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Handler.url = f"openai:http://127.0.0.1:{server.server_address[1]}/v1"  # type: ignore[attr-defined]
    try:
        yield Handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("bad", [float("nan"), float("-inf"), 3.0, -1e300, "abc", {"x": 1}, True])
def test_log_probs_that_are_no_log_probabilities_are_refused(recorded, bad, capsys):
    recorded.bad = bad
    refused = r"as a token's log-probability, which must be a finite number"
    with pytest.raises(RuntimeFailure, match=refused):
        load_model(recorded.url)  # in the probe, when the model is identified
    recorded.bad_in_probe = False
    served = load_model(recorded.url)
    with pytest.raises(RuntimeFailure, match=refused):
        served.score(["Janet's ducks lay 16 eggs per day."])  # in a text, when it is scored
    assert main([recorded.url, "sample", "-n", "20", "--no-cache"]) == 3
    err = capsys.readouterr().err
    assert "log-probability" in err and "Internal error" not in err and "Traceback" not in err


def test_a_served_model_list_read_loosely_and_an_empty_one_named(recorded):
    recorded.models = [{"id": 7, "max_model_len": "long"}]  # a number as its name
    served = load_model(recorded.url)
    assert served.name == "7" and served.context_length is None
    recorded.models = [{"id": "m", "max_model_len": True}]  # a boolean is no window of one token
    assert load_model(recorded.url).context_length is None
    recorded.models = []
    for url in (recorded.url, recorded.url + "#m"):
        with pytest.raises(ModelLoadError, match=r"lists no models .*is a model loaded"):
            load_model(url)


class _Strict(_Recorded):
    """vLLM's recorded echo for the probe, a server that refuses the chat template's variables
    (HTTP 422, as OpenAI's API refuses a field it does not know) and has no /tokenize; every
    request's path and body go into ``sent``."""

    models: ClassVar[list[dict[str, object]]] = [{"id": "m", "max_model_len": 64}]
    sent: ClassVar[list[tuple[str, dict[str, object]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.sent.append((self.path, body))
        if self.path == "/tokenize":
            self.send_error(404)
        elif "chat_template_kwargs" in body:
            self._refuse(422, "Unrecognized request argument: chat_template_kwargs")
        elif self.path.endswith("/chat/completions"):
            self._reply({"choices": [{"message": {"content": "Hi."}}], "usage": {"prompt_tokens": 9}})
        elif body.get("echo"):
            self._reply(self._echo(body.get("prompt")))
        else:
            self._reply({"choices": [{"text": " and on"}], "usage": {"prompt_tokens": 3}})

    def _refuse(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"message": message}})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())


def _serving(base: type[_Strict]) -> Iterator[type[_Strict]]:
    class Handler(base):  # type: ignore[valid-type,misc]
        sent: ClassVar[list[tuple[str, dict[str, object]]]] = []  # this test's own

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Handler.url = f"openai:http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield Handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def strict() -> Iterator[type[_Strict]]:
    yield from _serving(_Strict)


def test_a_server_that_refuses_the_template_variables_keeps_the_penalties(strict):
    """Each group of fields that only some servers take is dropped on its own: the chat template's
    variables refused on a chat request, the completions still ask for no repetition penalty (one
    switch for both changed the completion test's texts partway through an audit)."""
    served = load_model(strict.url)
    assert served.generate(["Say hi."], [6], chat=True) == ["Hi."]
    assert served.generate(["Say hi."], [6], chat=True) == ["Hi."]
    assert served.generate(["Go on"], [6]) == [" and on"]
    chats = [body for path, body in strict.sent if path.endswith("/chat/completions")]
    assert [("chat_template_kwargs" in body, body["repetition_penalty"]) for body in chats] == [
        (True, 1.0),
        (False, 1.0),  # the refused request, sent again without the variables
        (False, 1.0),
    ]
    assert strict.sent[-1][1]["repetition_penalty"] == 1.0 and isinstance(served, ServerModel)
    assert served._refused == {"template"}


class _Appending(_Strict):
    """A server whose /tokenize appends an end-of-text (token 2) to every text with special tokens
    (or answers ``tokenize_status``), and which answers a generation allowed only that token
    with ``ending`` (None: refuses ``allowed_token_ids`` as a strict server does, HTTP 422 "Extra
    inputs are not permitted"); with ``unnamed``, it refuses the chat template's variables so too.
    Its chat template renders a message as ``CHAT`` (or refuses with ``chat_status``, as vLLM does
    for a model without one), ``OPENED`` after it where the template opens a reasoning block."""

    ending: ClassVar[str | None] = "stop"
    tokenize_status: ClassVar[int] = 200
    unnamed: ClassVar[bool] = False
    opens: ClassVar[bool] = False
    chat_status: ClassVar[int] = 200
    CHAT, OPENED = [1, 20, 21], [30, 10]  # "<|user|>a<|assistant|>", "<think>\n"
    WORDS: ClassVar[dict[str, list[int]]] = {"a": [7], "<think>": [30], "</think>\n\n": [31, 11]}

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.sent.append((self.path, body))
        if self.path == "/tokenize" and self.tokenize_status != 200:
            self._refuse(self.tokenize_status, "busy")
        elif self.path == "/tokenize" and "messages" in body and self.chat_status != 200:
            self._refuse(self.chat_status, "this model has no chat template")
        elif self.path == "/tokenize" and "messages" in body:
            rendered = self.CHAT + self.OPENED * self.opens
            self._reply({"tokens": rendered * len(body["messages"]), "max_model_len": 64})
        elif self.path == "/tokenize":
            tokens = self.WORDS.get(body["prompt"], [5] * len(body["prompt"]))
            self._reply({"tokens": tokens + [2] * body["add_special_tokens"], "max_model_len": 64})
        elif "allowed_token_ids" in body and self.ending is None:
            self._refuse(422, "Extra inputs are not permitted")
        elif "allowed_token_ids" in body:
            self._reply({"choices": [{"text": "", "finish_reason": self.ending}]})
        elif "chat_template_kwargs" in body and self.unnamed:
            self._refuse(422, "Extra inputs are not permitted")
        elif self.path.endswith("/chat/completions"):
            self._reply({"choices": [{"message": {"content": "Hi."}}], "usage": {"prompt_tokens": 9}})
        else:
            self._reply({"choices": [{"text": " and on"}], "usage": {"prompt_tokens": 3}})


@pytest.fixture
def appending() -> Iterator[type[_Strict]]:
    yield from _serving(_Appending)


def _prompts(sent: list[tuple[str, dict[str, object]]]) -> list[object]:
    return [body["prompt"] for path, body in sent if path == "/v1/completions" and "max_tokens" in body]


def test_an_appended_end_of_text_is_told_by_the_server_and_left_off_its_prompts(appending):
    """Without a vLLM: the token /tokenize appends is one generation stops at ("stop"), so prompts
    go as token ids without it; an empty text goes as it is (an empty list of ids is refused)."""
    served = load_model(appending.url)
    assert isinstance(served, ServerModel) and served._appended == [2]
    assert served.settings()["appended_end"] == "left off"
    assert served.generate(["Go on", ""], [6, 6]) == [" and on", " and on"]
    assert sorted(_prompts(appending.sent)[-2:], key=str) == ["", [5] * 5]  # sent side by side


def test_a_token_the_server_does_not_stop_at_stays_as_in_process(appending):
    appending.ending = "length"  # a BOS put after the text, say: generation goes past it
    served = load_model(appending.url)
    assert isinstance(served, ServerModel) and served._appended == []
    assert "appended_end" not in served.settings()
    served.generate(["Go on"], [6])
    assert _prompts(appending.sent)[-1] == "Go on"


def test_a_server_that_refuses_allowed_token_ids_keeps_the_token_and_the_penalties(appending):
    """The end-of-text probe is a request of its own: its refusal leaves the appended token in (as
    a server that can't say) and does not drop the penalties from every later completion."""
    appending.ending = None
    served = load_model(appending.url)
    assert any("allowed_token_ids" in body for _, body in appending.sent)  # it was asked
    assert isinstance(served, ServerModel) and served._appended == [] and served._refused == set()
    assert served.generate(["Go on"], [6]) == [" and on"]
    assert appending.sent[-1][1]["repetition_penalty"] == 1.0


def test_a_server_busy_when_asked_for_its_tokens_stops_the_load(appending, monkeypatch):
    """Rather than load without the fix, which would change the texts and the cache key from one
    run to the next."""
    monkeypatch.setattr("contamcheck.backends.server.RETRIES", 0)
    appending.tokenize_status = 503
    with pytest.raises(RuntimeFailure, match="HTTP 503"):
        load_model(appending.url)


def test_a_chat_refusal_that_names_no_field_drops_the_template_variables_first(appending):
    """A strict server refusing a chat request without naming a field: its template's variables go,
    and the penalties stay (on chat requests and on completions) while it takes them."""
    appending.unnamed = True
    served = load_model(appending.url)
    assert served.generate(["Say hi."], [6], chat=True) == ["Hi."]
    assert isinstance(served, ServerModel) and served._refused == {"template"}
    served.generate(["Go on"], [6])
    assert appending.sent[-1][1]["repetition_penalty"] == 1.0


def test_a_reasoning_block_the_served_template_opens_is_closed_before_the_answer(appending):
    """A template that opens "<think>" whatever it is told (DeepSeek-R1's distills, QwQ): the chat
    prompt goes as /tokenize's ids with the block closed, as in-process, not as a chat request
    (where the model would spend the budget reasoning)."""
    appending.opens = True
    served = load_model(appending.url)
    assert isinstance(served, ServerModel) and served._close == [31, 11]
    assert served.settings()["reasoning"] == "closed"  # part of the cache key, as the texts differ
    assert served.generate(["Say hi."], [6], chat=True) == [" and on"]
    assert _prompts(appending.sent)[-1] == [1, 20, 21, 30, 10, 31, 11]
    assert not [path for path, _ in appending.sent if path.endswith("/chat/completions")]
    served.generate(["Go on"], [6])  # a completion prompt is a text, as before
    assert _prompts(appending.sent)[-1] == [5] * 5
    appending.tokenize_status = 404  # gone since the load: said, with what was computed kept
    with pytest.raises(RuntimeFailure, match=r"opens a reasoning block.*answered when the model was loaded"):
        served.generate(["Say hi again."], [6], chat=True)


@pytest.mark.parametrize(("chat_status", "opened"), [(200, []), (200, [30, 31]), (400, [])])
def test_a_template_that_opens_no_reasoning_block_gets_a_chat_request(appending, chat_status, opened):
    """A template that opens none, or closes it itself (GLM-4.5's "<think></think>"), or has none at
    all (vLLM refuses to render one for a base model)."""
    appending.chat_status = chat_status
    appending.OPENED, appending.opens = opened, True
    served = load_model(appending.url)
    assert isinstance(served, ServerModel) and served._close == [] and "reasoning" not in served.settings()
    assert served.generate(["Say hi."], [6], chat=True) == ["Hi."]
    assert appending.sent[-1][0] == "/v1/chat/completions"


def test_a_budget_longer_than_the_served_window_is_the_window_less_one_token(strict):
    served = load_model(strict.url)  # its model list gives a window of 64 tokens
    assert served.generate(["Go on"], [100]) == [" and on"]
    generated = [body for path, body in strict.sent if path == "/v1/completions" and not body.get("echo")]
    # 100 was refused by vLLM: "cannot be greater than max_model_len"
    assert generated[-1]["max_tokens"] == 63
    assert served.generate(["Go on"], [0]) == [""] and served.generate(["Go on"], [63]) == [" and on"]


def test_tests_that_cannot_run_on_a_server_alone_are_refused_at_once(recorded, capsys):
    # a server gives only the top log-probs: Min-K%++ alone can't run, as model or as reference
    assert main([recorded.url, "sample", "-n", "20", "--no-cache", "--tests", "min-k++"]) == 2
    err = capsys.readouterr().err
    assert "None of the tests chosen can run here (min-k++: a server gives only" in err
    assert "(completion, min-k, zlib, guided, canonical-order can run here)" in err
    command = ["fake:clean", "sample", "-n", "20", "--no-cache", "--tests", "min-k++"]
    assert main([*command, "--reference", recorded.url]) == 2
    err = capsys.readouterr().err
    assert "min-k++: the reference is a server, which gives only the top" in err
    assert "can run here), or pass a local --reference, or --reference none." in err
    # a server whose log-probs are read a position late: the tests that score can't run on it …
    recorded.echo = "llama_cpp"
    assert main([recorded.url, "sample", "-n", "20", "--no-cache", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "min-k, min-k++, zlib: the server reads each token's log-prob one position late" in err
    assert "Leave out --quick, which keeps only likelihood tests, to run completion, guided." in err
    # … and it is no reference
    assert main(["fake:clean", "sample", "-n", "20", "--no-cache", "--reference", recorded.url]) == 2
    err = capsys.readouterr().err
    assert f"--reference '{recorded.url}' can't be a reference: the server reads" in err
    assert "--reference none" in err and "Traceback" not in err
    assert "pkg:gemma-3-270m" in err and "newer than most benchmarks" in err  # the offline advice
    # guided alone asks nothing of a reference: this one is not even asked
    command = ["fake:clean", "sample", "-n", "20", "--no-cache", "--tests", "guided", "--json"]
    assert main([*command, "--reference", recorded.url]) == 4
    assert json.loads(capsys.readouterr().out)["reference"]["reason"].startswith("no test chosen")


# -- against vLLM and llama-cpp-python (their fixtures: tests/servers.py) --------------------------


@pytest.fixture(scope="module")
def in_process(smollm2_cache):
    return load_model(MODEL, ModelOptions(device="cpu", threads=2, cache_dir=smollm2_cache))


TEXTS = [
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning.",
    "def add(a, b):\n    return a + b\n",
    "Ünïcödé, emoji 🎉 and a tab\tare tokens too.",
]


@pytest.mark.slow
def test_the_server_gives_the_in_process_numbers(vllm_server, in_process):
    served = load_model(f"openai:{vllm_server}")
    assert served.name == "smollm2" and served.context_length == 2048
    # the window decides a long text's score, so it is part of the cache key
    assert served.settings() == {"backend": "openai", "context_window": "2048"}
    assert isinstance(served, ServerModel) and served._appended == []  # SmolLM2 appends nothing
    for remote, local in zip(served.score(TEXTS), in_process.score(TEXTS), strict=True):
        assert remote.num_tokens == local.num_tokens
        np.testing.assert_allclose(remote.logprobs, local.logprobs, atol=2e-3)
        assert remote.mean is None and remote.std is None  # top log-probs only: no Min-K%++
    prompts = ["The capital of France is", "def fibonacci(n):"]
    assert served.generate(prompts, [8, 12]) == in_process.generate(prompts, [8, 12])
    assert served.generate(["Say hi."], [6], chat=True) == in_process.generate(["Say hi."], [6], chat=True)
    assert isinstance(served, ServerModel) and not served._refused  # vLLM takes the template's variables
    again = ServerModel(parse_spec(f"openai:{vllm_server}#smollm2"))
    assert again.identity == served.identity and served.identity.startswith("openai:")


@pytest.mark.slow
def test_a_text_longer_than_the_window_is_scored_in_part_as_in_process(vllm_server, in_process, monkeypatch):
    served = load_model(f"openai:{vllm_server}")
    long_text = " ".join([TEXTS[0]] * 150)  # about 2,700 tokens; the server's window is 2,048
    [remote] = served.score([long_text])  # was: "A text is too long for the server's context window"
    # in-process, the first tokens that fit beside the one an echo request generates
    monkeypatch.setattr(in_process, "context_length", 2047)
    [local] = in_process.score([long_text])
    assert remote.truncated and local.truncated and remote.num_tokens == local.num_tokens == 2046
    np.testing.assert_allclose(remote.logprobs, local.logprobs, atol=2e-3)


def counting(in_process: HFModel, tokens: int, chat: bool) -> str:
    """'1, 2, 3, …' of just over ``tokens`` tokens as generation sees it: a prompt the model goes on
    with for as long as it is let."""
    for last in itertools.count(10):
        text = ", ".join(map(str, range(1, last))) + ","
        if len(in_process._encode_prompts([text], chat)[0]) > tokens:
            return text
    raise AssertionError("unreachable")


@pytest.mark.slow
@pytest.mark.parametrize("chat", [False, True])
def test_a_prompt_that_leaves_too_little_of_the_window_is_cut_as_in_process(
    vllm_server, in_process, monkeypatch, chat
):
    """vLLM wrote only what its window left (and refused a prompt longer than it); in-process keeps
    the prompt's end and writes the whole budget."""
    served = load_model(f"openai:{vllm_server}")
    monkeypatch.setattr(in_process, "context_length", 2048)  # the server's window
    crowded, too_long = counting(in_process, 2048 - 30, chat), counting(in_process, 2100, chat)
    room = 2048 - len(in_process._encode_prompts([crowded], chat)[0])
    assert 0 < room < 40  # served whole, but 40 new tokens would not fit
    remote = served.generate([crowded, too_long], [40, 12], chat=chat)
    local = in_process.generate([crowded, too_long], [40, 12], chat=chat)
    written = len(in_process.tokenizer(local[0], add_special_tokens=False)["input_ids"])
    assert remote == local and written > room  # more than the window left beside the whole prompt


@pytest.mark.slow
def test_an_audit_through_the_server_reads_as_in_process(vllm_server, smollm2_cache, tmp_path, capsys):
    args = ["sample", "-n", "24", "--reference", "none", "--tests", "min-k,min-k++,zlib,completion", "--json"]
    served_cache = tmp_path / "served"
    local_cache = servers.sharing_smollm2(tmp_path / "local", smollm2_cache)
    assert main([f"openai:{vllm_server}", *args, "--cache", str(served_cache)]) in (0, 4)
    remote = json.loads(capsys.readouterr().out)
    assert main([MODEL, *args, "--cache", str(local_cache), "--threads", "2"]) in (0, 4)
    local = json.loads(capsys.readouterr().out)
    assert remote["model"]["backend"] == "openai" and remote["verdict"]["code"] == local["verdict"]["code"]
    local_tests = {t["name"]: t for t in local["tests"]}
    for test in remote["tests"]:
        if test["name"] == "min-k++":
            assert test["status"] == "skipped" and "top log-probs" in test["skip_reason"]
            continue
        assert test["n_flagged"] == local_tests[test["name"]]["n_flagged"], test["name"]
        assert test["p_value"] == pytest.approx(local_tests[test["name"]]["p_value"], abs=0.02)
    # The same audit again is answered from the cache: only the fingerprint's probe is sent.
    assert main([f"openai:{vllm_server}", *args, "--cache", str(served_cache)]) in (0, 4)
    warm = json.loads(capsys.readouterr().out)
    assert warm["run"]["evidence"]["model"]["computed"] == 0 and warm["tests"] == remote["tests"]


@pytest.mark.slow
def test_the_model_behind_a_server_as_its_own_reference_is_refused(
    vllm_server, smollm2_cache, tmp_path, capsys
):
    # The same weights in-process and served: another identity, the same numbers (to 1e-5 nats).
    cache = str(servers.sharing_smollm2(tmp_path, smollm2_cache))
    args = [MODEL, "sample", "-n", "24", "--tests", "min-k,zlib", "--threads", "2", "--cache", cache]
    assert main([*args, "--reference", f"openai:{vllm_server}"]) == 2
    err = capsys.readouterr().err
    assert (
        f"--reference 'openai:{vllm_server}' gives the model's own numbers" in err and "Traceback" not in err
    )


@pytest.mark.slow
def test_the_key_goes_with_every_request_and_its_absence_is_named(vllm_server, monkeypatch, capsys):
    # every other test of vLLM passes only with the key (the server was started with --api-key)
    monkeypatch.delenv("CONTAMCHECK_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)  # never sent: often a key to another service
    assert main([f"openai:{vllm_server}", "sample", "-n", "20", "--quick"]) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "Set CONTAMCHECK_API_KEY" in err and "Traceback" not in err
    monkeypatch.setenv("VLLM_API_KEY", "not-the-key")  # a key, the wrong one: not "set one"
    assert main([f"openai:{vllm_server}", "sample", "-n", "20", "--quick"]) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "The key in VLLM_API_KEY was refused" in err


@pytest.mark.parametrize("line", [line for line in readme_lines.audit_lines() if readme_lines.served(line)])
def test_the_readmes_lines_for_a_served_model_run(
    line, vllm_server, tiny_setup, capsys, tmp_path, monkeypatch
):
    """The README's audit lines of a model behind a server (tests/test_readme.py runs the rest)."""
    monkeypatch.chdir(tmp_path)
    words = [readme_lines.local(word, tiny_setup, vllm_server) for word in shlex.split(line)[1:]]
    code = main([*words, *readme_lines.FAST])
    captured = capsys.readouterr()
    assert code in (0, 1, 4), captured.err
    assert "error" not in captured.err


@pytest.fixture(scope="module")
def base_vllm_server(tmp_path_factory, request):
    """vLLM on SmolLM2 with its chat template taken away, as a base model is served, and a tokenizer
    that appends its end-of-text to every text."""
    servers.require_servers()  # before SmolLM2 is dequantised (40-50 s): a skip takes no time
    yield from servers.vllm_server(
        tmp_path_factory, request.getfixturevalue("smollm2_cache"), base_model=True
    )


@pytest.mark.slow
def test_a_server_without_a_chat_template_gets_raw_text_as_in_process(base_vllm_server, request, monkeypatch):
    """vLLM refuses a chat request for a model without a template (HTTP 400); the guided test's
    prompts then go as raw text, as in-process generation does for such a model."""
    served = load_model(f"openai:{base_vllm_server}")
    local = request.getfixturevalue("in_process")  # once the server is up (a skip first)
    assert isinstance(local, HFModel)
    monkeypatch.setattr(local.tokenizer, "chat_template", None)  # the tokenizer the server was given
    prompts, budgets = ["Say hi.", "Name a colour:"], [6, 6]
    chat = served.generate(prompts, budgets, chat=True)
    assert isinstance(served, ServerModel) and not served._chat  # asked once, told, not asked again
    assert chat == local.generate(prompts, budgets, chat=True) == local.generate(prompts, budgets)
    assert served.generate(prompts, budgets, chat=True) == chat


def opening_reasoning(template: str) -> str:
    """SmolLM2's chat template with a generation prompt that opens a reasoning block whatever it is
    told, as DeepSeek-R1's distilled models' does."""
    opened = template.replace("{{ '<|im_start|>assistant\n' }}", "{{ '<|im_start|>assistant\n<think>\n' }}")
    assert opened != template, "SmolLM2's template changed: find its generation prompt again"
    return opened


@pytest.fixture
def reasoning_vllm_server(tmp_path_factory, request):
    """vLLM on SmolLM2 served with ``opening_reasoning``'s template, for one test (stopped after it)."""
    servers.require_servers()
    local = request.getfixturevalue("in_process")
    assert isinstance(local, HFModel)
    template = opening_reasoning(str(local.tokenizer.chat_template))
    yield from servers.vllm_server(
        tmp_path_factory, request.getfixturevalue("smollm2_cache"), chat_template=template
    )


@pytest.mark.slow
def test_a_reasoning_block_the_served_template_opens_is_closed_as_in_process(
    reasoning_vllm_server, in_process, monkeypatch
):
    """The guided test's prompts, served with the block closed through /tokenize, are answered as
    in-process with the same template; a chat request would have had the model reason."""
    served = load_model(f"openai:{reasoning_vllm_server}")
    monkeypatch.setattr(
        in_process.tokenizer, "chat_template", opening_reasoning(in_process.tokenizer.chat_template)
    )
    assert isinstance(served, ServerModel) and served._close == in_process._reasoning_close() != []
    assert served.settings()["reasoning"] == "closed"
    prompts = ["Finish the SECOND PIECE: Janet's ducks lay 16 eggs per day. She eats", "Say hi."]
    assert served.generate(prompts, [30, 30], chat=True) == in_process.generate(prompts, [30, 30], chat=True)


@pytest.mark.slow
def test_an_end_of_text_the_served_tokenizer_appends_is_left_off_as_in_process(
    base_vllm_server, request, monkeypatch
):
    """vLLM tokenizes a text prompt with the tokenizer's special tokens: one saved with add_eos_token
    ended every completion prompt with end-of-text (where the model starts a new document) and scored
    it with each text. Left off, the served numbers are those of the same weights whose tokenizer
    appends nothing; a cut prompt and a long text's beginning too."""
    served = load_model(f"openai:{base_vllm_server}")
    local = request.getfixturevalue("in_process")  # once the server is up (a skip first)
    assert isinstance(served, ServerModel) and served._appended == [local.tokenizer.eos_token_id]
    assert served.settings()["appended_end"] == "left off"  # the numbers changed: another cache key
    for remote, here in zip(served.score(TEXTS), local.score(TEXTS), strict=True):
        assert remote.num_tokens == here.num_tokens
        np.testing.assert_allclose(remote.logprobs, here.logprobs, atol=2e-3)
    prompts = ["The capital of France is", "def fibonacci(n):"]
    assert served.generate(prompts, [8, 12]) == local.generate(prompts, [8, 12])
    monkeypatch.setattr(local, "context_length", 2048)  # the server's window
    crowded = counting(local, 2048 - 30, chat=False)
    assert served.generate([crowded], [40]) == local.generate([crowded], [40])
    long_text = " ".join([TEXTS[0]] * 150)
    [remote] = served.score([long_text])
    monkeypatch.setattr(local, "context_length", 2047)  # beside the one token an echo generates
    [here] = local.score([long_text])
    assert remote.truncated and remote.num_tokens == here.num_tokens == 2046


@pytest.mark.slow
def test_a_model_the_server_does_not_serve_is_named_with_what_it_serves(vllm_server, capsys):
    assert main([f"openai:{vllm_server}#gpt-5", "sample"]) == 2
    err = capsys.readouterr().err
    assert "serves no model 'gpt-5'" in err and "smollm2" in err and "#NAME" in err


@pytest.mark.slow
def test_log_probs_a_position_late_are_refused_and_generation_still_runs(llama_cpp_server, capsys):
    args = ["sample", "-n", "20", "--tests", "completion,min-k,zlib,canonical-order", "--json", "--no-cache"]
    assert main([f"openai:{llama_cpp_server}", *args]) in (0, 4)
    report = json.loads(capsys.readouterr().out)
    tests = {test["name"]: test for test in report["tests"]}
    assert tests["completion"]["status"] != "skipped" and tests["completion"]["n"] > 0
    for name in ("min-k", "zlib", "canonical-order"):
        assert tests[name]["status"] == "skipped" and "one position late" in tests[name]["skip_reason"]
    assert report["reference"]["status"] == "none" and "can't be used" in report["reference"]["reason"]
    # Only tests that score: none can run, said at once (the gate does not pass silently).
    assert main([f"openai:{llama_cpp_server}", "sample", "-n", "20", "--quick"]) == 2
    captured = capsys.readouterr()
    assert "None of the tests chosen can run" in captured.err and "one position late" in captured.err
    assert "Leave out --quick" in captured.err and "Traceback" not in captured.err


class _Gateway(http.server.BaseHTTPRequestHandler):
    """Forwards to vLLM, answering with ``refusals[n]`` instead where the n-th request has one (a
    status and a Retry-After value or None); every request's path and whether it was refused go into
    ``seen``. A real busy proxy or rate limiter in front of a real server, as met in deployments.
    Only the API root's paths are passed on (no ``/tokenize``) unless ``tokenize``; ``window``, when
    set, is the context window the model list gives instead of vLLM's."""

    # set per test, on a subclass (the ``gateway`` fixture)
    upstream: ClassVar[str] = ""
    url: ClassVar[str] = ""
    refusals: ClassVar[dict[int, tuple[int, str | None]]] = {}
    seen: ClassVar[list[tuple[str, int]]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()
    tokenize: ClassVar[bool] = False
    window: ClassVar[int | None] = None

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        with self.lock:
            status, retry_after = self.refusals.get(len(self.seen), (0, None))
            self.seen.append((self.path, status))
        if status:
            self.send_response(status)
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"error": {"message": "busy, try again"}}).encode())
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
        url = self.upstream + self.path.removeprefix("/v1")
        if self.tokenize and self.path == "/tokenize":
            url = self.upstream.removesuffix("/v1") + self.path
        request = urllib.request.Request(url, data=body, headers=headers, method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                status, payload = 200, reply.read()
        except urllib.error.HTTPError as error:  # the upstream's refusal, passed on
            status, payload = error.code, error.read()
        if self.window and self.path == "/v1/models" and status == 200:
            listed = json.loads(payload)
            listed["data"][0]["max_model_len"] = self.window
            payload = json.dumps(listed).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def gateway(vllm_server) -> Iterator[type[_Gateway]]:
    class Gateway(_Gateway):
        upstream = vllm_server

    handler = Gateway
    handler.refusals, handler.seen = {}, []  # this test's own
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_busy_server_is_asked_again_as_it_says(gateway, vllm_server, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr("contamcheck.backends.server.time.sleep", waits.append)
    # the model list refused once, the fingerprint's second probe three times (the most retried)
    gateway.refusals.update({0: (503, "0"), 3: (429, "2"), 4: (502, None), 5: (500, "soon")})
    served = load_model(f"openai:{gateway.url}")
    direct = load_model(f"openai:{vllm_server}")
    assert served.identity == direct.identity  # the same fingerprint through the gateway
    count = len(gateway.seen)
    gateway.refusals.update({count: (503, "1"), count + 1: (503, "1"), count + 2: (503, "1")})
    for remote, local in zip(served.score(TEXTS[:1]), direct.score(TEXTS[:1]), strict=True):
        np.testing.assert_array_equal(remote.logprobs, local.logprobs)
    refused = [status for _, status in gateway.seen if status]
    assert refused == [503, 429, 502, 500, 503, 503, 503]
    # Retry-After is followed where it is a number (0 included); otherwise the wait doubles
    assert waits == [0.0, 2.0, 1.0, 2.0, 1.0, 1.0, 1.0]


@pytest.mark.slow
def test_a_text_too_long_for_a_server_without_tokenize_is_refused_with_the_fix(gateway):
    served = load_model(f"openai:{gateway.url}")  # the gateway has no /tokenize (only /v1's paths)
    with pytest.raises(RuntimeFailure) as raised:
        served.score([" ".join([TEXTS[0]] * 150)])
    message = str(raised.value)
    assert "too long for the server's context window of 2048 tokens" in message
    assert (
        "--max-model-len" in message
        and f"{gateway.url.removesuffix('/v1')}/tokenize did not give (HTTP 404)" in message
    )
    assert ("/tokenize", 0) in gateway.seen


@pytest.mark.slow
def test_without_tokenize_a_crowded_prompt_keeps_the_servers_generation(gateway, in_process, monkeypatch):
    served = load_model(f"openai:{gateway.url}")  # the gateway has no /tokenize
    monkeypatch.setattr(in_process, "context_length", 2048)
    crowded, too_long = counting(in_process, 2048 - 30, False), counting(in_process, 2100, False)
    [remote] = served.generate([crowded], [40])  # what the window left: under 30 tokens
    [local] = in_process.generate([crowded], [40])
    assert ("/tokenize", 0) in gateway.seen and 0 < len(remote) < len(local) and local.startswith(remote)
    with pytest.raises(
        RuntimeFailure, match=r"too long for the server's context window of 2048 tokens"
    ) as raised:
        served.generate([too_long], [12])
    assert f"{gateway.url.removesuffix('/v1')}/tokenize did not give (HTTP 404)" in str(raised.value)
    assert [path for path, _ in gateway.seen].count("/tokenize") == 1  # not asked again


@pytest.mark.slow
@pytest.mark.parametrize(("prompt", "chat"), [("The capital of France is", False), ("Say hi.", True)])
def test_a_budget_longer_than_the_window_is_the_window_less_one_token_as_in_process(
    gateway, in_process, monkeypatch, prompt, chat
):
    """vLLM refuses a budget longer than its window (0.32, HTTP 400: "max_tokens=300 cannot be
    greater than max_model_len=256"), which stopped the audit; in-process, the budget is the window
    less one token, and the prompt's last token is kept. Here the gateway gives a window of 64
    tokens (vLLM's is 2,048), so that the budget is generated in seconds, and passes /tokenize on."""
    gateway.window, gateway.tokenize = 64, True
    served = load_model(f"openai:{gateway.url}")
    assert served.context_length == 64
    monkeypatch.setattr(in_process, "context_length", 64)
    [remote] = served.generate([prompt], [100], chat=chat)  # was 100 tokens after the last prompt token
    [local] = in_process.generate([prompt], [100], chat=chat)
    assert (
        remote == local and 0 < len(in_process.tokenizer(local, add_special_tokens=False)["input_ids"]) <= 63
    )


@pytest.mark.slow
def test_a_server_busy_for_good_stops_with_the_status(gateway, monkeypatch, capsys):
    monkeypatch.setattr("contamcheck.backends.server.time.sleep", lambda _: None)
    gateway.refusals.update({i: (503, None) for i in range(100)})
    assert main([f"openai:{gateway.url}", "sample", "-n", "20", "--quick"]) == 3
    err = capsys.readouterr().err
    assert "HTTP 503" in err and "busy, try again" in err and "Traceback" not in err
    assert "asked 4 times" in err and "the same command resumes" in err
    assert len(gateway.seen) == 4  # the first request and its three retries, no more


def test_a_served_prompt_already_generated_is_not_sent_again():
    """A server's text for a prompt does not depend on the prompts sent with it: what a stopped
    audit kept is returned as it was, and each new text is handed on as it arrives."""
    model = object.__new__(ServerModel)
    sent: list[str] = []

    def generate_one(prompt: str, budget: int, chat: bool) -> str:
        sent.append(prompt)
        return prompt.upper()

    model._generate_one = generate_one  # type: ignore[method-assign]
    handed: dict[int, str] = {}
    steps: list[int] = []
    texts = model.generate(
        ["a", "b", "c"], [3, 3, 3], known={1: "kept"}, on_texts=handed.update, on_progress=steps.append
    )
    assert texts == ["A", "kept", "C"] and sorted(sent) == ["a", "c"]
    assert handed == {0: "A", 2: "C"} and steps[-1] == 3


def test_the_same_model_at_two_addresses_shares_its_evidence_and_cache_info_names_both(tmp_path, capsys):
    """The served name and the probe's numbers are the key, not the address: evidence computed
    through one address is reused through the other, and `cache info` lists both names."""
    urls = []
    servers = []
    for _ in range(2):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorded)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        urls.append(f"openai:http://127.0.0.1:{server.server_address[1]}/v1")
    cache = str(tmp_path / "cache")
    try:
        for url in urls:
            assert main([url, "sample", "-n", "20", "--quick", "--no-order", "--cache", cache]) in (0, 1, 4)
        reused = capsys.readouterr().err.splitlines()
        assert main(["cache", "info", "--cache", cache]) == 0
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    out = capsys.readouterr().out
    first, last = (f"m at {url.removeprefix('openai:')}" for url in urls)
    assert f"    {last}: 40 entries\n      (also audited as {first})\n" in out
    assert any(line.startswith("Evidence requests: model 40 of 40 from the cache") for line in reused)

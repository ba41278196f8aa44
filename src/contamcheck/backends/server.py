"""A model behind an OpenAI-compatible completions server: vLLM, llama.cpp's Python server, others.

MODEL is ``openai:URL`` (the server's API root, ``/v1`` added when the URL has no path), with
``#NAME`` after it to pick one of several served models. The server must return the prompt's own
token log-probs (``echo`` with ``logprobs`` on ``/v1/completions``): vLLM's does, and so does
llama-cpp-python's when started with ``--logits_all true``. A server that doesn't is refused with
that reason; OpenAI's own API no longer does.

* **Scores** come from one request per text, ``max_tokens=1``, ``echo`` and ``logprobs=1``; the
  first ``usage.prompt_tokens`` echoed tokens are the text's, and the generated one is dropped.
  The first token has no context and no log-prob (a beginning-of-sequence token before it gives
  it one), as in-process. Such servers give the top few log-probs only, not the whole next-token
  distribution, so μ_t and σ_t are None and Min-K%++ is skipped with that reason.
* **Generations** are greedy (temperature 0), raw text on ``/v1/completions``, or one user message
  on ``/v1/chat/completions`` for chat prompts (raw text when the server has no chat template).
* **Identity** (the evidence cache's key) is a fingerprint of the numbers the server gives a fixed
  probe text: its tokens and their log-probs rounded to 0.1. Weights swapped behind the same served
  name get a new identity (no stale evidence); the same weights served elsewhere share the cache.
  A server whose numbers move between calls by more than rounding may miss the cache now and then:
  a miss recomputes, it never mixes two models.
* Requests run ``CONCURRENCY`` at a time (servers batch concurrent requests); a refused connection,
  HTTP 429 or 5xx is retried ``RETRIES`` times before the audit stops (what was computed is kept).
  ``OPENAI_API_KEY``, when set, is sent as the bearer token; it is never stored or shown.

Only the standard library is used: no client package to install.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ..errors import InputError, ModelLoadError, RuntimeFailure
from .base import ModelDescription, TokenStats

PREFIX = "openai:"
SPEC_FORMAT = "openai:URL[#MODEL], e.g. openai:http://127.0.0.1:8000/v1"
CONCURRENCY = 8
RETRIES = 3
TIMEOUT_S = 600.0  # one request: a long generation on a busy CPU server is slow
MAX_REPLY_BYTES = 64 * 2**20
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
# Ordinary English with numbers, punctuation and a name: every tokenizer splits it differently, and
# any change of weights moves some of its log-probs.
PROBE = (
    "On 20 July 1969, Neil Armstrong stepped onto the Moon, and 600 million people watched on "
    "television. Later, in a quiet kitchen in Leeds, my grandmother baked 12 scones: flour, butter, "
    "milk and a pinch of salt."
)
PROBE_DECIMALS = 1


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # the API root, e.g. http://127.0.0.1:8000/v1
    model: str | None  # the served model's name, when the spec names one


def parse_spec(spec: str) -> Endpoint:
    """``openai:URL[#MODEL]`` as an endpoint, or :class:`InputError` naming what is wrong."""
    body = spec.removeprefix(PREFIX).strip()
    url, _, model = body.partition("#")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"Can't read the server address in {spec!r}: expected {SPEC_FORMAT} (an http:// or https:// URL)."
        )
    if parts.query:
        raise InputError(
            f"The server address in {spec!r} has a query ({parts.query!r}); give the API root only."
        )
    path = parts.path.rstrip("/") or "/v1"
    return Endpoint(urlunsplit((parts.scheme, parts.netloc, path, "", "")), model.strip() or None)


class ServerModel:
    """A served model. Implements :class:`~contamcheck.backends.base.LanguageModel`."""

    def __init__(self, endpoint: Endpoint, api_key: str | None = None) -> None:
        self.endpoint = endpoint
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._chat = True  # until the server says it has no chat template
        self._refusal: ModelLoadError | None = None  # why its log-probs can't be used, if they can't
        self._lock = threading.Lock()
        listed = self._served_models()
        self.name = self._choose(listed)
        entry = next(item for item in listed if item.get("id") == self.name)
        length = entry.get("max_model_len") or entry.get("context_length")
        self.context_length: int | None = int(length) if isinstance(length, int) and length > 0 else None
        self.identity = self._fingerprint()

    # -- the protocol -------------------------------------------------------------------------------

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        if self._refusal is not None:
            raise self._refusal
        return self._each(texts, self._score_one)

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: Sequence[int],
        chat: bool = False,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[str]:
        jobs = list(zip(prompts, max_new_tokens, strict=True))
        return self._each(jobs, lambda job: self._generate_one(job[0], job[1], chat), on_progress)

    def num_parameters(self) -> int | None:
        return None  # the API does not say

    def settings(self) -> dict[str, str]:
        return {"backend": "openai"}

    # -- requests -----------------------------------------------------------------------------------

    def _score_one(self, text: str) -> TokenStats:
        if not text:
            return TokenStats(logprobs=np.zeros(0))
        reply = self._post(
            "/completions",
            {
                "model": self.name,
                "prompt": text,
                "max_tokens": 1,
                "echo": True,
                "logprobs": 1,
                "temperature": 0,
            },
        )
        try:
            choice = reply["choices"][0]
            logprobs = choice.get("logprobs") or {}
            values = logprobs.get("token_logprobs")
            prompt_tokens = int(reply["usage"]["prompt_tokens"])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise self._shape_error(reply) from None
        if not isinstance(values, list) or len(values) < prompt_tokens:
            raise self._no_prompt_logprobs()
        scored = [float(v) for v in values[:prompt_tokens] if v is not None]
        return TokenStats(logprobs=np.asarray(scored, dtype=np.float64))

    def _generate_one(self, prompt: str, budget: int, chat: bool) -> str:
        if budget <= 0:
            return ""
        request: dict[str, Any] = {"model": self.name, "max_tokens": int(budget), "temperature": 0}
        if chat and self._chat:
            try:
                messages = [{"role": "user", "content": prompt}]
                reply = self._post("/chat/completions", {**request, "messages": messages}, raw_errors=True)
                return str(reply["choices"][0]["message"]["content"] or "")
            except _ClientError as exc:
                if exc.status != 400 or "template" not in exc.message.lower():
                    raise exc.failure from None
                with self._lock:
                    self._chat = False  # a base model without a chat template: raw text, as in-process
            except (KeyError, IndexError, TypeError):
                raise self._shape_error(reply) from None
        reply = self._post("/completions", {**request, "prompt": prompt})
        try:
            return str(reply["choices"][0]["text"] or "")
        except (KeyError, IndexError, TypeError):
            raise self._shape_error(reply) from None

    def _each(
        self,
        items: Sequence[Any],
        one: Callable[[Any], Any],
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Any]:
        """``one`` over ``items``, ``CONCURRENCY`` at a time, in order; the first error stops the rest."""
        if not items:
            return []
        with ThreadPoolExecutor(max_workers=min(CONCURRENCY, len(items))) as pool:
            futures = [pool.submit(one, item) for item in items]
            pending: set[Future[Any]] = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        future.result()  # raises the first failure
                    if on_progress is not None:
                        on_progress(len(futures) - len(pending))
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
        return [future.result() for future in futures]

    def _served_models(self) -> list[dict[str, Any]]:
        reply = self._get("/models")
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) and item.get("id") for item in data):
            raise self._shape_error(reply)
        return data

    def _choose(self, listed: list[dict[str, Any]]) -> str:
        names = [str(item["id"]) for item in listed]
        wanted = self.endpoint.model
        if wanted is not None:
            if wanted not in names:
                raise InputError(
                    f"The server at {self.endpoint.base_url} serves no model {wanted!r}; it serves: "
                    f"{', '.join(names) or 'none'}. Use openai:{self.endpoint.base_url}#NAME with one "
                    "of them."
                )
            return wanted
        if len(names) != 1:
            raise InputError(
                f"The server at {self.endpoint.base_url} serves {len(names)} models "
                f"({', '.join(names) or 'none'}); name one: openai:{self.endpoint.base_url}#NAME."
            )
        return names[0]

    def _no_prompt_logprobs(self, why: str = "") -> ModelLoadError:
        return ModelLoadError(
            f"The server at {self.endpoint.base_url} does not return a prompt's own token log-probs "
            f"(echo with logprobs on /v1/completions{': ' + why if why else ''}), which every "
            "likelihood test needs. Serve the model with vLLM, or run only --tests completion,guided."
        )

    def _fingerprint(self) -> str:
        """The identity from the probe's numbers, after checking that they are read where they stand.

        A server without usable prompt log-probs is identified by its greedy continuation of the
        probe instead, and can still run the tests that only generate; scoring is refused."""
        try:
            text, probe = self._echo(PROBE)
        except _Refused as exc:
            self._refusal = exc.failure
            continuation = self._generate_one(PROBE, 32, chat=False)
            digest = hashlib.sha256(json.dumps(["generated", continuation]).encode("utf-8")).hexdigest()
            return f"openai:{digest[:24]}"
        rounded = [
            None if v is None else round(float(v), PROBE_DECIMALS) + 0.0 for v in probe["token_logprobs"]
        ]
        digest = hashlib.sha256(json.dumps([probe["tokens"], rounded]).encode("utf-8")).hexdigest()
        greedy = text[len(PROBE) :] if text.startswith(PROBE) else ""
        if greedy:
            try:
                check_alignment(self.endpoint.base_url, self._echo(PROBE + greedy)[1], greedy)
            except ModelLoadError as exc:
                self._refusal = exc
        return f"openai:{digest[:24]}"

    def _echo(self, prompt: str) -> tuple[str, dict[str, list[Any]]]:
        """The echoed text (prompt and one greedy token) and the prompt's own tokens, log-probs and
        top log-probs."""
        request = {"model": self.name, "prompt": prompt, "max_tokens": 1, "echo": True, "logprobs": 1}
        try:
            reply = self._post("/completions", {**request, "temperature": 0}, raw_errors=True)
        except _ClientError as exc:
            if exc.status in (400, 422):  # echo or logprobs refused
                raise _Refused(self._no_prompt_logprobs(exc.message)) from None
            raise exc.failure from None
        try:
            choice = reply["choices"][0]
            logprobs = choice.get("logprobs") or {}
            n = int(reply["usage"]["prompt_tokens"])
            fields = {key: logprobs.get(key) for key in ("tokens", "token_logprobs", "top_logprobs")}
            text = str(choice.get("text") or "")
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise self._shape_error(reply) from None
        lists = {key: value for key, value in fields.items() if isinstance(value, list) and len(value) >= n}
        if len(lists) < len(fields):
            raise _Refused(self._no_prompt_logprobs())
        return text, {key: value[:n] for key, value in lists.items()}

    # -- HTTP ---------------------------------------------------------------------------------------

    def _get(self, path: str) -> Any:
        try:
            return self._request(
                urllib.request.Request(self.endpoint.base_url + path, headers=self._headers())
            )
        except _ClientError as exc:
            raise exc.failure from None

    def _post(self, path: str, body: dict[str, Any], raw_errors: bool = False) -> Any:
        data = json.dumps(body).encode("utf-8")
        headers = {**self._headers(), "Content-Type": "application/json"}
        request = urllib.request.Request(
            self.endpoint.base_url + path, data=data, headers=headers, method="POST"
        )
        try:
            return self._request(request)
        except _ClientError as exc:
            if raw_errors:
                raise
            raise exc.failure from None

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "contamcheck"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _request(self, request: urllib.request.Request) -> Any:
        where = f"{request.get_method()} {request.full_url}"
        for attempt in range(RETRIES + 1):
            try:
                with urllib.request.urlopen(
                    request, timeout=TIMEOUT_S
                ) as response:  # http/https only: parse_spec
                    raw = response.read(MAX_REPLY_BYTES + 1)
            except urllib.error.HTTPError as exc:
                if exc.code in RETRY_STATUS and attempt < RETRIES:
                    time.sleep(0.5 * 2**attempt)
                    continue
                raise _ClientError(exc.code, _server_message(exc), where, self.endpoint.base_url) from None
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if attempt < RETRIES and not isinstance(reason, ConnectionRefusedError):
                    time.sleep(0.5 * 2**attempt)
                    continue
                raise ModelLoadError(
                    f"Can't reach the server at {self.endpoint.base_url} ({reason}). Start it (for "
                    "example `vllm serve MODEL`), or check the address and port."
                ) from None
            if len(raw) > MAX_REPLY_BYTES:
                raise RuntimeFailure(
                    f"{where} answered more than {MAX_REPLY_BYTES >> 20} MiB; is it an "
                    "OpenAI-compatible server?"
                )
            try:
                return json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise RuntimeFailure(
                    f"{where} did not answer JSON ({raw[:80]!r}...); is {self.endpoint.base_url} an "
                    "OpenAI-compatible API root (usually ending in /v1)?"
                ) from None
        raise AssertionError("unreachable")

    def _shape_error(self, reply: Any) -> RuntimeFailure:
        return RuntimeFailure(
            f"The server at {self.endpoint.base_url} answered in an unexpected shape "
            f"({json.dumps(reply)[:160]}...); contamcheck needs the OpenAI completions API."
        )


class _Refused(Exception):
    """The server can't give usable prompt log-probs; ``failure`` says why, for the tests that need them."""

    def __init__(self, failure: ModelLoadError) -> None:
        super().__init__(str(failure))
        self.failure = failure


class _ClientError(Exception):
    """An HTTP error from the server, with the error to raise for it."""

    def __init__(self, status: int, message: str, where: str, base_url: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        if status in (401, 403):
            self.failure: Exception = ModelLoadError(
                f"The server at {base_url} refused the request (HTTP {status}: {message}). Set "
                "OPENAI_API_KEY to its key."
            )
        elif status == 404:
            self.failure = ModelLoadError(
                f"{where} was not found (HTTP 404: {message}). Give the server's API root, usually "
                "ending in /v1; contamcheck needs its /models and /completions endpoints."
            )
        else:
            self.failure = RuntimeFailure(f"{where} failed (HTTP {status}): {message}")


def _server_message(error: urllib.error.HTTPError) -> str:
    try:
        body = error.read(4096).decode("utf-8", "replace")
    except OSError:
        return error.reason or ""
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError:
        if body.lstrip().startswith("<"):  # an HTML error page: its status line says it
            return str(error.reason or "")
        return " ".join(body.split())[:300]
    detail = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(detail, dict):
        detail = detail.get("message") or detail.get("detail") or detail
    return " ".join(str(detail).split())[:300]


def check_alignment(base_url: str, logprobs: dict[str, list[Any]], greedy: str) -> None:
    """Refuse log-probs read one position late.

    ``logprobs`` is the echo of a prompt that ends in ``greedy``, the server's own greedy
    continuation of the rest; so at that last position ``greedy`` must be the top choice. A server
    that reads each token's log-prob from the distribution *after* it (llama-cpp-python 0.3's
    server does, with echo: docs/validation/server-alignment.md) shows the distribution over the next
    token there instead. Where the last token is not ``greedy`` (the text tokenized differently)
    nothing can be told and nothing is refused.
    """
    tokens, values, tops = logprobs["tokens"], logprobs["token_logprobs"], logprobs["top_logprobs"]
    if (
        not tokens
        or tokens[-1] != greedy
        or values[-1] is None
        or not isinstance(tops[-1], dict)
        or not tops[-1]
    ):
        return
    if float(values[-1]) < max(float(v) for v in tops[-1].values()) - 1e-3:
        raise ModelLoadError(
            f"The server at {base_url} returns each token's log-prob one position late (from the "
            "prediction after the token, not before it; llama-cpp-python's server does this with "
            "echo), so every likelihood test would read noise. Serve the model with vLLM, or run "
            "only --tests completion,guided."
        )


def describe(spec: str) -> tuple[ModelDescription, ServerModel]:
    """Identify the served model: asking the server is cheap, so identifying it connects."""
    model = ServerModel(parse_spec(spec))
    return ModelDescription(
        f"{model.name} at {model.endpoint.base_url}", model.identity, model.settings()
    ), model

"""A model behind an OpenAI-compatible completions server, such as vLLM's.

MODEL is ``openai:URL`` (the server's API root, ``/v1`` added when the URL has no path), with
``#NAME`` after it to pick one of several served models. The likelihood tests need the prompt's own
token log-probs (``echo`` with ``logprobs`` on ``/v1/completions``), read where each token stands:
vLLM's server gives them. A server that gives none, or reads each one a position late
(llama-cpp-python 0.3's server does: docs/validation/server-alignment.md), is refused for scoring:
the description says why (``cannot_score``), the audit skips the tests that score with that reason,
and the tests that only generate still run on it. OpenAI's own API gives none.

* **Scores** come from one request per text, ``max_tokens=1``, ``echo`` and ``logprobs=1``; the
  first ``usage.prompt_tokens`` echoed tokens are the text's, and the generated one is dropped.
  The first token has no context and no log-prob (a beginning-of-sequence token before it gives
  it one), as in-process. Such servers give the top few log-probs only, not the whole next-token
  distribution, so μ_t and σ_t are None and Min-K%++ is skipped with that reason. A text the
  server refuses as longer than its context window is scored on its first tokens, as in-process,
  sent as token ids from vLLM's own ``/tokenize`` (the OpenAI API has none: there the refusal
  stops the audit, saying what to do), and marked truncated. A tokenizer that appends an
  end-of-text token, or another that generation stops at, to every text (saved with
  ``add_eos_token``) would end each scored text and completion prompt with it, since the server
  tokenizes them: found on vLLM (``_appended_end``), such texts go as token ids from
  ``/tokenize`` without it, as in-process (``HFModel._encode``).
* **Generations** are greedy: temperature 0 with every penalty off (a server may otherwise apply
  the model's own ``generation_config.json``, whose repetition penalty would hold back the verbatim
  recall the completion test looks for), raw text on ``/v1/completions``, or one user message on
  ``/v1/chat/completions`` for chat prompts, reasoning off as in-process (``CHAT_TEMPLATE_VARIABLES``;
  raw text when the server has no chat template). A
  prompt that leaves less than its budget of new tokens in the context window (vLLM then writes
  fewer, or refuses a prompt longer than the window) is cut to its last tokens, as in-process (and a
  budget longer than the window is the window less one prompt token, as in-process): its
  token ids (the chat template applied) come from ``/tokenize`` and go to ``/v1/completions``.
  A crowded prompt is seen by ``usage.prompt_tokens`` against the window the model list gives
  (vLLM's ``max_model_len``); a refused one by the refusal. Without ``/tokenize``, a prompt the
  server refuses stops the audit, and one it writes fewer tokens for keeps that shorter text.
* **Identity** (the evidence cache's key) is the served name and path with a fingerprint of the
  numbers the server gives a fixed probe text: its tokens and their log-probs rounded to 0.1. So
  weights swapped behind the same name and path get a new identity unless every probe log-prob
  rounds the same (weights that close give the audit the same numbers to about that precision).
  A server whose numbers move between calls by more than rounding (batch-dependent GPU kernels)
  may miss the cache now and then; a miss recomputes.
* Requests run ``CONCURRENCY`` at a time (servers batch concurrent requests); HTTP 429 or 5xx, a
  dropped connection, and a refused one once the model has answered, are retried ``RETRIES`` times
  before the audit stops; a request unanswered after ``TIMEOUT_S`` (the model list, the first
  request: ``LIST_TIMEOUT_S``) stops it at once. Evidence of the batches finished before is kept,
  and the same command resumes.
* ``CONTAMCHECK_API_KEY`` (else ``VLLM_API_KEY``), when set, is sent as the bearer token; never
  ``OPENAI_API_KEY``, which is often a key to someone else's service. It is never stored or shown.

Only the standard library is used: no client package to install.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ..errors import InputError, ModelLoadError, RuntimeFailure
from .base import (
    CHAT_TEMPLATE_VARIABLES,
    REASONING_CLOSES,
    REASONING_OPENS,
    ModelDescription,
    TokenStats,
    appended_token,
    reasoning_close,
    without_end,
)

PREFIX = "openai:"
SPEC_FORMAT = "openai:URL[#MODEL], e.g. openai:http://127.0.0.1:8000/v1"
CONCURRENCY = 8
RETRIES = 3
TIMEOUT_S = 600.0  # one request: a long generation on a busy CPU server is slow
LIST_TIMEOUT_S = 60.0  # the model list, the first request: a server that can't answer it is stuck
MAX_REPLY_BYTES = 64 * 2**20
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 30.0
TOO_LITTLE_ROOM = "A prompt leaves too little of the server's context window for its generation."
APPENDED_END = "The served tokenizer appends an end-of-text to every text, which is left off."
REASONING_CLOSED = "The served chat template opens a reasoning block, which is closed before the answer."
API_KEY_VARIABLES = ("CONTAMCHECK_API_KEY", "VLLM_API_KEY")
# Greedy, and nothing else: the standard fields, then vLLM's and llama.cpp's own penalties (dropped
# for a server that refuses fields it does not know).
GREEDY = {"temperature": 0, "top_p": 1, "presence_penalty": 0, "frequency_penalty": 0}
NO_REPETITION_PENALTY = {"repetition_penalty": 1.0, "repeat_penalty": 1.0}
CHAT_EXTRAS = {"chat_template_kwargs": CHAT_TEMPLATE_VARIABLES}  # vLLM's: the template's variables
# each group is dropped on its own once the server refuses it (a chat request's template variables
# must not take the completions' penalties with them)
EXTRA_FIELDS: dict[str, dict[str, Any]] = {"penalties": NO_REPETITION_PENALTY, "template": CHAT_EXTRAS}
SERVED_WITH_LOGPROBS = "vLLM's server gives them where they stand (docs/validation/server-alignment.md)"
ALIGNMENT_TOLERANCE = 0.3  # nats: kernels differ between a generation and a prefill; a shift is several
# Ordinary English with numbers, punctuation and a name: every tokenizer splits it differently, and
# any change of weights moves some of its log-probs.
PROBE = (
    "On 20 July 1969, Neil Armstrong stepped onto the Moon, and 600 million people watched on "
    "television. Later, in a quiet kitchen in Leeds, my grandmother baked 12 scones: flour, butter, "
    "milk and a pinch of salt."
)
PROBE_DECIMALS = 1
LOWEST_FLOAT32 = float(np.finfo(np.float32).min)
LOGPROB_ROUNDING = 1e-3  # a log-prob a little above 0 is a probability of 1 rounded, no error


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # the API root, e.g. http://127.0.0.1:8000/v1
    model: str | None  # the served model's name, when the spec names one


def parse_spec(spec: str) -> Endpoint:
    """``openai:URL[#MODEL]`` as an endpoint, or :class:`InputError` naming what is wrong (never
    repeating a password the address carries)."""
    body = spec.removeprefix(PREFIX).strip()
    shown = _shown(spec)
    # where urlsplit would find a user or password, and before "#" splits one that holds a "#"
    if "@" in body.partition("//")[2].partition("/")[0]:
        raise InputError(
            f"The server address {shown} carries a user name or password, which contamcheck does not "
            "send; put the server's API key in CONTAMCHECK_API_KEY (sent as a bearer token, never stored)."
        )
    url, hash_sign, model = body.partition("#")
    try:
        parts = urlsplit(url)  # an unclosed [ of an IPv6 address raises here
    except ValueError:
        parts = urlsplit("")
    try:
        port = parts.port  # a port that is not a number raises here, not at the first request
    except ValueError:
        port = 0
    if port == 0:  # ":0", or a port that is no number (no port at all is None)
        raise InputError(f"The server address in {shown} has no valid port (a number from 1 to 65535).")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"Can't read the server address in {shown}: expected {SPEC_FORMAT} (an http:// or https:// URL)."
        )
    if hash_sign and not model.strip():
        raise InputError(
            f"The model name after '#' in {shown} is empty: name a served model, or drop the '#'."
        )
    if parts.query:
        raise InputError(
            f"The server address in {shown} has a query ({parts.query!r}); give the API root only."
        )
    path = parts.path.rstrip("/") or "/v1"
    return Endpoint(urlunsplit((parts.scheme, parts.netloc, path, "", "")), model.strip() or None)


def _shown(spec: str) -> str:
    """The spec as a message may quote it: what lies between "//" and an "@" after it is hidden."""
    head, slashes, rest = spec.partition("//")
    if "@" in rest:
        rest = "…@" + rest.rpartition("@")[2]
    return repr(head + slashes + rest)


class ServerModel:
    """A served model. Implements :class:`~contamcheck.backends.base.LanguageModel`."""

    def __init__(self, endpoint: Endpoint, api_key: str | None = None) -> None:
        self.endpoint = endpoint
        given = [name for name in API_KEY_VARIABLES if os.environ.get(name)]
        # the variable the key came from (for a refusal's message); None when passed in, or none
        self._key_variable = given[0] if api_key is None and given else None
        self._api_key = api_key if api_key is not None else (os.environ[given[0]] if given else None)
        self._chat = True  # until the server says it has no chat template
        self._refused: set[str] = set()  # the groups of EXTRA_FIELDS the server refused
        self.cannot_score: str | None = None  # why its log-probs can't be used, if they can't
        self._answered = False  # a refused connection is retried once the server has answered
        self._no_tokenize: str | None = None  # why /tokenize can't help, once it could not
        self._lock = threading.Lock()
        self.context_length: int | None = None
        listed = self._served_models()
        self._answered = True
        self.name = self._choose(listed)
        entry = next(item for item in listed if str(item["id"]) == self.name)
        length = entry.get("max_model_len") or entry.get("context_length")
        if isinstance(length, bool) or not isinstance(length, int) or length <= 0:
            length = None
        self.context_length = length
        self._where = [self.name, str(entry.get("root") or ""), str(entry.get("parent") or "")]
        self._appended: list[int] = []  # an end-of-text the served tokenizer appends, left off
        self._close: list[int] = []  # what closes a reasoning block its chat template opens
        self.identity = self._fingerprint()
        self._appended = self._appended_end()
        self._close = self._reasoning_close()

    # -- the protocol -------------------------------------------------------------------------------

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        if self.cannot_score is not None:
            raise ModelLoadError(f"The server at {self.endpoint.base_url}: {self.cannot_score}.")
        return self._each(texts, self._score_one)

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: Sequence[int],
        chat: bool = False,
        on_progress: Callable[[int], None] | None = None,
        *,
        known: Mapping[int, str] | None = None,
        on_texts: Callable[[dict[int, str]], None] | None = None,
    ) -> list[str]:
        # a served prompt's text does not depend on the others sent with it: a known one is not sent
        known = known or {}
        todo = [i for i in range(len(prompts)) if i not in known]
        before = len(prompts) - len(todo)

        def progress(finished: int) -> None:
            if on_progress is not None:
                on_progress(before + finished)

        def done(position: int, text: str) -> None:
            if on_texts is not None:
                on_texts({todo[position]: text})

        made = self._each(
            todo,
            lambda i: self._generate_one(prompts[i], max_new_tokens[i], chat),
            progress,
            done,
        )
        texts = dict(known) | dict(zip(todo, made, strict=True))
        return [texts[i] for i in range(len(prompts))]

    def num_parameters(self) -> int | None:
        return None  # the API does not say

    def settings(self) -> dict[str, str]:
        # the window decides what a long text's score is (its first tokens): part of the cache key
        window = {"context_window": str(self.context_length)} if self.context_length else {}
        # as does an appended end-of-text, left off since 2026-12-07 (the probe's numbers are unchanged)
        end = {"appended_end": "left off"} if self._appended else {}
        # and a reasoning block closed, which a server without /tokenize can't (its texts differ)
        closed = {"reasoning": "closed"} if self._close else {}
        return {"backend": "openai", **window, **end, **closed}

    # -- requests -----------------------------------------------------------------------------------

    def _score_one(self, text: str) -> TokenStats:
        if not text:
            return TokenStats(logprobs=np.zeros(0))
        try:
            reply = self._complete(self._echo_request(self._prompt(text)), raw_errors=True)
        except _ClientError as exc:
            if not exc.too_long:
                raise exc.failure from None
            return self._score_beginning(text, exc)
        return self._stats(reply)

    def _prompt(self, text: str) -> str | list[int]:
        """A text as a prompt: as it is, or as token ids without the end-of-text the served
        tokenizer appends (``_appended_end``), as in-process."""
        if not self._appended:
            return text
        try:
            tokens, _ = self._tokenize(self._text_body(text), APPENDED_END)
        except _NoTokenize:
            raise self._tokenize_gone(APPENDED_END, "texts") from None
        kept = without_end(tokens, self._appended)
        return kept if kept and len(kept) < len(tokens) else text  # else as it is (an empty text too)

    def _appended_end(self) -> list[int]:
        """``[token]`` where the served tokenizer appends one token to every text and the server
        stops generating at it (an end-of-text: some fine-tunes' tokenizers are saved with
        ``add_eos_token``), else ``[]``. Told as in-process (``hf._appended_end``), by a text's
        tokens with and without special tokens from vLLM's ``/tokenize``, and by a generation of one
        token allowed only that one (``allowed_token_ids``: "stop" at an end token, else "length").
        Without ``/tokenize`` (another server), or where the server refuses ``allowed_token_ids``:
        ``[]``, and the token stays. A server that fails (busy past its retries, a refused key)
        stops the load, rather than change the texts and the cache key from one run to the next."""
        try:
            marked, _ = self._tokenize(self._text_body("a"), "")
            plain, _ = self._tokenize(self._text_body("a", special=False), "")
        except _NoTokenize:  # the OpenAI API has none: as before
            return []
        appended = appended_token(plain, marked)
        if not appended:
            return []
        try:  # posted as it is: a refusal of allowed_token_ids must not drop the penalties
            body = {"model": self.name, "prompt": plain, "max_tokens": 1, "allowed_token_ids": appended}
            reply = self._post("/completions", {**body, **GREEDY}, raw_errors=True)
            stopped = reply["choices"][0]["finish_reason"] == "stop"
        except _ClientError as exc:
            if exc.status in (400, 404, 422):
                return []  # a server that can't say: the token stays, as before
            raise exc.failure from None
        except (KeyError, IndexError, TypeError):
            return []
        return appended if stopped else []

    def _tokenize_gone(self, why: str, what: str) -> RuntimeFailure:
        return RuntimeFailure(
            f"{why} Its {what} go as the token ids of vLLM's /tokenize, which answered when the "
            f"model was loaded but not now ({self._no_tokenize}). Check the server, then run the "
            "command again: what was computed is kept."
        )

    def _reasoning_close(self) -> list[int]:
        """The ids that close a reasoning block the chat template opens (``base.reasoning_close``),
        from ``/tokenize``, else ``[]``: without it (the OpenAI API), or without a chat template
        (vLLM refuses to render one: a base model), the chat request goes as before."""
        if self._no_tokenize is not None:
            return []
        try:
            reply = self._post(self._root_url() + "/tokenize", self._chat_body("a"), raw_errors=True)
            rendered = [int(token) for token in reply["tokens"]]
            opening, _ = self._tokenize(self._text_body(REASONING_OPENS, special=False), "")
            closing, _ = self._tokenize(self._text_body(REASONING_CLOSES, special=False), "")
        except _ClientError as exc:
            if exc.stops_the_load:
                raise exc.failure from None  # as ``_tokenize``: the load stops
            return []
        except (_NoTokenize, _NotAnAPI, KeyError, TypeError, ValueError):
            return []
        return reasoning_close(rendered, opening, closing)

    def _score_beginning(self, text: str, refused: _ClientError) -> TokenStats:
        """A text longer than the context window: its first tokens, as many as fit beside the one
        token an echo request generates, sent as token ids (as in-process scoring keeps a text's
        beginning), marked truncated. The tokens come from the server's ``/tokenize`` (vLLM's, at
        the API root's parent), which the OpenAI API lacks: without it, the refusal stands."""
        tokens, window = self._tokenize(self._text_body(text), str(refused.failure))
        if len(tokens) < window or window < 2:
            raise refused.failure  # not what its refusal said: nothing to cut
        stats = self._stats(self._complete(self._echo_request(tokens[: window - 1])))
        return TokenStats(logprobs=stats.logprobs, truncated=True)

    def _tokenize(self, body: dict[str, Any], refused: str) -> tuple[list[int], int]:
        """The token ids vLLM's ``/tokenize`` (at the API root's parent) gives for ``body``, and
        the context window. The OpenAI API has no such endpoint: then ``_NoTokenize`` is raised,
        saying ``refused``, the URL tried and why it could not help."""
        url = self._root_url() + "/tokenize"
        if self._no_tokenize is None:
            try:
                reply = self._post(url, body, raw_errors=True)
                window = self.context_length or int(reply["max_model_len"])
                return [int(token) for token in reply["tokens"]], window
            except _ClientError as exc:
                if exc.stops_the_load:
                    raise exc.failure from None  # the key, or a server busy past its retries
                self._no_tokenize = f"HTTP {exc.status}"  # no such endpoint: the OpenAI API has none
            except (_NotAnAPI, KeyError, TypeError, ValueError):
                self._no_tokenize = "not vLLM's answer"  # something else answers there
        raise _NoTokenize(
            f"{refused} Cutting such a text needs vLLM's /tokenize, which {url} did not "
            f"give ({self._no_tokenize}), so it can't be cut as in-process."
        )

    def _root_url(self) -> str:
        """Where vLLM serves its own endpoints (``/tokenize``): the API root less its ``/v1``."""
        return self.endpoint.base_url.removesuffix("/v1")

    def _stats(self, reply: Any) -> TokenStats:
        try:
            values = self._prompt_part(reply, ("token_logprobs",))["token_logprobs"]
        except _Refused:
            raise self._no_prompt_logprobs() from None
        if values and values[0] is None:  # the first token, without context
            values = values[1:]
        if any(v is None for v in values):  # a gap would shift every position after it
            raise self._shape_error(reply)
        return TokenStats(logprobs=np.asarray([self._logprob(v, reply) for v in values], dtype=np.float64))

    def _logprob(self, value: Any, reply: Any) -> float:
        """A log-probability as the server gave it: a finite number, at most zero (rounding aside);
        anything else (NaN, infinity, a positive number, text) would pass silently into every score."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
            if LOWEST_FLOAT32 <= number <= LOGPROB_ROUNDING:  # kept as float32: finite there too
                return number
        raise RuntimeFailure(
            f"The server at {self.endpoint.base_url} gave {json.dumps(value)[:40]} as a token's "
            "log-probability, which must be a finite number at most 0; contamcheck can't score "
            f"with it ({json.dumps(reply)[:120]}...). Is it a correct OpenAI-compatible server?"
        )

    def _echo_request(self, prompt: str | list[int]) -> dict[str, Any]:
        return {"model": self.name, "prompt": prompt, "max_tokens": 1, "echo": True, "logprobs": 1}

    def _generate_one(self, prompt: str, budget: int, chat: bool) -> str:
        budget = int(budget)  # a numpy integer is not JSON
        if self.context_length:
            # as in-process: at most the window less one prompt token (vLLM refuses a budget longer
            # than its window, which stopped the audit)
            budget = min(budget, self.context_length - 1)
        if budget <= 0:
            return ""
        if chat and self._close:  # the template's rendering with the block closed, as in-process
            try:
                return self._generate_from_end(prompt, budget, chat, REASONING_CLOSED)
            except _NoTokenize:
                raise self._tokenize_gone(REASONING_CLOSED, "chat prompts") from None
        try:
            text, prompt_tokens = self._generate_whole(prompt, budget, chat)
        except _ClientError as exc:
            if not exc.too_long:
                raise exc.failure from None
            return self._generate_from_end(prompt, budget, chat, str(exc.failure))
        window = self.context_length
        if window and prompt_tokens is not None and prompt_tokens + budget > window:
            # vLLM wrote at most what the window left; in-process, the prompt's end makes room
            try:
                return self._generate_from_end(prompt, budget, chat, TOO_LITTLE_ROOM)
            except _NoTokenize:
                return text  # the server's shorter generation stands
        return text

    def _generate_whole(self, prompt: str, budget: int, chat: bool) -> tuple[str, int | None]:
        """The generation for the whole prompt, and the prompt's length in tokens where the server
        says (raises ``_ClientError``)."""
        request: dict[str, Any] = {"model": self.name, "max_tokens": budget}
        if chat and self._chat:
            try:
                messages = [{"role": "user", "content": prompt}]
                reply = self._complete(
                    {**request, "messages": messages}, "/chat/completions", raw_errors=True
                )
                content = reply["choices"][0]["message"]["content"]
                if content is not None and not isinstance(content, str):
                    raise TypeError(content)
                return content or "", _prompt_tokens(reply)
            except _ClientError as exc:
                if exc.status != 400 or "template" not in exc.message.lower():
                    raise
                with self._lock:
                    self._chat = False  # a base model without a chat template: raw text, as in-process
            except (KeyError, IndexError, TypeError):
                raise self._shape_error(reply) from None
        reply = self._complete({**request, "prompt": self._prompt(prompt)}, raw_errors=True)
        return self._text(reply), _prompt_tokens(reply)

    def _generate_from_end(self, prompt: str, budget: int, chat: bool, refused: str) -> str:
        """The generation for the prompt's last tokens, as many as leave ``budget`` new ones in the
        window (as in-process), sent as token ids (the chat template applied by ``/tokenize``).
        Without ``/tokenize``, ``_NoTokenize`` is raised, saying ``refused``."""
        body = self._chat_body(prompt) if chat and self._chat else self._text_body(prompt)
        tokens, window = self._tokenize(body, refused)
        # as in-process: a text less an appended end (``_prompt``), a chat prompt's reasoning closed
        tokens = without_end(tokens, self._appended) if "prompt" in body else tokens + self._close
        budget = min(budget, window - 1)  # where only /tokenize told the window
        if budget <= 0:
            return ""
        cut = tokens[-max(1, window - budget) :]
        return self._text(self._complete({"model": self.name, "max_tokens": budget, "prompt": cut}))

    def _chat_body(self, prompt: str) -> dict[str, Any]:
        """``/tokenize``'s request for the chat template's text, its special tokens included, as
        in-process, and with the variables the chat request is rendered with."""
        messages = [{"role": "user", "content": prompt}]
        body = {"model": self.name, "messages": messages, "add_generation_prompt": True}
        extras = CHAT_EXTRAS if "template" not in self._refused else {}
        return {**body, "add_special_tokens": False, **extras}

    def _text_body(self, prompt: str, special: bool = True) -> dict[str, Any]:
        """``/tokenize``'s request for a text, by default as ``/completions`` reads it (its special
        tokens included)."""
        return {"model": self.name, "prompt": prompt, "add_special_tokens": special}

    def _text(self, reply: Any) -> str:
        try:
            text = reply["choices"][0]["text"]
        except (KeyError, IndexError, TypeError):
            raise self._shape_error(reply) from None
        if text is not None and not isinstance(text, str):
            raise self._shape_error(reply)
        return text or ""

    def _each(
        self,
        items: Sequence[Any],
        one: Callable[[Any], Any],
        on_progress: Callable[[int], None] | None = None,
        on_done: Callable[[int, Any], None] | None = None,
    ) -> list[Any]:
        """``one`` over ``items``, ``CONCURRENCY`` at a time, in order; the first error stops the rest.
        ``on_done(position, result)`` hears each result as it comes, in this thread."""
        if not items:
            return []
        pool = ThreadPoolExecutor(max_workers=min(CONCURRENCY, len(items)))
        futures = [pool.submit(one, item) for item in items]
        position = {future: index for index, future in enumerate(futures)}
        pending: set[Future[Any]] = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                failed = [future for future in done if future.exception() is not None]
                for future in sorted(set(done) - set(failed), key=position.__getitem__):
                    if on_done is not None:  # what came back is handed on, even beside a failure
                        on_done(position[future], future.result())
                for future in failed:
                    future.result()  # raises the first failure
                if on_progress is not None:
                    on_progress(len(futures) - len(pending))  # raises when the audit is cancelled
        except BaseException:
            # Stop now: requests not sent are dropped, those in flight end on their own.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return [future.result() for future in futures]

    def _served_models(self) -> list[dict[str, Any]]:
        """The model list, the first request: a reply that is no OpenAI API's (not JSON, a 404,
        another shape) means a wrong address, bad input, where a server that can't be reached may
        only be down."""
        request = urllib.request.Request(self.endpoint.base_url + "/models", headers=self._headers())
        try:
            reply = self._request(request, LIST_TIMEOUT_S)
        except _NotAnAPI as exc:
            raise InputError(str(exc)) from None
        except _ClientError as exc:
            raise (InputError(str(exc.failure)) if exc.status == 404 else exc.failure) from None
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) and item.get("id") for item in data):
            raise InputError(str(self._shape_error(reply)))
        return data

    def _choose(self, listed: list[dict[str, Any]]) -> str:
        names = [str(item["id"]) for item in listed]
        if not names:
            raise ModelLoadError(
                f"The server at {self.endpoint.base_url} lists no models (GET /models): is a model "
                "loaded? Start the server with the model to audit, e.g. `vllm serve MODEL`."
            )
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

    def _no_prompt_logprobs(self) -> ModelLoadError:
        return ModelLoadError(
            f"The server at {self.endpoint.base_url} does not return a prompt's own token log-probs "
            "(echo with logprobs on /v1/completions), which every likelihood test needs; serve the "
            "model with vLLM to run them."
        )

    def _fingerprint(self) -> str:
        """The identity from the probe's numbers, after checking that they are read where they stand.

        A server without usable prompt log-probs is identified by its greedy continuation of the
        probe instead, and can still run the tests that only generate; scoring is refused."""
        try:
            text, probe = self._echo(PROBE)
        except _Refused:
            self.cannot_score = f"the server gives no token log-probs for a prompt; {SERVED_WITH_LOGPROBS}"
            continuation = self._generate_one(PROBE, 32, chat=False)
            return self._identity_of(["generated", continuation])
        rounded = [
            None if v is None else round(self._logprob(v, probe), PROBE_DECIMALS) + 0.0
            for v in probe["token_logprobs"]
        ]
        greedy = text[len(PROBE) :] if text.startswith(PROBE) else ""
        continued = self._echo(PROBE + greedy)[1] if greedy else None
        try:
            late = reads_late(probe, continued, greedy)
        except (TypeError, ValueError):  # top log-probs that are no numbers, tokens no text
            raise self._shape_error(probe) from None
        if late:
            self.cannot_score = (
                f"the server reads each token's log-prob one position late; {SERVED_WITH_LOGPROBS}"
            )
        return self._identity_of([probe["tokens"], rounded])

    def _identity_of(self, numbers: list[Any]) -> str:
        digest = hashlib.sha256(json.dumps([self._where, numbers]).encode("utf-8")).hexdigest()
        return f"openai:{digest[:24]}"

    def _echo(self, prompt: str) -> tuple[str, dict[str, list[Any]]]:
        """The echoed text (prompt and one greedy token) and the prompt's own tokens, log-probs and
        top log-probs."""
        try:
            reply = self._complete(self._echo_request(prompt), raw_errors=True)
        except _ClientError as exc:
            if exc.status in (400, 422):  # echo or logprobs refused
                raise _Refused from None
            raise exc.failure from None
        fields = self._prompt_part(reply, ("tokens", "token_logprobs", "top_logprobs"))
        return str(reply["choices"][0].get("text") or ""), fields

    def _prompt_part(self, reply: Any, keys: tuple[str, ...]) -> dict[str, list[Any]]:
        """The prompt's own entries (the first ``usage.prompt_tokens``) of an echo reply's log-prob
        lists; :class:`_Refused` where one is missing or short."""
        try:
            logprobs = reply["choices"][0].get("logprobs") or {}
            n = int(reply["usage"]["prompt_tokens"])
            fields = {key: logprobs.get(key) for key in keys}
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise self._shape_error(reply) from None
        lists = {key: value for key, value in fields.items() if isinstance(value, list) and len(value) >= n}
        if len(lists) < len(fields):
            raise _Refused
        return {key: value[:n] for key, value in lists.items()}

    # -- HTTP ---------------------------------------------------------------------------------------

    def _complete(self, body: dict[str, Any], path: str = "/completions", raw_errors: bool = False) -> Any:
        """A greedy completion request; the fields of vLLM and llama.cpp (the penalties, the chat
        template's variables) go once the server refuses them."""
        wanted = {"penalties", "template"} if path == "/chat/completions" else {"penalties"}
        groups = {name: EXTRA_FIELDS[name] for name in sorted(wanted - self._refused)}
        extras = {field: value for fields in groups.values() for field, value in fields.items()}
        try:
            return self._post(path, {**body, **GREEDY, **extras}, raw_errors=True)
        except _ClientError as exc:
            named = {name for name, fields in groups.items() if any(field in exc.message for field in fields)}
            if groups and exc.status in (400, 422) and (named or "extra" in exc.message.lower()):
                # A strict server: the groups it named, else the template's variables first (a
                # chat request), then the penalties if it refuses again.
                unnamed = {"template"} if "template" in groups else set(groups)
                with self._lock:
                    self._refused |= named or unnamed
                return self._complete(body, path, raw_errors)
            if raw_errors:
                raise
            raise exc.failure from None

    def _post(self, path: str, body: dict[str, Any], raw_errors: bool = False) -> Any:
        """POST to a path under the API root, or to a full URL."""
        data = json.dumps(body).encode("utf-8")
        headers = {**self._headers(), "Content-Type": "application/json"}
        url = path if "://" in path else self.endpoint.base_url + path
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
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

    def _request(self, request: urllib.request.Request, timeout: float = TIMEOUT_S) -> Any:
        where = f"{request.get_method()} {request.full_url}"
        for attempt in range(RETRIES + 1):
            try:
                with urllib.request.urlopen(
                    request, timeout=timeout
                ) as response:  # http/https only: parse_spec
                    raw = response.read(MAX_REPLY_BYTES + 1)
            except urllib.error.HTTPError as exc:
                if exc.code in RETRY_STATUS and attempt < RETRIES:
                    asked = _retry_after(exc)  # "Retry-After: 0" means now, not "back off"
                    time.sleep(0.5 * 2**attempt if asked is None else asked)
                    continue
                raise _ClientError(exc.code, _server_message(exc), where, self) from None
            except (TimeoutError, http.client.HTTPException, urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, TimeoutError):
                    kept = (
                        "What was computed is kept; the same command resumes."
                        if self._answered
                        else "Check that it answers (curl the model list), then run the command again."
                    )
                    raise RuntimeFailure(
                        f"{where} got no answer in {timeout:.0f} s: the server is stuck or far too "
                        f"busy. {kept}"
                    ) from None
                refused = isinstance(reason, ConnectionRefusedError)
                if attempt < RETRIES and (self._answered or not refused):
                    time.sleep(0.5 * 2**attempt)
                    continue
                if self._answered:
                    raise RuntimeFailure(
                        f"The server at {self.endpoint.base_url} stopped answering ({reason}). What "
                        "was computed is kept; the same command resumes once it is back."
                    ) from None
                raise ModelLoadError(
                    f"Can't reach the server at {self.endpoint.base_url} ({reason}). Start it (for "
                    "example `vllm serve MODEL`), or check the address and port."
                ) from None
            if len(raw) > MAX_REPLY_BYTES:
                raise _NotAnAPI(
                    f"{where} answered more than {MAX_REPLY_BYTES >> 20} MiB; is it an "
                    "OpenAI-compatible server?"
                )
            try:
                return json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise _NotAnAPI(
                    f"{where} did not answer JSON ({raw[:80]!r}...); is {self.endpoint.base_url} an "
                    "OpenAI-compatible API root (usually ending in /v1)?"
                ) from None
        raise AssertionError("unreachable")

    def _shape_error(self, reply: Any) -> RuntimeFailure:
        return RuntimeFailure(
            f"The server at {self.endpoint.base_url} answered in an unexpected shape "
            f"({json.dumps(reply)[:160]}...); contamcheck needs the OpenAI completions API."
        )


class _NotAnAPI(RuntimeFailure):
    """A reply that is not an API's: not JSON, or far too long."""


class _NoTokenize(RuntimeFailure):
    """The server has no ``/tokenize`` to cut a text with."""


class _Refused(Exception):
    """The server gives no log-probs for a prompt (it refused echo with logprobs, or left them out)."""


class _ClientError(Exception):
    """An HTTP error from the server, with the error to raise for it."""

    def __init__(self, status: int, message: str, where: str, model: ServerModel) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        base_url = model.endpoint.base_url
        too_long = any(words in message.lower() for words in ("context length", "context window", "too long"))
        self.too_long = status == 400 and too_long
        # a refused key, or a server busy past its retries: not a server without the endpoint
        self.stops_the_load = status in (401, 403) or status in RETRY_STATUS
        if status in (401, 403):
            if not model._api_key:
                fix = "Set CONTAMCHECK_API_KEY to its key (vLLM's --api-key)."
            else:
                where_from = f"in {model._key_variable}" if model._key_variable else "given"
                fix = f"The key {where_from} was refused: is it the server's (vLLM's --api-key)?"
            self.failure: Exception = ModelLoadError(
                f"The server at {base_url} refused the request (HTTP {status}: {message}). {fix}"
            )
        elif status == 400 and too_long:
            window = f" of {model.context_length} tokens" if model.context_length else ""
            self.failure = RuntimeFailure(
                f"A text is too long for the server's context window{window} ({message}). Serve the "
                "model with a longer one (vLLM: --max-model-len), or leave the longest questions out."
            )
        elif status == 404:
            self.failure = ModelLoadError(
                f"{where} was not found (HTTP 404: {message}). Give the server's API root, usually "
                "ending in /v1; contamcheck needs its /models and /completions endpoints."
            )
        elif status in RETRY_STATUS:
            self.failure = RuntimeFailure(
                f"{where} failed (HTTP {status}: {message}), asked {RETRIES + 1} times. What was "
                "computed is kept; the same command resumes once the server can answer."
            )
        else:
            self.failure = RuntimeFailure(f"{where} failed (HTTP {status}): {message}")


def _prompt_tokens(reply: Any) -> int | None:
    """The prompt's length in tokens, from a reply's usage, where it says."""
    try:
        count = reply["usage"]["prompt_tokens"]
    except (KeyError, TypeError):
        return None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    """The wait a busy server asks for (seconds), capped."""
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(error.headers.get("Retry-After", ""))))
    except (TypeError, ValueError):
        return None


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


def alignment_counts(probe: dict[str, list[Any]]) -> tuple[int, int]:
    """At how many of the probe's positions the server's top choice is the token there, and at how
    many it is the next token (the prediction after the token: log-probs read a position late)."""
    tokens, tops = probe["tokens"], probe["top_logprobs"]
    best = [max(top, key=lambda k: top[k]) if isinstance(top, dict) and top else None for top in tops]
    here = sum(best[i] == tokens[i] for i in range(1, len(tokens)))
    late = sum(best[i] == tokens[i + 1] for i in range(1, len(tokens) - 1))
    return here, late


def reads_late(
    probe: dict[str, list[Any]],
    continued: dict[str, list[Any]] | None = None,
    greedy: str = "",
) -> bool:
    """Whether the server reads each log-prob one position late, on two signs.

    ``probe`` is the echo of the probe text: its tokens and, at each, the server's top choice. Read
    where each token stands, the top choice at a token is often that very token; read a position
    late (the prediction after the token: llama-cpp-python 0.3's server, with echo), it is often the
    *next* token (:func:`alignment_counts`). Late is called where the second count is at least 3 and
    over twice the first. ``continued`` is the echo of the probe followed by ``greedy``, the
    server's own greedy continuation of it: there ``greedy`` must be the top choice at its own
    position, to within ``ALIGNMENT_TOLERANCE``. Where neither sign can be read (a short probe,
    another tokenization of the continuation), it is not called late.
    """
    here, late = alignment_counts(probe)
    if late >= 3 and late > 2 * here:
        return True
    if continued is None or not continued["tokens"] or continued["tokens"][-1] != greedy:
        return False
    value, top = continued["token_logprobs"][-1], continued["top_logprobs"][-1]
    if value is None or not isinstance(top, dict) or not top:
        return False
    return float(value) < max(float(v) for v in top.values()) - ALIGNMENT_TOLERANCE


def describe(spec: str) -> tuple[ModelDescription, ServerModel]:
    """Identify the served model: asking the server is cheap, so identifying it connects."""
    model = ServerModel(parse_spec(spec))
    description = ModelDescription(
        f"{model.name} at {model.endpoint.base_url}",
        model.identity,
        model.settings(),
        cannot_score=model.cannot_score,
        top_only=True,
    )
    return description, model

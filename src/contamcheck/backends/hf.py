"""The default backend: a causal language model run in-process by transformers.

MODEL may be a local folder (config.json, weights, tokenizer), a ``.gguf`` file (dequantised by
transformers through ``gguf_file=``), or a Hugging Face Hub id. ``trust_remote_code`` stays off
unless asked for.

Scoring tokenises each text with the tokenizer's own special tokens (a beginning-of-sequence token
where the tokenizer adds one, as Llama-style tokenizers do) and scores every token that has a
context, so the first token of a GPT-2-style text is unscored, exactly as in the reference
implementations of Min-K% and Min-K%++. The full next-token distribution is reduced to its mean and
standard deviation of log p inside the forward pass, in fp32, a slice of positions at a time, so no
[tokens x vocabulary] tensor outlives its slice.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import importlib.util
import inspect
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from .. import hub
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

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.json",
    "spiece.model",
    "vocab.txt",
    "tokenizer_config.json",
)
LOGIT_BYTES_BUDGET = 96 * 2**20  # the [tokens x vocab] logits of one forward pass
REDUCE_FLOATS = 2**19  # positions x vocab reduced at once: 2 MiB of fp32, under memory.LOW_MEMORY_THRESHOLD
CACHE_BYTES_BUDGET = 256 * 2**20  # the key/value cache of one generation batch
STALE_STAGING_S = 3600  # a half-made converted copy this old is a killed process's
SHARED_PREFIX_MIN = 16  # tokens a generation batch's prompts must share before we prefill them once
FAMILY_TOKENS = 32  # prompts whose first this-many tokens agree are batched together
_LOADING = threading.Lock()  # HFModel.load: one at a time in a process


@dataclass(frozen=True)
class ModelSource:
    """Where a model lives: a folder, a GGUF file in a folder, or a Hub id."""

    kind: str  # "folder", "gguf" or "hub"
    location: str  # folder path, folder of the GGUF file, or Hub id
    gguf_file: str | None = None
    display_name: str | None = None  # how the user named it, when that is clearer than the path

    @property
    def display(self) -> str:
        if self.display_name:
            return self.display_name
        if self.kind == "gguf":
            return str(Path(self.location) / str(self.gguf_file))
        return self.location


def resolve_source(spec: str) -> ModelSource:
    """Decide what kind of model ``spec`` names, with a clear error for anything else."""
    if spec.startswith("pkg:"):
        from .packaged import resolve_packaged

        packaged = resolve_packaged(spec)
        return ModelSource("gguf", str(packaged.parent), packaged.name, display_name=spec)
    path = Path(spec).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise InputError(
                f"Model {spec!r} is a file but not a .gguf file. Pass a model folder (with config.json), "
                "a .gguf file, or a Hugging Face Hub id."
            )
        _check_gguf(path, spec)
        return ModelSource("gguf", str(path.resolve().parent), path.name)
    if path.is_dir():
        if not (path / "config.json").is_file():
            ggufs = sorted(path.glob("*.gguf"))
            if len(ggufs) == 1:
                _check_gguf(ggufs[0], str(ggufs[0]))
                return ModelSource("gguf", str(path.resolve()), ggufs[0].name)
            raise InputError(
                f"Model folder {spec!r} has no config.json, so it is not a transformers model folder. "
                "Point at the folder holding config.json, the weights and the tokenizer, or at a .gguf file."
            )
        if not any(p.suffix in WEIGHT_SUFFIXES for p in path.iterdir()):
            raise InputError(
                f"Model folder {spec!r} has a config.json but no weights (*.safetensors or *.bin). "
                "Copy the weight files there, or point at the complete folder."
            )
        if not any((path / name).is_file() for name in TOKENIZER_FILES):
            raise InputError(
                f"Model folder {spec!r} has no tokenizer files ({', '.join(TOKENIZER_FILES[:2])}, ...). "
                "Copy the tokenizer of the model there (tokenizer.save_pretrained(folder))."
            )
        return ModelSource("folder", str(path.resolve()))
    looks_like_path = (
        spec.startswith((".", "/", "~"))
        or spec.endswith((".gguf", "/"))
        or spec.count("/") > 1
        or "\\" in spec
    )
    if looks_like_path:
        raise InputError(f"Model path {spec!r} does not exist.")
    if not HUB_ID.match(spec):
        raise InputError(
            f"Model {spec!r} is neither an existing folder or .gguf file nor a Hugging Face Hub id "
            "(like 'HuggingFaceTB/SmolLM2-135M')."
        )
    return ModelSource("hub", spec)


def _check_gguf(path: Path, spec: str) -> None:
    """A .gguf file starts with "GGUF": anything else is said before any work (a reference's too,
    which is loaded only after the tested model's), not when it is loaded."""
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as exc:
        raise InputError(f"Can't read the model file {spec!r}: {exc.strerror or exc}.") from None
    if magic != b"GGUF":
        raise InputError(
            f"{spec!r} is not a GGUF model file (it does not start with the GGUF magic bytes). Pass a "
            ".gguf model, a model folder or a Hub id."
        )


def folder_hint(spec: str) -> str:
    """For a Hub id that failed: a folder here named like its organisation suggests a mistyped path."""
    organisation = spec.split("/")[0]
    if "/" not in spec or not Path(organisation).expanduser().is_dir():
        return ""
    return f" (There is a folder {organisation!r} here but no {spec!r}: if you meant a path, check it.)"


def describe(spec: str, options: Any, digest: Callable[[Path], str]) -> ModelDescription:
    """Identify a model without loading it: hashes of its files, or its cached Hub revision."""
    source = resolve_source(spec)
    device = pick_device(options.device)
    settings = {"backend": "hf", "dtype": dtype_choice(options.dtype, device), "device": device}
    if source.kind == "gguf":
        path = Path(source.location) / str(source.gguf_file)
        return ModelDescription(source.display, f"gguf:{digest(path)}", settings, path.stat().st_size)
    if source.kind == "folder":
        folder = Path(source.location)
        files = sorted(
            p
            for p in folder.iterdir()
            if p.is_file()
            and (p.suffix in WEIGHT_SUFFIXES or p.name in TOKENIZER_FILES or p.name == "config.json")
        )
        combined = hashlib.sha256()
        for file in files:
            combined.update(f"{file.name}:{digest(file)}\n".encode())
        weights = sum(p.stat().st_size for p in files if p.suffix in WEIGHT_SUFFIXES)
        return ModelDescription(source.display, f"folder:{combined.hexdigest()}", settings, weights)
    revision = cached_revision(spec)
    return ModelDescription(spec, f"hub:{spec}@{revision}" if revision else None, settings)


def cached_revision(repo_id: str) -> str | None:
    """The commit of ``repo_id`` in the local Hugging Face cache, if it was downloaded before."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json")
    if isinstance(found, str):
        return Path(found).parent.name
    return None


def dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def torch_is_cpu_only() -> bool:
    """Whether the installed torch is a build for the CPU alone, told without importing it.

    A warm audit only describes the model (for the cache key), and importing torch to ask for a GPU
    took seconds of it (docs/PERFORMANCE.md, "a slower day"). A build with neither
    CUDA nor ROCm can't see one; anything else (such a build, macOS with MPS, torch already
    imported) is asked the usual way, so the answer is always torch's own.
    """
    if "torch" in sys.modules or sys.platform == "darwin":
        return False
    try:
        spec = importlib.util.find_spec("torch")
        folders = list(spec.submodule_search_locations or []) if spec else []
        text = (Path(folders[0]) / "version.py").read_text(encoding="utf-8") if folders else ""
    except (ImportError, OSError, ValueError):
        return False
    return all(re.search(rf"^{name}\b.*=\s*None\s*$", text, re.MULTILINE) for name in ("cuda", "hip"))


def pick_device(requested: str) -> str:
    if requested == "auto" and torch_is_cpu_only():
        return "cpu"
    import torch

    if requested != "auto":
        if requested == "cuda" and not torch.cuda.is_available():
            raise InputError("--device cuda was asked for, but torch sees no CUDA GPU. Use --device cpu.")
        if requested == "mps" and not torch.backends.mps.is_available():
            raise InputError(
                "--device mps was asked for, but this torch has no MPS support. Use --device cpu."
            )
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def dtype_choice(requested: str, device: str) -> str:
    """The dtype's name; torch is asked only on CUDA (does the GPU support bf16?)."""
    if requested != "auto":
        return requested
    if device == "cuda":
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    # On CPU, fp32 until measurements show bf16 keeps the paired statistics (docs/PERFORMANCE.md).
    return "float32"


def pick_dtype(requested: str, device: str) -> Any:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[
        dtype_choice(requested, device)
    ]


class HFModel:
    """A transformers causal LM. Implements :class:`~contamcheck.backends.base.LanguageModel`."""

    def __init__(self, model: Any, tokenizer: Any, name: str, identity: str, device: str, dtype: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.identity = identity
        self.device = device
        self.dtype = dtype
        self.notes: list[str] = []  # for the report's warnings (a converted copy that could not be kept)
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])
        self.context_length = _context_length(model.config, tokenizer)
        self.attention_window = _attention_window(model.config)
        # A token spans no more characters than the vocabulary's longest entry (unless the tokenizer
        # folds text first: see _token_ids), so a text cut after (window + 1) times that many
        # tokenizes to the same first window + 1 tokens, and a 10 MB question is not read whole
        # (bench/long_texts.py).
        try:
            longest = max((len(token) for token in tokenizer.get_vocab()), default=0)
        except NotImplementedError:  # a tokenizer of the model's own code may not list its words
            longest = 0
        self.char_limit = (self.context_length + 1) * longest if self.context_length and longest else None
        if tokenizer.pad_token_id is None:
            # Padding is masked out; any id works, and end-of-sequence is the usual choice.
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.convert_ids_to_tokens(0)
        self.token_budget = max(64, LOGIT_BYTES_BUDGET // (4 * self.vocab_size))
        element = torch_element_size(dtype)
        self.cache_token_budget = max(
            256, CACHE_BYTES_BUDGET // (_cache_floats_per_token(model.config) * element)
        )
        accepts = inspect.signature(model.forward).parameters
        self._prunable = "position_ids" in accepts and "logits_to_keep" in accepts
        # transformers renamed past_key_values to cache (5.x); older releases know only the former
        self._cache_argument = "cache" if "cache" in accepts else "past_key_values"
        self._preallocate = True  # write the key/value cache in place (kv_cache.py); off only to compare
        self._share_prefix = True  # prefill a batch's common prompt beginning once; off only to compare
        self._by_parts = True  # a long text's logits a few positions at a time; off only to compare
        self.stop_ids = _stop_ids(model, tokenizer)
        self._appended = _appended_end(tokenizer, self.stop_ids)

    @classmethod
    def load(cls, spec: str, **options: Any) -> HFModel:
        """Load ``spec`` (a Hub id, folder or GGUF file; ``options`` as :meth:`_load`'s). One load
        at a time in a process: transformers' lazy imports and ``from_pretrained`` are not safe from
        two threads at once (measured: two ``audit()`` calls in threads failed with "no attribute
        AutoConfig" or a meta-tensor error), and two conversions of one GGUF would share a folder."""
        with _LOADING:
            return cls._load(spec, **options)

    @classmethod
    def _load(
        cls,
        spec: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        trust_remote_code: bool = False,
        device_map: str | None = None,
        identity: str | None = None,
        converted_dir: Path | None = None,
        threads: int | None = None,
    ) -> HFModel:
        source = resolve_source(spec)
        name = source.display if source.kind != "hub" else spec
        converted = converted_copy(source, identity, converted_dir)
        if converted is not None and (converted / "config.json").is_file():
            # A GGUF converted before: the same fp32 weights and tokenizer, loaded in a second.
            source = ModelSource("folder", str(converted), display_name=name)
        # Before torch is imported: offline, a Hub model fails at once, without torch's seconds.
        if source.kind == "hub" and not hub.offline_mode() and not hub.hub_reachable():
            raise ModelLoadError(
                hub.unreachable_message(
                    f"the model {spec!r}",
                    "Download it where you have a network (e.g. `hf download "
                    f"{spec} --local-dir DIR`) and pass the folder, or pass a local .gguf file.",
                )
                + folder_hint(spec)
            )
        import torch
        import transformers

        if threads:
            torch.set_num_threads(threads)

        chosen_device = pick_device(device)
        torch_dtype = pick_dtype(dtype, chosen_device)
        common: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        if source.gguf_file:
            common["gguf_file"] = source.gguf_file
        try:
            with _quiet_transformers():
                config = transformers.AutoConfig.from_pretrained(source.location, **common)
                _require_causal_lm(config, spec)
                tokenizer = transformers.AutoTokenizer.from_pretrained(source.location, **common)
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    source.location,
                    dtype=torch_dtype,
                    device_map=device_map,
                    **common,
                )
        except (InputError, ModelLoadError):
            raise
        except (MemoryError, torch.OutOfMemoryError):
            raise RuntimeFailure(
                f"Out of memory while loading {spec!r}. "
                "Try a smaller --dtype (bfloat16) or --device-map auto."
            ) from None
        except Exception as exc:  # transformers and huggingface_hub raise many types for one cause
            raise _explain_load_failure(spec, source, exc) from None
        if device_map is None:
            model = cast(Any, model).to(torch.device(chosen_device))
        model.eval()
        unsaved = None
        if converted is not None and source.kind == "gguf":
            unsaved = _save_converted(model, tokenizer, converted)
        if identity is None:
            revision = getattr(config, "_commit_hash", None)
            identity = f"{name}@{revision}" if revision else name
        loaded = cls(model, tokenizer, name, identity, chosen_device, torch_dtype)
        loaded.notes = [unsaved] if unsaved else []
        return loaded

    # -- the protocol -----------------------------------------------------------------------

    def num_parameters(self) -> int | None:
        return int(self.model.num_parameters())

    def settings(self) -> dict[str, str]:
        return {"backend": "hf", "dtype": dtype_name(self.dtype), "device": self.device}

    def score(self, texts: Sequence[str]) -> list[TokenStats]:
        import torch

        encoded = [self._token_ids(text, True, keep_end=False) for text in texts]
        truncated = [len(ids) > self.context_length for ids in encoded] if self.context_length else []
        if self.context_length:
            encoded = [ids[: self.context_length] for ids in encoded]
        results: list[TokenStats | None] = [None] * len(texts)
        for indices in self._token_batches([len(ids) for ids in encoded]):
            stats = self._score_batch([encoded[i] for i in indices], torch)
            for index, stat in zip(indices, stats, strict=True):
                results[index] = TokenStats(
                    stat.logprobs,
                    stat.mean,
                    stat.std,
                    truncated=bool(truncated and truncated[index]),
                )
        return [r for r in results if r is not None]

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
        import torch

        if max(max_new_tokens, default=0) <= 0:
            return ["" for _ in prompts]
        known = known or {}
        encoded = self._encode_prompts(prompts, chat)
        limits = [max(0, n) for n in max_new_tokens]
        if self.context_length:
            # keep the end of an over-long prompt, and a token of it where the budget fills the
            # window: positions past the window are none the model knows (GPT-2's table ends there)
            limits = [min(n, self.context_length - 1) for n in limits]
            encoded = [ids[n - self.context_length :] for ids, n in zip(encoded, limits, strict=True)]
        texts = ["" for _ in prompts]
        wanted = [i for i, n in enumerate(limits) if n > 0]
        finished = len(prompts) - len(wanted)
        # The groups are those of the whole batch whatever is known, so a group generated after a
        # stop has the very texts it would have had; a group known whole is not generated again.
        for group in self._generation_batches(wanted, encoded, limits):
            if all(index in known for index in group):
                part = {index: known[index] for index in group}
            else:
                rows = self._greedy(
                    [encoded[i] for i in group], [limits[i] for i in group], self.stop_ids, torch
                )
                part = {
                    index: self.tokenizer.decode(row, skip_special_tokens=True)
                    for index, row in zip(group, rows, strict=True)
                }
                if on_texts is not None:
                    on_texts(part)
            for index, text in part.items():
                texts[index] = text
            finished += len(group)
            if on_progress is not None:
                on_progress(finished)
        return texts

    def _generation_batches(
        self, indices: list[int], encoded: list[list[int]], limits: list[int]
    ) -> Iterator[list[int]]:
        """Groups whose key/value cache (prompt and new tokens) fits the budget, prompts that begin
        alike together (see ``_by_family``), and whose padded width, the longest prompt and the
        largest budget, fits the model's context: GPT-Neo's causal mask is a table as long as its
        context, indexed by cache slot, and two rows that each fit it alone can outgrow it together.

        A deterministic function of the texts, so a resumed audit generates in the same groups.
        """
        sizes = ((index, len(encoded[index]) + limits[index]) for index in _by_family(indices, encoded))
        groups = _fitting_groups(sizes, self.cache_token_budget)
        if not self.context_length:
            return groups
        return _cut_to_width(groups, [len(ids) for ids in encoded], limits, self.context_length)

    def _greedy(
        self, sequences: list[list[int]], limits: list[int], eos: int | Iterable[int] | None, torch: Any
    ) -> list[list[int]]:
        """Greedy decoding of left-padded prompts, dropping each row from the batch once it ends.

        The same tokens as ``generate`` with ``do_sample=False`` (a test checks this), but a row
        that reached an end-of-sequence token (``eos``: one, several or none) or its own token limit
        stops costing compute: ``generate`` keeps stepping every row until the longest is done.
        """
        stops = _stops(eos)
        if not self._prunable:
            return self._greedy_with_generate(sequences, limits, stops, torch)
        from .kv_cache import preallocate

        device = self._input_device
        produced: list[list[int]] = [[] for _ in sequences]
        active = list(range(len(sequences)))
        with torch.inference_mode():
            prefilled = self._prefill(sequences, torch, max(limits))
            if prefilled is None:  # a cache we can't shrink: the standard path
                return self._greedy_with_generate(sequences, limits, stops, torch)
            out, cache, mask, positions = prefilled
            if self._preallocate:
                preallocate(cache, mask.shape[-1] + max(limits))
            following = positions[:, -1:] + 1
            while True:
                chosen = self._greedy_choice(out.logits[:, -1])
                keep = []
                for slot, (row, token) in enumerate(zip(active, chosen.tolist(), strict=True)):
                    if token in stops:
                        continue
                    produced[row].append(token)
                    if len(produced[row]) < limits[row]:
                        keep.append(slot)
                if not keep:
                    break
                if len(keep) < len(active):
                    selected = torch.tensor(keep, device=device)
                    cache.batch_select_indices(selected)
                    mask, chosen, following = mask[selected], chosen[selected], following[selected]
                    active = [active[slot] for slot in keep]
                mask = torch.cat([mask, mask.new_ones((len(active), 1))], dim=-1)
                out = self.model(
                    input_ids=chosen[:, None],
                    attention_mask=mask,
                    position_ids=following,
                    use_cache=True,
                    **{self._cache_argument: cache},
                )
                following = following + 1
        return produced

    def _prefill(
        self, sequences: list[list[int]], torch: Any, new_tokens: int
    ) -> tuple[Any, Any, Any, Any] | None:
        """Run the prompts into a fresh cache: (output, cache, attention mask, positions).

        Prompts that begin alike (a chat template, an instruction) share their common beginning:
        it is run once, its cache copied to every row, and only the rest of each prompt is run,
        left-padded *after* the shared part (masked, with positions counted from the real tokens,
        so each row computes exactly what its unpadded prompt would). None when the model's cache
        can't drop rows.

        Not where the model has layers that see only a window of the last tokens (Gemma-2 and -3:
        512 in Gemma-3-270M; GPT-Neo's local layers: 256) or chunks of the text (Llama-4), and the
        batch could outgrow it: transformers counts such a window in cache slots, padding included,
        so a row with padding after its shared part would see fewer of its own tokens than alone
        (``bench/architectures.py``: a tiny Gemma-2 wrote other tokens for 6 of 12 prompts).
        Unshared, each prompt is padded before its first token: a window keeps each row's own
        tokens, and transformers offsets a row's chunks by its padding (read in its source, with
        torch 2.6 or later by its issue 40324; not run here: no Llama-4 among the tiny models).
        """
        device = self._input_device
        shared = _shared_length(sequences) if self._share_prefix else 0
        if self.attention_window and max(map(len, sequences)) + new_tokens > self.attention_window:
            shared = 0
        cache: Any = None
        if shared:
            head = torch.tensor([sequences[0][:shared]], device=device)
            first = self.model(
                input_ids=head,
                position_ids=torch.arange(shared, device=device)[None],
                use_cache=True,
                logits_to_keep=1,
            )
            cache = _cache_of(first)
            if not hasattr(cache, "batch_repeat_interleave"):
                shared, cache = 0, None
            else:
                cache.batch_repeat_interleave(len(sequences))
        pad = self.tokenizer.pad_token_id
        rest = [s[shared:] for s in sequences]
        width = max(len(s) for s in rest)
        ids = torch.tensor([[pad] * (width - len(s)) + s for s in rest], device=device)
        tail = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in rest], device=device)
        positions = shared + (tail.cumsum(-1) - 1).clamp_min(0)
        mask = torch.cat([tail.new_ones((len(rest), shared)), tail], dim=-1)
        extra = {} if cache is None else {self._cache_argument: cache}
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **extra,
        )
        cache = _cache_of(out)
        if not hasattr(cache, "batch_select_indices"):
            return None
        return out, cache, mask, positions

    def _greedy_with_generate(
        self, sequences: list[list[int]], limits: list[int], eos: int | Iterable[int] | None, torch: Any
    ) -> list[list[int]]:
        """The standard path, for models whose forward pass takes no position ids or logits_to_keep."""
        from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

        stops = _stops(eos)

        pad = self.tokenizer.pad_token_id
        width = max(len(s) for s in sequences)
        device = self._input_device
        ids = torch.tensor([[pad] * (width - len(s)) + s for s in sequences], device=device)
        mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in sequences], device=device)
        config = GenerationConfig(
            max_new_tokens=max(limits), do_sample=False, pad_token_id=pad, eos_token_id=sorted(stops) or None
        )
        model = self

        class Finite(LogitsProcessor):  # the pruned path's check of each step's choices
            def __call__(self, input_ids: Any, scores: Any) -> Any:
                model._greedy_choice(scores)
                return scores

        with torch.inference_mode(), _quiet_transformers():
            output = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                generation_config=config,
                logits_processor=LogitsProcessorList([Finite()]),
            )
        rows = []
        for row, limit in zip(output[:, width:].tolist(), limits, strict=True):
            row = row[:limit]
            rows.append(row[: next((i for i, token in enumerate(row) if token in stops), len(row))])
        return rows

    # -- internals -----------------------------------------------------------------------------

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def _input_device(self) -> Any:
        return self.model.get_input_embeddings().weight.device

    def _encode_prompts(self, prompts: Sequence[str], chat: bool) -> list[list[int]]:
        """The prompts' token ids as generation sees them (rendered, special tokens unless chat)."""
        use_special = not (chat and self.has_chat_template)
        close = self._reasoning_close() if not use_special else []
        # generation keeps an over-long prompt's end (the cut too), inside the chat template's words
        return [
            self._token_ids(p, use_special, keep_end=True, render=lambda t: self._render_prompt(t, chat))
            + close
            for p in prompts
        ]

    def _reasoning_close(self) -> list[int]:
        """The ids that close a reasoning block the chat template opens (``base.reasoning_close``),
        put after each rendered prompt, as the server puts them after ``/tokenize``'s ids."""
        rendered = self._encode(self._render_prompt("a", chat=True), special=False)
        opening, closing = (self._encode(text, special=False) for text in (REASONING_OPENS, REASONING_CLOSES))
        return reasoning_close(rendered, opening, closing)

    def _token_ids(
        self, text: str, special: bool, keep_end: bool, render: Callable[[str], str] = str
    ) -> list[int]:
        """``render(text)``'s token ids; a text far beyond the window is cut first (its start kept,
        or its end), where what is left still fills the window, as every cut of a tokenizer that
        does not fold text while reading it does (one that squeezes runs of spaces may not: then
        the whole text is read)."""
        limit = self.char_limit
        if limit is not None and self.context_length and len(text) > limit:
            part = text[-limit:] if keep_end else text[:limit]
            ids = self._encode(render(part), special)
            if len(ids) > self.context_length:
                return ids
        return self._encode(render(text), special)

    def _encode(self, text: str, special: bool) -> list[int]:
        """The text's ids, with the special tokens the tokenizer puts before it (a BOS) but without
        an end it appends (``_appended_end``): a tokenizer saved with ``add_eos_token`` (some
        fine-tunes are) would end every completion prompt with it, where the model starts a new
        document instead of going on, and would score it as part of each question. An appended
        token generation does not stop at stays (a model may need it to write at all)."""
        ids = list(self.tokenizer(text, add_special_tokens=special)["input_ids"])
        return without_end(ids, self._appended) if special else ids

    def _render_prompt(self, prompt: str, chat: bool) -> str:
        if not (chat and self.has_chat_template):
            return prompt
        return str(
            self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}],
                tokenize=False,
                add_generation_prompt=True,
                **CHAT_TEMPLATE_VARIABLES,
            )
        )

    def _token_batches(self, lengths: list[int]) -> Iterator[list[int]]:
        """Consecutive groups whose padded size fits the logits budget (one text at least)."""
        return _fitting_groups(enumerate(lengths), self.token_budget)

    def _score_batch(self, sequences: list[list[int]], torch: Any) -> list[TokenStats]:
        pad = self.tokenizer.pad_token_id
        width = max(len(s) for s in sequences)
        input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences], device=self._input_device)
        attention = torch.tensor(
            [[1] * len(s) + [0] * (width - len(s)) for s in sequences], device=self._input_device
        )
        with torch.inference_mode():
            by_parts = (
                self._logits_by_parts(input_ids, attention, torch) if width > self.token_budget else None
            )
            logits_of = by_parts or self._whole_logits(input_ids, attention)
            out = []
            for row, sequence in enumerate(sequences):
                scored = len(sequence) - 1
                if scored <= 0:
                    empty = np.zeros(0, dtype=np.float32)
                    out.append(TokenStats(empty, empty, empty))
                    continue
                targets = input_ids[row, 1 : scored + 1]
                realised, means, stds = [], [], []
                step = max(1, REDUCE_FLOATS // self.vocab_size)
                # by parts, the output layer over as many positions as the budget allows at once
                # (a few at a time would read Gemma-3's 670 MB output matrix again for each few)
                block = max(self.token_budget, step) if by_parts else scored
                for first in range(0, scored, block):
                    last = min(scored, first + block)
                    part = logits_of(row, first, last)
                    for start in range(first, last, step):
                        stop = min(last, start + step)
                        logp = torch.log_softmax(part[start - first : stop - first].float(), dim=-1)
                        realised.append(logp.gather(-1, targets[start:stop, None]).squeeze(-1))
                        # mean = sum p log p; second moment = sum p (log p)^2, from one product
                        weighted = logp.exp().mul_(logp)
                        mean = weighted.sum(-1)
                        second = weighted.mul_(logp).sum(-1)
                        means.append(mean)
                        stds.append((second - mean.square()).clamp_min(0).sqrt())
                logprobs = torch.cat(realised)
                if not bool(torch.isfinite(logprobs).all()):
                    raise self._not_numbers("log-probabilities")
                out.append(
                    TokenStats(
                        logprobs.cpu().numpy(),
                        torch.cat(means).cpu().numpy(),
                        torch.cat(stds).cpu().numpy(),
                    )
                )
        return out

    def _greedy_choice(self, scores: Any) -> Any:
        """Each row's highest-scoring token; a row whose choice is not finite stops the audit
        (argmax takes a NaN for the largest, so a row with one, or with +inf, has it there)."""
        chosen = scores.argmax(-1)
        if not bool(scores.gather(-1, chosen[:, None]).isfinite().all()):
            raise self._not_numbers("next-token scores")
        return chosen

    def _not_numbers(self, what: str) -> RuntimeFailure:
        """A model whose numbers overflow (float16, often) or whose weights are broken gives NaN:
        said at once, not passed on as texts with no scored token and empty generations."""
        dtype = dtype_name(self.dtype)
        fix = (
            "its weights (or its code) are broken: check them"
            if dtype == "float32"
            else "try --dtype float32 (some models overflow in float16), else check its weights"
        )
        return RuntimeFailure(
            f"The model {self.name} gave NaN or infinite {what} in {dtype} on {self.device}: {fix}."
        )

    def _whole_logits(self, input_ids: Any, attention: Any) -> Callable[[int, int, int], Any]:
        logits = self.model(input_ids=input_ids, attention_mask=attention).logits
        return lambda row, start, stop: logits[row, start:stop]

    def _logits_by_parts(
        self, input_ids: Any, attention: Any, torch: Any
    ) -> Callable[[int, int, int], Any] | None:
        """For a text whose [tokens x vocab] logits exceed the budget (8,192 tokens of SmolLM2: 1.6 GB),
        the final hidden states once and the output layer a few positions at a time; None where the
        model's own logits are not the output layer's (a soft cap, a scale: told by the last position,
        which the model computes itself) or can't be had so."""
        if not self._by_parts or not self._prunable:
            return None
        head = self.model.get_output_embeddings()
        try:
            decoder = self.model.get_decoder()
        except (AttributeError, NotImplementedError):
            decoder = None
        if head is None or decoder is None or decoder is self.model:
            self._by_parts = False
            return None
        captured: list[Any] = []
        hook = decoder.register_forward_hook(lambda module, args, output: captured.append(output[0]))
        try:
            last = self.model(input_ids=input_ids, attention_mask=attention, logits_to_keep=1).logits
        finally:
            hook.remove()
        if len(captured) != 1 or tuple(captured[0].shape[:2]) != tuple(input_ids.shape):
            self._by_parts = False
            return None
        hidden = captured[0]
        if not torch.allclose(head(hidden[:, -1:]).float(), last.float(), rtol=1e-4, atol=1e-4):
            self._by_parts = False  # the model changes its logits after the output layer
            return None
        return lambda row, start, stop: head(hidden[row, start:stop])


def _fitting_groups(sizes: Iterable[tuple[int, int]], budget: int) -> Iterator[list[int]]:
    """Consecutive groups of (index, length) whose padded size, longest x count, fits ``budget``.

    A group holds one item at least, however long.
    """
    group: list[int] = []
    longest = 0
    for index, length in sizes:
        if group and max(longest, length) * (len(group) + 1) > budget:
            yield group
            group, longest = [], 0
        group.append(index)
        longest = max(longest, length)
    if group:
        yield group


def _cut_to_width(
    groups: Iterable[list[int]], lengths: list[int], limits: list[int], width: int
) -> Iterator[list[int]]:
    """Each group cut, in order, where its longest prompt and largest budget would pass ``width``
    (a group holds one item at least)."""
    for group in groups:
        part: list[int] = []
        longest = budget = 0
        for index in group:
            if part and max(longest, lengths[index]) + max(budget, limits[index]) > width:
                yield part
                part, longest, budget = [], 0, 0
            part.append(index)
            longest, budget = max(longest, lengths[index]), max(budget, limits[index])
        if part:
            yield part


def _cache_of(output: Any) -> Any:
    return getattr(output, "cache", None) or getattr(output, "past_key_values", None)


def _shared_length(sequences: list[list[int]]) -> int:
    """Tokens every prompt begins with, leaving each at least one of its own; 0 when too few to matter."""
    if len(sequences) < 2:
        return 0
    shortest = min(len(s) for s in sequences)
    columns = zip(*sequences, strict=False)  # as far as the shortest goes
    common = next((i for i, column in enumerate(columns) if len(set(column)) > 1), shortest)
    shared = min(common, shortest - 1)
    return shared if shared >= SHARED_PREFIX_MIN else 0


def _by_family(indices: list[int], encoded: list[list[int]]) -> list[int]:
    """Prompts that begin alike (their first FAMILY_TOKENS tokens) together, each family by length.

    Generation batches are consecutive runs of this order, so a batch of guided prompts shares its
    chat template and instruction. Prompts that begin like no other keep their place, by length.
    """
    heads = Counter(tuple(encoded[i][:FAMILY_TOKENS]) for i in indices)

    def family(index: int) -> tuple[tuple[int, ...], int, int]:
        head = tuple(encoded[index][:FAMILY_TOKENS])
        shared = len(head) == FAMILY_TOKENS and heads[head] > 1
        return (head if shared else (), len(encoded[index]), index)

    return sorted(indices, key=family)


def converted_copy(source: ModelSource, identity: str | None, converted_dir: Path | None) -> Path | None:
    """Where a GGUF model's dequantised copy lives (dequantising takes most of its load time)."""
    if source.kind != "gguf" or converted_dir is None or identity is None:
        return None
    # v2: tied embeddings under the input embedding's name (copies made before are made again)
    return converted_dir / f"v2-{hashlib.sha256(identity.encode()).hexdigest()[:24]}"


def _save_converted(model: Any, tokenizer: Any, target: Path) -> str | None:
    """Save a dequantised GGUF model beside the cache, atomically (a folder renamed into place);
    where it can't be (a full disk), what the report warns, and the audit goes on without it.

    transformers marks a model loaded from GGUF as quantised and won't ``save_pretrained`` it, but
    its weights are plain tensors by then: we write them with safetensors, with the config and the
    tokenizer, as a standard model folder that a serving engine (vLLM) also loads.
    """
    import shutil
    import tempfile

    from safetensors.torch import save_file

    staging: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_outdated_copies(target.parent)
        prefix = f".staging-{os.getpid()}@{socket.gethostname()}-"  # whose it is, for _remove_outdated_copies
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=prefix))
        with _quiet_transformers():
            save_file(_unshared_state(model), str(staging / "model.safetensors"), metadata={"format": "pt"})
            config = model.config.to_dict()
            config.pop("quantization_config", None)
            config["architectures"] = config.get("architectures") or [type(model).__name__]
            (staging / "config.json").write_text(json.dumps(config, indent=2, default=str), encoding="utf-8")
            tokenizer.save_pretrained(staging)
        staging.rename(target)
        _remove_outdated_copies(target.parent)
    except BaseException as exc:  # the copy only saves time: nothing about it may fail the audit
        if staging is not None:  # nor be left half-made, also when Ctrl-C stops it (514 MB for SmolLM2)
            shutil.rmtree(staging, ignore_errors=True)
        if not isinstance(exc, Exception):
            raise
        if (target / "config.json").is_file():  # another audit put the same copy in place first
            return None
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        full = isinstance(exc, OSError) and exc.errno == errno.ENOSPC
        return (
            f"The dequantised copy of the .gguf model could not be kept in {str(target.parent)!r} "
            f"({reason}), so the next audit converts it again"
            + ("; free space there to keep it." if full else ".")
        )
    return None


def _remove_outdated_copies(folder: Path) -> None:
    """Copies in the format before v2 (named by the bare digest) are never read again: 0.5 GB each;
    nor is a copy half-made by a process killed outright (SIGKILL: nothing could remove it). One
    made on this machine goes when its process is gone; one made elsewhere (a cache shared over the
    network, another container), or named before the maker was, an hour after it was started, far
    longer than a conversion takes (30-60 s for SmolLM2)."""
    import shutil

    for old in folder.iterdir():
        if re.fullmatch(r"[0-9a-f]{24}", old.name) and old.is_dir() and (old / "config.json").is_file():
            shutil.rmtree(old, ignore_errors=True)
        elif old.name.startswith(".staging-") and old.is_dir():
            maker = re.fullmatch(r"\.staging-(\d+)@(.+)-[a-z0-9_]+", old.name)
            if maker is not None and maker.group(2) == socket.gethostname():
                gone = not _alive(int(maker.group(1)))
            else:
                try:
                    gone = time.time() - old.stat().st_mtime > STALE_STAGING_S
                except OSError:  # removed meanwhile
                    continue
            if gone:
                shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one of another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def _unshared_state(model: Any) -> dict[str, Any]:
    """The model's tensors, each stored once: where names share one tensor (tied input and output
    embeddings), the input embedding's name is kept, as ``save_pretrained`` does; an engine that
    ties the output to the input embedding reads that name and skips the other."""
    state = model.state_dict()
    embedding = model.get_input_embeddings()
    preferred = {f"{name}.weight" for name, module in model.named_modules() if module is embedding}
    kept: dict[Any, str] = {}
    for name in sorted(state, key=lambda n: (n not in preferred, n)):
        tensor = state[name]
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        kept.setdefault(key, name)
    return {name: state[name].contiguous() for name in kept.values()}


def torch_element_size(dtype: Any) -> int:
    """Bytes per element of a torch dtype (4 where it can't be told)."""
    try:
        return int(dtype.itemsize)
    except AttributeError:
        return 4


def _stop_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """The tokens that end a generation: the tokenizer's end-of-text and those the model's
    generation config names, as transformers' ``generate`` stops (an instruct model's end of turn:
    Gemma's ``<end_of_turn>``, Phi-3's ``<|end|>``; without it a chat answer ran on past its turn)."""
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    return _stops([tokenizer.eos_token_id, *_stops(configured)])


def _stops(eos: int | Iterable[int] | None) -> frozenset[int]:
    """One end-of-sequence id, several, or none, as a set."""
    if eos is None:
        return frozenset()
    if isinstance(eos, int):
        return frozenset([eos])
    return frozenset(token for token in eos if isinstance(token, int))


def _appended_end(tokenizer: Any, stops: frozenset[int]) -> list[int]:
    """``[token]`` where the tokenizer appends one token to every text and generation stops at it
    (``stops``: its end-of-text, or an end the generation config names, as a server stops at
    them), else ``[]`` (for most: Llama's, Gemma's and GPT-2's add at most a beginning); told by a
    text with and without special tokens."""
    try:
        plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
        marked = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    except Exception:  # a tokenizer of a model's own code may refuse either: its ids stay as they are
        return []
    appended = appended_token(plain, marked)
    return appended if appended and appended[0] in stops else []


def _text_config(config: Any) -> Any:
    """The language model's config: its own, or a vision-language model's text part."""
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _cache_floats_per_token(config: Any) -> int:
    """Numbers the key/value cache keeps per token: layers x 2 x key/value heads x head size."""
    text = _text_config(config)

    def first(*names: str) -> int | None:
        for name in names:
            value = getattr(text, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return None

    layers = first("num_hidden_layers", "n_layer", "num_layers") or 32
    hidden = first("hidden_size", "n_embd", "d_model") or 4096
    heads = first("num_attention_heads", "n_head") or 32
    kv_heads = first("num_key_value_heads") or heads
    head_dim = first("head_dim") or max(1, hidden // heads)
    return layers * 2 * kv_heads * head_dim


def _attention_window(config: Any) -> int | None:
    """The fewest tokens any layer of the model attends to: a sliding window of the last ones, or
    an attention chunk; None where every layer sees the whole text. A window a config names but
    doesn't use costs no more than a long batch's beginning run once per prompt."""
    text = _text_config(config)
    sizes = [getattr(text, name, None) for name in ("sliding_window", "attention_chunk_size")]
    if "local" in (getattr(text, "attention_layers", None) or ()):  # GPT-Neo's local layers
        sizes.append(getattr(text, "window_size", None))
    return min((s for s in sizes if type(s) is int and s > 0), default=None)


def _context_length(config: Any, tokenizer: Any) -> int | None:
    # a vision-language model (Gemma-3 from 4B up) keeps its window in its language model's config
    text = _text_config(config)
    for attribute in (
        "max_position_embeddings",
        "n_positions",
        "max_sequence_length",
        "seq_length",
    ):
        value = getattr(config, attribute, None) or getattr(text, attribute, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < 10**7 else None


def _require_causal_lm(config: Any, spec: str) -> None:
    """Refuse encoders and encoder-decoders early, with a message that names what the model is."""
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING

    architectures = list(getattr(config, "architectures", None) or [])
    generative = any(
        a.endswith(("ForCausalLM", "LMHeadModel")) or "ForConditionalGeneration" in a for a in architectures
    )
    causal = (
        not getattr(config, "is_encoder_decoder", False)
        and (generative or not architectures)
        and (type(config) in MODEL_FOR_CAUSAL_LM_MAPPING or bool(getattr(config, "auto_map", None)))
    )
    if not causal:
        described = ", ".join(architectures) or config.model_type
        if generative and _text_config(config) is not config and not config.is_encoder_decoder:
            raise InputError(
                f"Model {spec!r} is a {described} ({config.model_type}), a model of images and text "
                "whose language model transformers can't load on its own as a causal LM. Serve it "
                "(vLLM serves many such models) and audit it as openai:URL, or audit its text-only "
                "release where there is one."
            )
        raise InputError(
            f"Model {spec!r} is a {described} ({config.model_type}), not a causal language model. "
            "contamcheck audits causal (decoder-only) LMs such as Llama, Qwen, GPT-2 or SmolLM."
        )


def _explain_load_failure(spec: str, source: ModelSource, exc: Exception) -> Exception:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    kind = type(exc).__name__
    if kind in {"RepositoryNotFoundError", "RevisionNotFoundError"}:
        return InputError(
            f"No model {spec!r} on the Hugging Face Hub (check the id, or log in for a private one)."
            + folder_hint(spec)
        )
    if kind == "GatedRepoError":
        return ModelLoadError(
            f"Model {spec!r} is gated: accept its licence on the Hub and run `hf auth login`."
        )
    if kind in {"LocalEntryNotFoundError", "OfflineModeIsEnabled"} or "offline" in text.lower():
        return ModelLoadError(
            f"Model {spec!r} is not in the local Hugging Face cache and the Hub is offline. "
            "Download it where you have a network and pass the folder." + folder_hint(spec)
        )
    if "tokenizer" in text.lower() or kind in {"TokenizerNotFound"}:
        return InputError(f"Model {source.display!r} has no usable tokenizer: {text}")
    if kind == "SafetensorError" or isinstance(exc, struct.error):
        return ModelLoadError(
            f"Can't load model {source.display!r}: its weights file looks corrupt or cut short ({text}). "
            "Download or copy it again."
        )
    # a tensor past the file's end: numpy's "cannot reshape array of size …" or "mmap length is
    # greater than file size" (a valid file of an architecture transformers lacks is a ValueError too)
    cut = any(words in text for words in ("cannot reshape", "mmap length", "buffer is smaller"))
    if source.kind == "gguf" and (isinstance(exc, EOFError) or (isinstance(exc, ValueError) and cut)):
        return ModelLoadError(
            f"Can't load model {source.display!r}: the .gguf file looks corrupt or cut short ({text}). "
            "Download or copy it again."
        )
    if isinstance(exc, KeyError):  # str() of a KeyError is the bare key: 'added_tokens'
        return ModelLoadError(
            f"Can't load model {source.display!r}: one of its files lacks the entry {text} (incomplete, or "
            "written for another model or library version). Download or copy the model's files again."
        )
    if isinstance(exc, OSError | ValueError | ImportError):
        return ModelLoadError(f"Can't load model {source.display!r}: {text}")
    return ModelLoadError(f"Can't load model {source.display!r} ({kind}): {text}")


class _quiet_transformers:
    """Silence transformers' advisory warnings and progress bars for the duration of a call."""

    def __enter__(self) -> None:
        from transformers.utils import logging as hf_logging

        self._verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        self._progress = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")
        # The GGUF converter draws its own tqdm bar, outside transformers' switch for bars.
        try:
            import transformers.modeling_gguf_pytorch_utils as gguf_utils
        except ImportError:
            self._gguf: Any = None
        else:
            self._gguf = gguf_utils
            self._tqdm = gguf_utils.tqdm
            gguf_utils.tqdm = functools.partial(self._tqdm, disable=True)

    def __exit__(self, *exc: Any) -> None:
        from transformers.utils import logging as hf_logging

        self._warnings.__exit__(*exc)
        if self._gguf is not None:
            self._gguf.tqdm = self._tqdm
        hf_logging.set_verbosity(self._verbosity)
        if self._progress:
            hf_logging.enable_progress_bar()


__all__ = ["HFModel", "ModelSource", "resolve_source"]

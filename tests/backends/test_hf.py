"""The transformers backend on tiny models built from a config (random weights, real tokenizer)."""

from __future__ import annotations

import errno
import importlib.machinery
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny import architecture_configs, tiny_llama, train_tokenizer

from contamcheck import AuditConfig, hub
from contamcheck.backends import ModelOptions, hf, load_model
from contamcheck.backends.hf import HFModel
from contamcheck.errors import InputError, ModelLoadError, RuntimeFailure

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TEXTS = [
    "A baker sells 48 loaves on Monday and 35 on Tuesday.",
    "How many minutes are there in 3.5 hours?",
    "def add(a, b):\n    return a + b\n",
]


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(TEXTS * 3, vocab_size=300)


def save_tiny(folder: Path, tokenizer, **config) -> Path:
    model = tiny_llama(tokenizer, seed=1)
    for key, value in config.items():
        setattr(model.config, key, value)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny(tokenizer, tmp_path_factory) -> HFModel:
    folder = save_tiny(tmp_path_factory.mktemp("hf") / "tiny", tokenizer)
    return HFModel.load(str(folder), device="cpu")


def test_token_statistics_match_a_plain_forward_pass(tiny):
    text = TEXTS[0]
    (stats,) = tiny.score([text])
    ids = tiny.tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        logp = torch.log_softmax(tiny.model(ids).logits[0, :-1].double(), dim=-1)
    realised = logp.gather(-1, ids[0, 1:, None]).squeeze(-1).numpy()
    mean = (logp.exp() * logp).sum(-1).numpy()
    std = np.sqrt((logp.exp() * logp.square()).sum(-1).numpy() - mean**2)
    assert stats.num_tokens == ids.shape[1] - 1  # this tokenizer adds no BOS: the first token has no context
    np.testing.assert_allclose(stats.logprobs, realised, atol=1e-4)
    np.testing.assert_allclose(stats.mean, mean, atol=1e-4)
    np.testing.assert_allclose(stats.std, std, atol=1e-4)
    assert not stats.truncated


def test_batched_scoring_equals_one_by_one(tiny):
    together = tiny.score(TEXTS)
    for text, batched in zip(TEXTS, together, strict=True):
        (alone,) = tiny.score([text])
        np.testing.assert_allclose(batched.logprobs, alone.logprobs, atol=1e-4)


def test_long_texts_are_truncated_to_the_context_and_marked(tokenizer, tmp_path):
    model = HFModel.load(
        str(save_tiny(tmp_path / "short", tokenizer, max_position_embeddings=16)), device="cpu"
    )
    (stats,) = model.score([" ".join(TEXTS * 4)])
    assert stats.truncated and stats.num_tokens == 15


def test_a_text_far_beyond_the_window_is_cut_before_tokenizing_with_the_same_numbers(tokenizer, tmp_path):
    """A 10 MB question cost 1.5 GB to tokenize whole; cut after (window + 1) times the longest token's
    characters, its first window tokens, scores and generations are the same."""
    model = HFModel.load(
        str(save_tiny(tmp_path / "short", tokenizer, max_position_embeddings=16)), device="cpu"
    )
    assert model.char_limit is not None and model.char_limit < 1000
    long_text = " ".join(TEXTS * 200)  # about 20,000 characters
    assert len(long_text) > 10 * model.char_limit
    read: list[int] = []
    tokenizer = model.tokenizer

    class Spy:  # the tokenizer, noting how much text it was given
        def __call__(self, text, **options):
            read.append(len(text))
            return tokenizer(text, **options)

        def __getattr__(self, name):
            return getattr(tokenizer, name)

    model.tokenizer = Spy()
    (cut,) = model.score([long_text])
    prompts = [long_text, "A baker sells"]
    generated = model.generate(prompts, [4, 4])
    model.tokenizer = tokenizer
    assert read and max(read) <= model.char_limit  # the 20,000 characters were never read whole
    model.char_limit = None  # tokenize whole, as before
    (whole,) = model.score([long_text])
    assert cut.truncated and whole.truncated and cut.num_tokens == whole.num_tokens == 15
    np.testing.assert_array_equal(cut.logprobs, whole.logprobs)
    assert model.generate(prompts, [4, 4]) == generated


def test_a_tokenizer_that_folds_runs_of_spaces_reads_a_cut_text_whole(tokenizer, tmp_path):
    """SentencePiece conversions squeeze runs of spaces: a token may then span more characters than
    the longest vocabulary entry, and a cut text fewer tokens than the window. Read whole then."""
    from tokenizers import Regex, normalizers

    model = HFModel.load(
        str(save_tiny(tmp_path / "folding", tokenizer, max_position_embeddings=16)), device="cpu"
    )
    model.tokenizer.backend_tokenizer.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    text = "A baker" + " " * (3 * model.char_limit) + "sells 48 loaves."  # few tokens, many characters
    (folded,) = model.score([text])
    model.char_limit = None
    (whole,) = model.score([text])
    assert not folded.truncated and folded.num_tokens == whole.num_tokens < 15
    np.testing.assert_array_equal(folded.logprobs, whole.logprobs)


def test_a_text_whose_logits_exceed_the_budget_is_scored_by_parts_with_the_same_numbers(
    tokenizer, tmp_path, monkeypatch
):
    """The output layer a few positions at a time: 8,192 tokens of SmolLM2 held 1.6 GB of logits."""
    model = HFModel.load(str(save_tiny(tmp_path / "parts", tokenizer)), device="cpu")
    monkeypatch.setattr(hf, "REDUCE_FLOATS", 50 * model.vocab_size)  # 50 positions at a time
    texts = [" ".join(TEXTS * 6), TEXTS[0]]
    whole = model.score(texts)
    model.token_budget = 8  # every text is over it: each goes alone, by parts
    calls: list[int] = []
    head = model.model.get_output_embeddings()
    hook = head.register_forward_hook(lambda module, args, output: calls.append(output.shape[-2]))
    try:
        parts = model.score(texts)
    finally:
        hook.remove()
    assert model._by_parts and calls and max(calls) == 50 < whole[0].num_tokens  # never all at once
    for a, b in zip(whole, parts, strict=True):
        assert a.num_tokens == b.num_tokens and a.truncated == b.truncated
        # the short text was batched (padded) with the long one before, alone now: float noise
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-4)
        np.testing.assert_allclose(a.mean, b.mean, atol=1e-4)
        np.testing.assert_allclose(a.std, b.std, atol=1e-4)


def test_a_model_that_changes_its_logits_after_the_output_layer_is_scored_whole(tokenizer, tmp_path):
    """A soft cap or a scale after the output layer (Gemma-2, Cohere) would be lost by parts: the last
    position, which the model computes itself, tells, and the whole logits are used."""
    model = HFModel.load(str(save_tiny(tmp_path / "scaled", tokenizer)), device="cpu")

    def scaled(module, args, output):
        output.logits = output.logits * 2.0
        return output

    hook = model.model.register_forward_hook(scaled)
    try:
        text = " ".join(TEXTS * 6)
        (whole,) = model.score([text])
        model.token_budget = 8
        (checked,) = model.score([text])
    finally:
        hook.remove()
    assert not model._by_parts  # found out, and not tried again
    np.testing.assert_allclose(whole.logprobs, checked.logprobs, rtol=1e-6)


def test_an_audit_of_a_short_window_sets_aside_the_shards_that_do_not_fit(tokenizer, tmp_path):
    from contamcheck import audit

    folder = save_tiny(tmp_path / "short", tokenizer, max_position_embeddings=48)
    config = AuditConfig(
        model=str(folder), benchmark="sample", limit=40, tests=("canonical-order", "zlib"), no_cache=True
    )
    report = audit(config)
    order = next(t for t in report.tests if t.name == "canonical-order")
    assert order.status == "skipped" and order.skip_reason is not None
    assert order.skip_reason == "no shard fits the model's context window whole (need 5)"
    assert order.shards and all(shard.truncated for shard in order.shards)  # none used
    assert any("longer than the model's context window" in warning for warning in report.warnings)


def test_batched_generation_with_left_padding_equals_one_by_one(tiny):
    prompts = ["A baker sells 48", "How many minutes are there in 3.5 hours? And how many in"]
    together = tiny.generate(prompts, [6, 6])
    alone = [tiny.generate([p], [6])[0] for p in prompts]
    assert together == alone
    short, long = tiny.generate(prompts, [1, 6])
    assert len(tiny.tokenizer(short, add_special_tokens=False).input_ids) <= 1
    assert long == alone[1]


def test_pruned_greedy_decoding_equals_transformers_generate(tiny):
    """Rows leave the batch at their own limit or end token; the tokens stay those of generate."""
    import torch

    prompts = ["A baker sells 48", "How many minutes are there in 3.5 hours? And how many in", "Tom has"]
    encoded = [tiny.tokenizer(p)["input_ids"] for p in prompts]
    limits = [3, 12, 8]
    standard = tiny._greedy_with_generate(encoded, limits, None, torch)
    assert [len(row) for row in standard] == limits
    assert tiny._greedy(encoded, limits, None, torch) == standard
    # an "end" token that one row emits and another doesn't: one row stops early, another goes on
    stop = next(t for t in {r[0] for r in standard} if sum(t in r for r in standard) < len(standard))
    ended = tiny._greedy_with_generate(encoded, limits, stop, torch)
    lengths = [len(r) - n for r, n in zip(ended, limits, strict=True)]
    assert min(lengths) < 0 and max(lengths) == 0  # one row ended early, one ran to its limit
    assert tiny._greedy(encoded, limits, stop, torch) == ended


def test_generation_stops_at_every_end_token_the_model_names(tokenizer, tmp_path):
    """An instruct model's turn ends with a token of its own (Gemma's <end_of_turn>, Phi-3's
    <|end|>), named in its generation config beside the tokenizer's end-of-text: generation stops
    there, as transformers' generate does, instead of writing on past the turn."""
    import torch
    from transformers import GenerationConfig

    folder = save_tiny(tmp_path / "turns", tokenizer)
    prompt = "How many minutes are there in 3.5 hours? And how many in"
    model = HFModel.load(str(folder), device="cpu")
    assert model.stop_ids == {tokenizer.eos_token_id}
    ids = model._encode_prompts([prompt], chat=False)
    (free,) = model._greedy(ids, [12], model.stop_ids, torch)
    turn = free[len(free) // 2]  # a token it writes, standing for an end of turn
    GenerationConfig(eos_token_id=[tokenizer.eos_token_id, turn]).save_pretrained(folder)
    model = HFModel.load(str(folder), device="cpu")
    assert model.stop_ids == {tokenizer.eos_token_id, turn}
    written = free[: free.index(turn)]
    assert model._greedy(ids, [12], model.stop_ids, torch) == [written]
    assert model._greedy_with_generate(ids, [12], model.stop_ids, torch) == [written]
    assert model.generate([prompt], [12]) == [tokenizer.decode(written, skip_special_tokens=True)]


def test_the_in_place_cache_writes_the_same_tokens(tiny, monkeypatch):
    import torch

    from contamcheck.backends import kv_cache

    prompts = ["A baker sells 48", "How many minutes are there in 3.5 hours? And how many in", "Tom has"]
    encoded = [tiny.tokenizer(p)["input_ids"] for p in prompts]
    swapped = []
    original = kv_cache.preallocate
    monkeypatch.setattr(kv_cache, "preallocate", lambda c, n: swapped.append(original(c, n)) or swapped[-1])
    limits = [3, 12, 8]
    in_place = tiny._greedy(encoded, limits, None, torch)
    assert swapped == [True]  # the tiny llama's layers were swapped
    tiny._preallocate = False
    try:
        assert tiny._greedy(encoded, limits, None, torch) == in_place
    finally:
        tiny._preallocate = True


def test_a_shared_prompt_beginning_is_prefilled_once_with_the_same_tokens(tiny, monkeypatch):
    """Prompts with a common beginning (a chat template, an instruction) run it once for the batch."""
    import torch

    head = "A baker sells 48 loaves on Monday and 35 on Tuesday. How many minutes are there in"
    prompts = [head + " 3.5 hours?", head + " a day? And", head + " def add(a, b):"]
    encoded = [tiny.tokenizer(p)["input_ids"] for p in prompts]
    assert hf._shared_length(encoded) >= hf.SHARED_PREFIX_MIN
    limits = [5, 9, 7]
    widths = []
    forward = tiny.model.forward
    record = lambda **k: widths.append(k["input_ids"].shape) or forward(**k)  # noqa: E731
    monkeypatch.setattr(tiny.model, "forward", record)
    shared = tiny._greedy(encoded, limits, None, torch)
    shared_length = hf._shared_length(encoded)
    assert widths[0] == (1, shared_length)  # the common beginning, once
    assert widths[1][0] == 3 and widths[1][1] == max(len(e) for e in encoded) - shared_length
    assert shared == tiny._greedy_with_generate(encoded, limits, None, torch)
    tiny._share_prefix = False
    try:
        assert tiny._greedy(encoded, limits, None, torch) == shared
    finally:
        tiny._share_prefix = True
    assert [tiny._greedy([e], [n], None, torch)[0] for e, n in zip(encoded, limits, strict=True)] == shared


def tiny_windowed(tokenizer, folder: Path, window: int) -> HFModel:
    """A tiny Gemma-3 (random weights): a layer that sees only the last ``window`` tokens, then a full one."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    config = architecture_configs(tokenizer)["gemma3_text"]()
    config.sliding_window = window
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return HFModel.load(str(folder), device="cpu")


def forward_widths(model: HFModel, monkeypatch) -> list:
    """The shape of each forward pass's input ids, from now on."""
    widths: list = []
    forward = model.model.forward

    def recorded(**arguments):
        widths.append(tuple(arguments["input_ids"].shape))
        return forward(**arguments)

    monkeypatch.setattr(model.model, "forward", recorded)
    return widths


def test_a_window_of_last_tokens_keeps_each_row_as_alone(tokenizer, tmp_path, monkeypatch):
    """transformers counts a sliding window in cache slots, padding included: a row padded after a
    shared beginning saw fewer of its own tokens and generated other tokens than alone (a tiny
    Gemma-2 did). Where the batch could outgrow the window, nothing is shared."""
    import torch

    head = "A baker sells 48 loaves on Monday and 35 on Tuesday. How many minutes are there in"
    tails = [" 3.5 hours?", " a day? And how many in 3.5 hours? " * 3, " def add(a, b):\n    return a + b"]
    encoded = [tokenizer(head + tail)["input_ids"] for tail in tails]
    shared = hf._shared_length(encoded)
    assert shared >= hf.SHARED_PREFIX_MIN and max(map(len, encoded)) - min(map(len, encoded)) > 16
    limits = [12, 12, 12]
    reach = max(map(len, encoded)) + max(limits)  # the batch's cache slots
    whole = (3, max(map(len, encoded)))  # the first forward pass when nothing is shared

    narrow = tiny_windowed(tokenizer, tmp_path / "narrow", window=16)
    assert narrow.attention_window == 16
    alone = [narrow._greedy([e], [n], None, torch)[0] for e, n in zip(encoded, limits, strict=True)]
    widths = forward_widths(narrow, monkeypatch)
    assert narrow._greedy(encoded, limits, None, torch) == alone
    assert widths[0] == whole
    narrow.attention_window = None  # as before: padding inside the window
    assert narrow._greedy(encoded, limits, None, torch) != alone  # so this test can see the fault

    for window, first in ((reach - 1, whole), (reach, (1, shared))):  # either side of the edge
        model = tiny_windowed(tokenizer, tmp_path / str(window), window=window)
        alone = [model._greedy([e], [n], None, torch)[0] for e, n in zip(encoded, limits, strict=True)]
        widths = forward_widths(model, monkeypatch)
        assert model._greedy(encoded, limits, None, torch) == alone
        assert widths[0] == first


def test_the_attention_window_is_read_from_the_config():
    from transformers import Gemma3Config, Llama4TextConfig, LlamaConfig, Qwen2Config

    assert hf._attention_window(LlamaConfig()) is None
    assert hf._attention_window(Qwen2Config(sliding_window=4096, use_sliding_window=False)) is None
    assert hf._attention_window(Qwen2Config(sliding_window=4096, use_sliding_window=True)) == 4096
    assert hf._attention_window(Llama4TextConfig(attention_chunk_size=8192)) == 8192
    assert hf._attention_window(Gemma3Config(text_config={"sliding_window": 512})) == 512
    from transformers import GPTNeoConfig

    assert hf._attention_window(GPTNeoConfig()) == 256  # local layers every other one
    assert hf._attention_window(GPTNeoConfig(attention_types=[[["global"], 24]])) is None


def test_a_tokenizer_that_appends_end_of_text_has_it_left_off(tmp_path):
    """A tokenizer saved with add_eos_token (some fine-tunes are) ended every completion prompt with
    end-of-text, where the model starts a new document, and scored that token with each question.
    What it puts before a text (a BOS) stays, and so does any other token it appends that generation
    does not stop at."""
    from tokenizers import processors

    tokenizer = train_tokenizer(TEXTS * 3, vocab_size=300)
    tokenizer.add_special_tokens({"bos_token": "<s>"})
    begin, end = tokenizer.bos_token_id, tokenizer.eos_token_id
    assert begin != end
    plain = tokenizer(TEXTS[0], add_special_tokens=False)["input_ids"]
    models = {}
    for template, kept in (("<s> $A <|endoftext|>", [begin, *plain]), ("$A <s>", [*plain, begin])):
        tokens = [("<s>", begin), ("<|endoftext|>", end)]
        tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=tokens
        )
        model = HFModel.load(str(save_tiny(tmp_path / template.replace(" ", ""), tokenizer)), device="cpu")
        assert model._encode_prompts([TEXTS[0]], chat=False) == [kept]
        (stats,) = model.score([TEXTS[0]])
        assert stats.num_tokens == len(kept) - 1
        models[template] = model
    ended = TEXTS[0] + "<|endoftext|>"  # a text's own end-of-text is its own: only the appended one goes
    assert models["<s> $A <|endoftext|>"]._encode_prompts([ended], chat=False) == [[begin, *plain, end]]
    # a token appended that generation stops at (an end the generation config names) goes too, as on
    # a server, which stops at those
    after = models["$A <s>"].tokenizer
    assert hf._appended_end(after, frozenset({end})) == []
    assert hf._appended_end(after, frozenset({end, begin})) == [begin]


def test_short_or_single_prompts_share_nothing():
    assert hf._shared_length([[1, 2, 3] * 10]) == 0  # one prompt
    assert hf._shared_length([[1] * 40 + [2], [1] * 40 + [3]]) == 40
    assert hf._shared_length([[1] * 40, [1] * 40 + [3]]) == 39  # each row keeps a token of its own
    assert hf._shared_length([[1] * 10 + [2], [1] * 10 + [3]]) == 0  # too short to bother


def test_prompts_that_begin_alike_are_batched_together_by_length():
    same = [7] * hf.FAMILY_TOKENS
    encoded = [[1, 2, 3], [*same, 1, 2], [4] * 50, [*same, 1], [5]]
    # lone prompts by length first (indices 4, 0, 2), then the family by length (3, 1)
    assert hf._by_family([0, 1, 2, 3, 4], encoded) == [4, 0, 2, 3, 1]


def test_generation_is_split_to_fit_the_cache_budget(tiny):
    prompts = ["A baker sells 48", "How many minutes are there in 3.5 hours? And how many in", "Tom has"]
    together = tiny.generate(prompts, [6, 6, 6])
    budget, tiny.cache_token_budget = tiny.cache_token_budget, 20  # one prompt and its tokens at a time
    try:
        assert [len(g) for g in tiny._generation_batches([0, 1, 2], [[0] * 10] * 3, [6, 6, 6])] == [1, 1, 1]
        finished: list[int] = []
        assert tiny.generate(prompts, [6, 6, 6], on_progress=finished.append) == together
        assert finished == [1, 2, 3]  # one report per part of the batch
    finally:
        tiny.cache_token_budget = budget  # the fixture is shared by the module


def test_a_part_known_whole_is_not_generated_again_and_the_rest_are_as_uninterrupted(tiny, monkeypatch):
    """A stopped audit kept some parts' texts (handed on as each part ends); a part known whole is
    returned as kept, and the others are generated in the groups of the whole batch, so their texts
    are the uninterrupted run's."""
    prompts = ["A baker sells 48", "How many minutes are there in 3.5 hours? And how many in", "Tom has"]
    budget, tiny.cache_token_budget = tiny.cache_token_budget, 20  # one prompt per part
    try:
        handed: dict[int, str] = {}
        together = tiny.generate(prompts, [6, 6, 6], on_texts=handed.update)
        assert handed == dict(enumerate(together))
        greedy = tiny._greedy
        generated: list[int] = []

        def counted(sequences, *rest):
            generated.append(len(sequences))
            return greedy(sequences, *rest)

        monkeypatch.setattr(tiny, "_greedy", counted)
        handed.clear()
        resumed = tiny.generate(prompts, [6, 6, 6], known={0: together[0]}, on_texts=handed.update)
        assert resumed == together and generated == [1, 1] and sorted(handed) == [1, 2]
    finally:
        tiny.cache_token_budget = budget


def test_a_model_whose_numbers_are_not_numbers_stops_with_the_fix(tokenizer, tmp_path):
    folder = save_tiny(tmp_path / "nan", tokenizer)
    broken = HFModel.load(str(folder), device="cpu")
    with torch.no_grad():  # one weight NaN, as an overflow or a damaged file leaves it
        broken.model.model.layers[0].mlp.down_proj.weight[0, 0] = float("nan")
    with pytest.raises(RuntimeFailure, match=r"NaN or infinite log-probabilities in float32 on cpu"):
        broken.score(TEXTS[:2])
    with pytest.raises(RuntimeFailure, match=r"NaN or infinite next-token scores.*check them"):
        broken.generate(TEXTS[:2], [4, 4])
    broken._prunable = False  # transformers' own generate, for models the pruned path can't drive
    with pytest.raises(RuntimeFailure, match=r"NaN or infinite next-token scores.*check them"):
        broken.generate(TEXTS[:2], [4, 4])
    broken.dtype = torch.float16  # the advice follows the dtype
    assert "try --dtype float32" in str(broken._not_numbers("log-probabilities"))


def test_chat_without_a_template_falls_back_to_raw_text(tiny):
    assert not tiny.has_chat_template
    assert tiny.generate(["A baker sells 48"], [4], chat=True) == tiny.generate(["A baker sells 48"], [4])


# The end of Qwen3's chat template, as SmolLM3's and GLM-4.5's read the same variable.
THINKING_TEMPLATE = (
    "{% for message in messages %}<|user|>{{ message.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)


def test_a_chat_template_is_told_not_to_reason_first(tiny, monkeypatch):
    """A model that reasons before it answers (Qwen3) spent the guided test's budget on its
    reasoning: its template is rendered with enable_thinking=False, which others ignore."""
    monkeypatch.setattr(tiny.tokenizer, "chat_template", THINKING_TEMPLATE)
    [prompt] = tiny._encode_prompts(["Finish the SECOND PIECE."], chat=True)
    assert tiny.tokenizer.decode(prompt).endswith("<|assistant|><think>\n\n</think>\n\n")
    monkeypatch.setattr(tiny.tokenizer, "chat_template", THINKING_TEMPLATE.replace("enable_thinking", "x"))
    [prompt] = tiny._encode_prompts(["Finish the SECOND PIECE."], chat=True)
    assert tiny.tokenizer.decode(prompt).endswith("<|assistant|>")  # a template without the switch


# The end of DeepSeek-R1's distills' chat template: a reasoning block opened whatever it is told.
OPENING_TEMPLATE = (
    "{% for message in messages %}<|user|>{{ message.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|><think>\n{% endif %}"
)


@pytest.fixture(scope="module")
def reasoner(tmp_path_factory) -> HFModel:
    """A tiny model whose tokenizer has reasoning's tags as tokens of their own, as such models' do."""
    tokenizer = train_tokenizer(TEXTS * 3, vocab_size=300)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<think>", "</think>"]})
    return HFModel.load(str(save_tiny(tmp_path_factory.mktemp("hf") / "reasoner", tokenizer)), device="cpu")


def test_a_reasoning_block_the_template_opens_is_closed_before_the_answer(reasoner, monkeypatch):
    """A template that opens "<think>" whatever it is told (DeepSeek-R1's distills, QwQ) would have
    the model spend the guided test's budget reasoning: the block is closed, empty, as Qwen3's
    template closes it when told not to reason. A template that closes it itself gets nothing more."""
    monkeypatch.setattr(reasoner.tokenizer, "chat_template", OPENING_TEMPLATE)
    [prompt] = reasoner._encode_prompts(["Finish the SECOND PIECE."], chat=True)
    decoded = reasoner.tokenizer.decode(prompt)
    assert decoded.endswith("<|assistant|><think>\n</think>\n\n") and decoded.count("<think>") == 1
    closed = reasoner.tokenizer.convert_tokens_to_ids(["<think>", "</think>"])
    assert set(closed) <= set(prompt[-5:])  # the tags as tokens of their own, not their letters
    [text] = reasoner.generate(["Finish the SECOND PIECE."], [4], chat=True)
    direct = reasoner._greedy([prompt], [4], reasoner.stop_ids, torch)
    assert text == reasoner.tokenizer.decode(direct[0], skip_special_tokens=True)
    assert reasoner.generate(["Finish"], [4]) == reasoner.generate(["Finish"], [4], chat=False)
    [plain] = reasoner._encode_prompts(["Finish"], chat=False)  # a completion prompt: nothing added
    assert "</think>" not in reasoner.tokenizer.decode(plain)
    monkeypatch.setattr(reasoner.tokenizer, "chat_template", THINKING_TEMPLATE)  # closes it when told
    [prompt] = reasoner._encode_prompts(["Finish the SECOND PIECE."], chat=True)
    assert reasoner.tokenizer.decode(prompt).endswith("<|assistant|><think>\n\n</think>\n\n")
    assert reasoner.tokenizer.decode(prompt).count("</think>") == 1
    glm = THINKING_TEMPLATE.replace("<think>\n\n</think>\n\n", "\n<think></think>")  # GLM-4.5's closing
    monkeypatch.setattr(reasoner.tokenizer, "chat_template", glm)
    [prompt] = reasoner._encode_prompts(["Finish the SECOND PIECE."], chat=True)
    assert reasoner.tokenizer.decode(prompt).endswith("<think></think>")  # not closed twice


def test_settings_and_identity(tiny):
    assert tiny.settings()["dtype"] == "float32" and tiny.settings()["device"] == "cpu"
    assert tiny.num_parameters() > 0
    assert tiny.context_length == 512


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "does not exist"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "no config.json"),
        (lambda p: _write(p / "weights.txt", "x"), "not a .gguf file"),
        (lambda p: _write(p / "junk.gguf", "x" * 3000), r"is not a GGUF model file \(.*magic bytes"),
    ],
)
def test_bad_model_paths_are_input_errors(tmp_path, make, message):
    with pytest.raises(InputError, match=message):
        HFModel.load(str(make(tmp_path)))


def test_a_folder_with_one_gguf_that_is_none_names_the_file(tmp_path):
    (tmp_path / "m").mkdir()
    _write(tmp_path / "m" / "weights.gguf", "x" * 100)
    with pytest.raises(InputError, match=r"'.*/m/weights.gguf' is not a GGUF model file"):
        HFModel.load(str(tmp_path / "m"))


def test_a_gguf_of_an_architecture_transformers_lacks_is_not_called_cut_short():
    source = hf.ModelSource("gguf", "/models", "m.gguf")
    unsupported = ValueError("GGUF model with architecture xyz is not supported yet.")
    said = str(hf._explain_load_failure("m.gguf", source, unsupported))
    assert "not supported yet" in said and "cut short" not in said


def test_a_gguf_file_cut_short_is_named_so(tmp_path):
    """numpy's "cannot reshape array of size 214336 into shape (49152,612)" said nothing of why."""
    from contamcheck.backends.packaged import resolve_packaged

    cut = tmp_path / "cut.gguf"
    with open(resolve_packaged("pkg:smollm2-135m-instruct"), "rb") as whole:
        cut.write_bytes(whole.read(2_000_000))
    with pytest.raises(ModelLoadError, match=r"the .gguf file looks corrupt or cut short \(.*\)\. Download"):
        HFModel.load(str(cut), device="cpu")


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_folder_without_weights(tokenizer, tmp_path):
    folder = save_tiny(tmp_path / "m", tokenizer)
    (folder / "model.safetensors").unlink()
    with pytest.raises(InputError, match="no weights"):
        HFModel.load(str(folder))


def test_folder_without_tokenizer(tokenizer, tmp_path):
    folder = save_tiny(tmp_path / "m", tokenizer)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).unlink()
    with pytest.raises(InputError, match="no tokenizer files"):
        HFModel.load(str(folder))


def test_a_model_that_is_not_a_causal_lm(tokenizer, tmp_path):
    from transformers import BertConfig, BertModel

    tokenizer.save_pretrained(tmp_path)
    BertModel(
        BertConfig(
            vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
    ).save_pretrained(tmp_path)
    with pytest.raises(InputError, match="not a causal language model"):
        HFModel.load(str(tmp_path))


def test_a_model_of_images_and_text_transformers_cannot_load_as_a_causal_lm(tokenizer, tmp_path):
    """Qwen2-VL's language model is causal, but AutoModelForCausalLM does not load it: the message
    says what it is and that a server can run it, not that it is no causal language model."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    size = len(tokenizer)
    text = dict(vocab_size=size, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    text |= dict(
        num_attention_heads=2,
        num_key_value_heads=1,
        rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]},
    )
    vision = dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2)
    tokens = dict(image_token_id=size - 1, video_token_id=size - 2, vision_start_token_id=size - 3)
    Qwen2VLForConditionalGeneration(
        Qwen2VLConfig(text_config=text, vision_config=vision, **tokens)
    ).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with pytest.raises(InputError, match=r"a model of images and text .* openai:URL"):
        HFModel.load(str(tmp_path))


def test_hub_model_offline_fails_fast_with_the_local_alternative(monkeypatch):
    monkeypatch.setattr(hub, "hub_reachable", lambda: False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    started = time.perf_counter()
    with pytest.raises(ModelLoadError, match="Can't reach the Hugging Face Hub") as error:
        load_model("HuggingFaceTB/SmolLM2-135M", ModelOptions(threads=1))
    assert "pass the folder" in str(error.value)
    assert time.perf_counter() - started < 5


def test_trust_remote_code_is_off_unless_asked(monkeypatch, tokenizer, tmp_path):
    import transformers

    seen = {}

    def spy(*args, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", spy)
    with pytest.raises(ModelLoadError):
        HFModel.load(str(save_tiny(tmp_path / "m", tokenizer)))
    assert seen["trust_remote_code"] is False
    assert AuditConfig(model="m", benchmark="b").trust_remote_code is False
    assert ModelOptions().trust_remote_code is False


@pytest.mark.parametrize(
    ("build", "cpu_only"),
    [
        ("cuda: Optional[str] = None\nhip: Optional[str] = None\n", True),
        ("cuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n", False),
        ("cuda: Optional[str] = None\nhip: Optional[str] = '6.2.4'\n", False),
        ("", False),  # unreadable: ask torch
    ],
)
def test_the_device_is_told_from_torch_s_build_only_when_it_can_only_be_the_cpu(
    build, cpu_only, tmp_path, monkeypatch
):
    folder = tmp_path / "torch"
    folder.mkdir()
    if build:
        (folder / "version.py").write_text(build)
    found = importlib.machinery.ModuleSpec("torch", None, is_package=True)
    found.submodule_search_locations = [str(folder)]
    monkeypatch.setattr(hf.importlib.util, "find_spec", lambda name: found)
    monkeypatch.setattr(hf.sys, "platform", "linux")
    monkeypatch.delitem(sys.modules, "torch")  # restored after the test
    assert hf.torch_is_cpu_only() is cpu_only


def test_a_new_copy_removes_the_copies_made_in_the_format_before_it(tokenizer, tmp_path):
    """A pre-v2 copy is never read again; other files in the folder are left alone."""
    converted = tmp_path / "converted"
    outdated, unrelated = converted / ("0123456789abcdef01234567"), converted / "notes"
    for folder in (outdated, unrelated):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
    model = tiny_llama(tokenizer)
    hf._save_converted(model, tokenizer, converted / "v2-abc")
    assert sorted(p.name for p in converted.iterdir()) == ["notes", "v2-abc"]
    assert (converted / "v2-abc" / "model.safetensors").is_file()


def test_a_conversion_stopped_by_ctrl_c_leaves_no_half_made_copy(tokenizer, tmp_path):
    """A .gguf model's dequantised copy is made in a staging folder, removed if Ctrl-C stops it."""

    class Interrupting:
        def save_pretrained(self, folder: Path) -> None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        hf._save_converted(tiny_llama(tokenizer), Interrupting(), tmp_path / "converted" / "abc")
    assert list((tmp_path / "converted").iterdir()) == []


def test_a_copy_that_can_not_be_kept_is_a_warning_not_a_failure(tokenizer, tmp_path):
    """A full disk while saving the dequantised copy: the audit goes on, the report says why the next
    one converts again, and no half-made copy is left."""

    class DiskFull:
        def save_pretrained(self, folder: Path) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    note = hf._save_converted(tiny_llama(tokenizer), DiskFull(), tmp_path / "converted" / "abc")
    assert note is not None and "(No space left on device)" in note and "converts it again" in note
    assert list((tmp_path / "converted").iterdir()) == []
    assert "free space there" in note

    class Refused:
        def save_pretrained(self, folder: Path) -> None:
            raise PermissionError(errno.EACCES, "Permission denied")

    refused = hf._save_converted(tiny_llama(tokenizer), Refused(), tmp_path / "converted" / "abc")
    assert refused is not None and "(Permission denied)" in refused and "free space" not in refused
    assert hf._save_converted(tiny_llama(tokenizer), tokenizer, tmp_path / "converted" / "abc") is None
    # a copy another audit put in place first is kept: nothing to warn of
    assert hf._save_converted(tiny_llama(tokenizer), DiskFull(), tmp_path / "converted" / "abc") is None


def test_what_loading_warns_reaches_the_report(monkeypatch, tmp_path):
    from contamcheck.backends.fake import FakeModel
    from contamcheck.config import AuditConfig
    from contamcheck.pipeline import audit

    monkeypatch.setattr(FakeModel, "notes", ["The dequantised copy could not be kept."], raising=False)
    report = audit(AuditConfig(model="fake:clean", benchmark="sample", limit=20, no_cache=True))
    assert "The dequantised copy could not be kept." in report.warnings


def test_a_corrupt_weights_file_is_named_as_corrupt():
    import struct

    class SafetensorError(Exception):  # as safetensors names it
        pass

    source = hf.ModelSource("folder", "/models/m")
    header = SafetensorError("Error while deserializing header: header too large")
    for exc in (header, struct.error("unpack requires a buffer of at least 24 bytes")):
        error = hf._explain_load_failure("m", source, exc)
        assert isinstance(error, ModelLoadError) and "looks corrupt or cut short" in str(error)


def test_a_missing_entry_in_a_model_file_is_said_as_such():
    error = hf._explain_load_failure("m", hf.ModelSource("folder", "/models/m"), KeyError("added_tokens"))
    assert isinstance(error, ModelLoadError)
    assert "lacks the entry 'added_tokens'" in str(error) and "copy the model's files again" in str(error)


def test_models_load_one_at_a_time_across_threads(monkeypatch):
    """transformers' lazy imports and from_pretrained are not thread-safe: two audit() calls in
    threads once failed with "no attribute AutoConfig" (a black-box pass); loads now take turns."""
    import threading

    from contamcheck.backends.hf import HFModel

    inside, most = 0, 0
    count = threading.Lock()

    def slow_load(cls, spec, **options):
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.2)
        with count:
            inside -= 1
        return spec

    monkeypatch.setattr(HFModel, "_load", classmethod(slow_load))
    threads = [threading.Thread(target=HFModel.load, args=(f"m{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 1

"""Benchmarks in scripts written without spaces (Chinese, Japanese, Thai).

Whitespace alone made a whole Chinese question one word, so every question was "too short to
split"; a number beside a Chinese character was glued to a word (Python counts 个 as a word
character), so no question had a twin; and ROUGE-L kept only a-z and 0-9, so guided scored Chinese,
Greek or Russian text 0 against itself. A character of such a script is a word now.
"""

from __future__ import annotations

import json
import random
import re
import string
import sys
import unicodedata
from pathlib import Path

import pytest

from contamcheck.cli.app import main
from contamcheck.controls import NumberPool, make_twins, numbers_in, split_question
from contamcheck.controls.split import word_count
from contamcheck.methods.completion import generation_budget, number_recall
from contamcheck.methods.guided import WordTokenizer, rouge_l

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

CHINESE = "小明有37个苹果，他给了小红15个，又买了128个。请问小明现在有多少个苹果？"
JAPANESE = "太郎はりんごを37個持っています。花子に15個あげました。"
THAI = "ร้านค้ามีแอปเปิ้ล 37 ผล ขายไป 15 ผล เหลือกี่ผล"


def test_a_character_of_a_script_without_spaces_is_a_word() -> None:
    split = split_question(CHINESE)
    assert split is not None
    assert split.prefix + split.suffix == CHINESE  # no space to drop between the halves
    assert word_count(CHINESE) == 35  # 37, 15 and 128 are a word each; so is each punctuation mark
    assert split.prefix == "小明有37个苹果，他给了小红15个，又"
    assert split_question("小明有37个苹果") is None  # 7 words
    assert split_question("小明有37个苹果。") is not None  # 8
    assert word_count("Tom has 16 apples.") == 4  # spaced scripts count as before
    assert word_count("Tom has 16 小 apples.") == 5


def test_a_cut_never_separates_a_character_from_its_vowel_signs_and_marks() -> None:
    for word in (
        "กี่",  # a consonant with its vowel sign and tone mark
        "กำ",  # SARA AM is a letter written after its consonant, not a mark
        "เก",  # SARA E is written before its consonant
        "ក្រ",  # Khmer's coeng stacks two consonants
        "ｶﾞ",  # halfwidth katakana and its dakuten
        "が",
    ):
        text = word * 9
        split = split_question(text)
        assert word_count(text) == 9 and split is not None, word
        assert split.prefix.endswith(word) and split.suffix.startswith(word), word
    assert word_count("๒๕๖๗ ปี") == 2  # a year in Thai digits is one word
    for text in (THAI, "ร้านค้า" * 5):
        split = split_question(text)
        assert split is not None and not unicodedata.category(split.suffix[0]).startswith("M"), text


def test_numbers_beside_characters_of_scripts_without_spaces_are_numbers() -> None:
    assert numbers_in(CHINESE) == ["37", "15", "128"]
    assert numbers_in(JAPANESE) == ["37", "15"]
    assert numbers_in("第3天卖了12,500元") == ["3", "12,500"]
    # letters of other scripts still glue; full-width digits are read as ASCII ones, other digits not
    assert numbers_in("x37 3rd é12 _12 12_ αβ7 Ж9") == []
    assert numbers_in("３７個と٣٧") == ["37"]
    assert numbers_in("ｘ３７") == []  # a full-width letter glues as an ASCII one does
    assert numbers_in("๓7 และ 7๓") == []  # glued to a digit of another script
    assert numbers_in("사과 37개를 샀다") == ["37"]  # Korean writes its counters onto the number


def test_full_width_digits_get_twins_written_in_them() -> None:
    """Chinese and Japanese text often writes numbers in full-width digits: before, such a question
    had no number to change, so a benchmark written so had no question with a twin."""
    text = "小明有３７个苹果，给了小红１５个，又买了１２８个。12月５日他一共有多少个苹果？"
    pool = NumberPool([text, "有４５个、２０个和１５０个"])
    twins = make_twins(text, pool, seed=0, count=3)
    assert len(twins) == 3
    shape = re.compile(
        "小明有[０-９]{2}个苹果，给了小红[０-９]{2}个，又买了[０-９]{3}个。1[0-2]月[２-９]日他"
    )
    for twin in twins:  # each number in the digits it was written in, the month a month, the day a day
        assert shape.match(twin) and numbers_in(twin)[:3] != ["37", "15", "128"], twin


def test_a_number_written_in_the_other_digits_is_the_same_number() -> None:
    """Completion asks whether the model writes the question's numbers: ``128`` is ``１２８``."""
    assert number_recall("小明有３７个苹果，又买", "了１２８个。", "了128个苹果") == 1.0
    assert number_recall("小明有37个苹果，又买", "了128个。", "了１２８个") == 1.0
    assert number_recall("小明有37个苹果，又买", "了128个。", "了１２９个") == 0.0
    assert number_recall("每个重", "３．２５千克，一共１２个。", "3.25千克，一共12个") == 1.0  # a point too


def test_a_full_width_decimal_comes_back_full_width() -> None:
    text = "每个苹果重０．２５千克，小明买了１２个苹果。这些苹果一共重多少千克？"
    assert numbers_in(text) == ["0.25", "12"]
    for twin in make_twins(text, NumberPool([text, "０．７５和３６"]), seed=0, count=3):
        assert re.match("每个苹果重０．[０-９]{2}千克，小明买了[０-９]{2}个苹果。", twin), twin


def test_a_chinese_or_japanese_clock_time_stays() -> None:
    text = "小明每天3点30分起床，跑了25分钟，又走了18分钟。他一共运动了多少分钟？"
    for twin in make_twins(text, NumberPool([text]), seed=0, count=4):
        assert twin.startswith("小明每天3点30分起床") and numbers_in(twin)[2:] != ["25", "18"], twin
    assert make_twins("試験は3時30分に始まり、4時45分に終わった。", NumberPool([]), seed=0) == []


def test_a_chinese_question_gets_twins_with_other_numbers() -> None:
    twins = make_twins(CHINESE, NumberPool([CHINESE]), seed=0, count=2)
    assert len(twins) == 2
    for twin in twins:
        assert numbers_in(twin) != numbers_in(CHINESE) and len(numbers_in(twin)) == 3
        assert [c for c in twin if not c.isdigit()] == [c for c in CHINESE if not c.isdigit()]


def test_a_chinese_date_stays_a_date() -> None:
    text = "小明在12月25日买了37个苹果，3月5号又买了48个。他一共买了多少个苹果？"
    for twin in make_twins(text, NumberPool([text]), seed=0, count=8):
        month, day, _, month2, day2, _ = (int(n) for n in numbers_in(twin))
        assert 10 <= month <= 12 and 10 <= day <= 28, twin  # as many digits, and a real date
        assert 2 <= month2 <= 9 and 2 <= day2 <= 9, twin


def test_completion_gives_a_chinese_second_half_room_to_be_written() -> None:
    split = split_question(CHINESE)
    assert split is not None
    assert generation_budget(split.suffix) == 2 * 18 + 16  # 18 words, not 1
    assert generation_budget("and then he bought 12 more") == 2 * 6 + 16


def test_rouge_words_agree_with_rouge_score_on_ascii_and_exist_in_every_script() -> None:
    from rouge_score import tokenize

    rng = random.Random(5)
    ours = WordTokenizer()
    for _ in range(3000):
        text = "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 80)))
        assert ours.tokenize(text) == tokenize.tokenize(text, None), text
    assert ours.tokenize("小明有37个。") == ["小", "明", "有", "37", "个"]
    assert ours.tokenize("Привет, МИР! naïve café") == ["привет", "мир", "naïve", "café"]
    assert ours.tokenize("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]  # vowel signs stay in their word
    for text in ("Привет мир, как дела сегодня", "Καλημέρα κόσμε", CHINESE, THAI):
        assert rouge_l(text, text) == pytest.approx(1.0), text
    assert 0.5 < rouge_l("小明有三个苹果", "小明有三个梨") < 1


@pytest.fixture(scope="module")
def chinese(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[str]]:
    """120 Chinese word problems (experiments/zh_problems.py), and a file of every other one."""
    from zh_problems import problems

    texts = problems(120, seed=3)
    folder = tmp_path_factory.mktemp("chinese")
    benchmark, leaked = folder / "zh.jsonl", folder / "leaked.jsonl"
    for path, rows in ((benchmark, texts), (leaked, texts[::2])):
        path.write_text(
            "".join(json.dumps({"question": t}, ensure_ascii=False) + "\n" for t in rows), encoding="utf-8"
        )
    return benchmark, leaked, set(texts[::2])


def test_a_chinese_benchmark_is_audited_question_by_question(chinese, capsys) -> None:
    benchmark, leaked, leaked_texts = chinese
    code = main([f"fake:memorise={leaked}", str(benchmark), "--no-cache", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["verdict"]["code"] == "likely"
    assert report["sample"]["tested"] == 120 and not report["sample"]["set_aside"]
    assert report["control"]["without_twin"] == 0
    tests = {test["name"]: test for test in report["tests"]}
    for name in ("completion", "min-k", "zlib"):
        flags = [
            (item["text"] in leaked_texts, item["tests"][name]["flagged"])
            for item in report["items"]
            if item["tests"][name]["flagged"] is not None  # completion: a second half with new numbers
        ]
        leaked_rate = sum(f for seen, f in flags if seen) / sum(seen for seen, _ in flags)
        held_out_rate = sum(f for seen, f in flags if not seen) / sum(not seen for seen, _ in flags)
        # questions from one template share the words before the cut: the fake model, which recalls
        # from the prompt's last 6 tokens, often continues another leaked question (about 60% recalled)
        assert leaked_rate >= (0.5 if name == "completion" else 0.8), (name, leaked_rate)
        assert held_out_rate <= 0.1, (name, held_out_rate)
        assert tests[name]["status"] == "fail"

    assert main(["fake:clean", str(benchmark), "--no-cache", "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert clean["verdict"]["code"] == "clean" and clean["sample"]["tested"] == 120
    assert all(test["flag_rate"] <= 0.12 for test in clean["tests"] if test.get("flag_rate") is not None)

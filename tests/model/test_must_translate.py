"""The sentences a class meets first come out right, and none of them was ever trained on.

tests/data/must_translate.tsv lists the seeds' own sentences, every example sentence, minimal pair and lesson
button, with the words a correct translation must contain in order."""

from __future__ import annotations

import re

import pytest

from model.checkpoint import load_checkpoint
from model.data import (
    DEFAULT_DATA_DIR,
    corpus_available,
    load_splits,
    normalise_english,
    protected_english,
    read_everyday,
    read_must_translate,
    read_names,
)
from model.decode import translate

from ..conftest import ROOT

ROWS = read_must_translate()


def contains_in_order(text: str, words: list[str]) -> bool:
    """Each word (or one of its a|b alternatives) found after the previous one."""
    position = 0
    for word in words:
        found = [m.end() for w in word.split("|") for m in [re.search(re.escape(w), text[position:])] if m]
        if not found:
            return False
        position += min(found)
    return True


def test_order_check_reads_alternatives_and_order():
    assert contains_in_order("汤姆追杰瑞。", ["汤姆", "追", "杰瑞"])
    assert not contains_in_order("杰瑞追汤姆。", ["汤姆", "追", "杰瑞"])
    assert contains_in_order("我们下个星期去看奶奶。", ["下周|下个星期", "奶奶|祖母"])


def test_every_sentence_the_app_offers_is_listed():
    from ui.compare import MINIMAL_PAIRS
    from ui.padding import LONG_PARTNER, SHORT_PARTNER
    from ui.word_order import EXAMPLE

    listed = {(r.english, r.language) for r in ROWS}
    offered = [(s, "zh") for s in (EXAMPLE, SHORT_PARTNER, LONG_PARTNER)]
    offered += [(s, "zh") for _, first, second in MINIMAL_PAIRS for s in (first, second)]
    offered += [(s, "zh") for s in (ROOT / "checkpoints" / "en-zh" / "examples.txt").read_text().splitlines() if s]
    assert [o for o in offered if o not in listed] == []


@pytest.fixture(scope="module")
def en_zh():
    return load_checkpoint(ROOT / "checkpoints" / "en-zh")


# What the shipped en-zh model still gets wrong (greedy), checked strictly: a fix makes these tests fail until
# the mark is removed. Issue 20 stays open for them.
EN_ZH_STILL_WRONG = {
    "The trophy didn't fit in the suitcase because it was too big.": "幸物因为它不大合这个手提箱。",
    "The trophy didn't fit in the suitcase because it was too small.": "幸物因为它不大合这个手提箱。",
    "Attention is all you need.": "你没必要怀疑。",
    "Machine translation is difficult.": "马赫翻译很困难。",
    # the earlier weights passed the word check with the cause reversed (因为猫在沙发上睡觉，它非常累了。)
    "The cat is sleeping on the sofa because it is very tired today.": "因为现在在沙发上睡觉，它很疲劳。",
}


def _zh_param(row):
    if row.english in EN_ZH_STILL_WRONG:
        wrong = EN_ZH_STILL_WRONG[row.english]
        return pytest.param(row, marks=pytest.mark.xfail(reason=f"the shipped model writes {wrong}", strict=True))
    return row


@pytest.mark.parametrize("row", [_zh_param(r) for r in ROWS if r.language == "zh"], ids=lambda r: r.english)
def test_en_zh_greedy_translation_has_the_words_in_order(en_zh, row):
    tr = translate(en_zh.model, en_zh.source_tokenizer, en_zh.target_tokenizer, row.english, need_qkv=False)
    assert contains_in_order(tr.target_text, row.words), (row.english, tr.target_text)


# The shipped en-de model was not retrained with name substitution: it writes "Tom jagt Je." (issue 20).
EN_DE_NAMES = pytest.mark.xfail(reason="en-de not yet retrained with name pairs and substitution", strict=True)


@pytest.mark.parametrize("row", [pytest.param(r, marks=EN_DE_NAMES) if "Jerry" in r.english else r
                                 for r in ROWS if r.language == "de"], ids=lambda r: r.english)
def test_en_de_greedy_translation_has_the_words_in_order(row):
    loaded = load_checkpoint(ROOT / "checkpoints" / "en-de")
    tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, row.english, need_qkv=False)
    assert contains_in_order(tr.target_text, row.words), (row.english, tr.target_text)


def test_no_listed_sentence_is_in_the_en_zh_training_data():
    """Normalised English (case, spacing, final punctuation) against every training file, the name-substituted
    copies included; and the validation and test English sentences are not trained on either."""
    if not corpus_available("tatoeba-extra-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    splits = load_splits("tatoeba-extra-en-zh")
    trained = {normalise_english(e.source) for e in splits.train} | {normalise_english(en) for en, _ in splits.lexicon}
    protected = protected_english()
    assert {normalise_english(r.english) for r in ROWS} <= protected
    assert {normalise_english(e.source) for e in read_everyday("zh")} <= protected
    assert normalise_english("Mary calls her brother every evening.") in protected  # the gold alignment sets
    assert trained & protected == set()
    assert trained & {normalise_english(e.source) for e in splits.valid + splits.test} == set()


def test_no_listed_sentence_is_in_the_en_zh_machine_learning_corpus():
    """The corpus with machine-learning text (issue 32): no protected sentence in its training pairs, word pairs,
    names, places or terms; no held-out English sentence (everyday or machine-learning) trained on; and the
    machine-learning validation and test sets are whole pages no training pair comes from."""
    if not corpus_available("tatoeba-extra-ml-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    from model.data import split_ml_pages

    splits = load_splits("tatoeba-extra-ml-en-zh", name_copies=3)
    trained = {normalise_english(e.source) for e in splits.train}
    trained |= {normalise_english(en) for en, _ in splits.lexicon + splits.names + splits.terms}
    assert trained & protected_english() == set()
    held_out = splits.valid + splits.test + splits["ml_valid"] + splits["ml_test"]
    assert trained & {normalise_english(e.source) for e in held_out} == set()
    assert len(splits["ml_valid"]) >= 400 and len(splits["ml_test"]) >= 900
    pages = split_ml_pages(DEFAULT_DATA_DIR)
    ml_trained = {pair for pair in pages["train"]}
    assert ml_trained & set(pages["ml_valid"] + pages["ml_test"]) == set()
    # the lesson's words are in what the model learns from
    assert ("encoder", "编码器") in splits.terms and ("Munich", "慕尼黑") in splits.names


def test_no_listed_sentence_is_in_the_en_de_names_fine_tune():
    """The en-de names corpus (name-substituted copies included) holds no protected sentence, and no validation
    or test English sentence of the en-de model."""
    if not corpus_available("names-en-de"):
        pytest.skip("shared corpora not beside the repo")
    splits = load_splits("names-en-de")
    trained = {normalise_english(e.source) for e in splits.train}
    assert trained & protected_english() == set()
    assert trained & {normalise_english(e.source) for e in splits.valid + splits.test} == set()
    # the copies teach many names, where Tatoeba's German side has hardly any but Tom and Mary
    names = read_names(DEFAULT_DATA_DIR / "en-zh-extra" / "cedict-names.tsv")
    seen = {word for e in splits.train for word in re.findall(r"[A-Z][a-z]+", e.source) if word in names}
    assert len(seen) > 400

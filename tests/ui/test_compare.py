"""The two-sentence view starts its head ranking on the words a minimal pair is about, in the language the
checkpoint reads (issue 58: the seeds' 狗追猫 / 猫追狗 for a Chinese source)."""

from __future__ import annotations

from ui.checkpoints import MINIMAL_PAIRS
from ui.compare import default_tracked


def test_an_english_pair_starts_on_its_own_words():
    labels = ["▁The", "▁dog", "▁chase", "s", "▁the", "▁cat", ".", "</s>"]
    other = ["▁The", "▁cat", "▁chase", "s", "▁the", "▁dog", ".", "</s>"]
    sentences = ("The dog chases the cat.", "The cat chases the dog.")
    assert default_tracked(labels, other, sentences, MINIMAL_PAIRS["en"], "en") == (2, 1, 5)


def test_the_seeds_chinese_pair_starts_on_chase_dog_and_cat():
    labels, other = ["狗", "追", "猫", "。", "</s>"], ["猫", "追", "狗", "。", "</s>"]
    assert default_tracked(labels, other, ("狗追猫。", "猫追狗。"), MINIMAL_PAIRS["zh"], "zh") == (1, 0, 2)
    # a sentence that is no pair: the first words the two sentences share
    assert default_tracked(labels, other, ("狗追猫。", "x"), MINIMAL_PAIRS["zh"], "zh") == (0, 1, 2)

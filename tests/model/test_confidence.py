"""The unsure-translation note: its score is the model's own, its threshold separates what it should."""

from __future__ import annotations

import math

import pytest

from model import confidence
from model.checkpoint import load_checkpoint
from model.decode import translate

from ..conftest import ROOT, TINY_PAIRS


def test_mean_log_prob_is_the_mean_natural_log_per_piece():
    assert confidence.mean_log_prob([1.0, 1.0]) == 0.0
    assert confidence.mean_log_prob([math.exp(-1), math.exp(-3)]) == pytest.approx(-2.0)


def test_threshold_falls_between_the_bad_and_the_good():
    scores = [-3.0, -2.5, -0.5, -0.2]
    assert confidence.choose_threshold(scores, [True, True, False, False]) == pytest.approx(-1.5)


def test_a_threshold_held_to_a_precision_flags_only_where_nearly_all_were_wrong():
    """Issue 59: the F1 threshold flagged the seeds' own right translation. Held to 90 % precision on these
    judgements, it stops below the good translation among the bad ones."""
    scores = [-1.2, -0.9, -0.8, -0.6, -0.5, -0.45, -0.3, -0.2, -0.1]
    bad = [True, True, True, True, False, True, False, False, False]
    assert confidence.choose_threshold(scores, bad) == pytest.approx(-0.375)  # F1: flags the good -0.5 too
    assert confidence.choose_threshold(scores, bad, min_precision=0.9) == pytest.approx(-0.55)
    assert confidence.choose_threshold(scores, [False] * 9, min_precision=0.9) < min(scores)  # flags nothing


def test_the_rule_measured_on_held_out_halves_keeps_its_precision_where_the_score_separates():
    """cross_validated chooses on one random half and measures on the other: where every wrong translation scores
    below every right one, no right one is ever marked; an app sentence translated right, always among the
    choosing ones, keeps the threshold below it."""
    judged = [(-2.0 + i / 20, True) for i in range(20)] + [(-0.5 + i / 40, False) for i in range(20)]
    precision, recall = confidence.cross_validated(judged, rounds=50)
    assert precision == 1.0 and recall > 0.8
    _, recall_below_app = confidence.cross_validated(judged, [(-1.5, False)], rounds=50)
    assert recall_below_app <= 0.5  # only the wrong ones under -1.5 (half of them) are marked now


def test_a_note_counts_the_judged_translations_as_unsure_as_its_own():
    calibration = confidence.Calibration(
        -0.55, None, 4, 4, 2, 2, 1.0, 1.0, 0.0, 0.9, [(-1.0, True), (-0.7, True), (-0.6, False), (-0.2, False)]
    )
    assert calibration.wrong_at_most(-0.8) == (1, 1)
    assert calibration.wrong_at_most(-0.6) == (2, 3)
    assert calibration.evidence(-0.8) == (1, 1, False)
    # less sure than any judged translation: not "0 of 0 as low were wrong", but those under the threshold
    assert calibration.evidence(-1.3) == (2, 3, True)


@pytest.mark.slow
def test_batched_scores_equal_what_the_app_shows(tiny_model, tiny_tokenizers):
    """The calibration reads the same number the page reads from a Translation, not a drifting copy."""
    source, target = tiny_tokenizers
    sentences = [en for en, _ in TINY_PAIRS[:6]]
    batched = confidence.greedy_with_confidence(tiny_model, source, target, sentences)
    for sentence, (text, score) in zip(sentences, batched):
        tr = translate(tiny_model, source, target, sentence, need_qkv=False)
        assert text == tr.target_text
        assert score == pytest.approx(confidence.mean_log_prob(tr.token_probs), abs=1e-4)


@pytest.mark.slow
@pytest.mark.checkpoint
def test_shipped_en_zh_calibration_flags_a_jumble_and_not_a_plain_sentence():
    calibration = confidence.load_calibration(ROOT / "checkpoints" / "en-zh")
    assert calibration is not None and 0 < calibration.recall <= 1 and 0 < calibration.precision <= 1
    loaded = load_checkpoint(ROOT / "checkpoints" / "en-zh")

    def unsure(sentence):
        tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence, need_qkv=False)
        return calibration.unsure(tr.token_probs)

    assert not unsure("I am a student.")
    assert unsure("Quantum chromodynamics renormalises the gluon propagator asymptotically.")


@pytest.mark.slow
@pytest.mark.checkpoint
@pytest.mark.parametrize("name", ["en-zh", "en-de", "zh-en"])
def test_no_sentence_the_app_offers_that_is_translated_right_is_flagged(name):
    """Issue 59: "Tom chases Jerry." -> 汤姆追着杰瑞。 is right, yet "Probably wrong" sat above every view. Every
    example, minimal pair and lesson sentence whose greedy translation holds its must-translate words carries no
    unsure note; and the threshold was chosen for CHOICE_PRECISION on the judged validation translations, which
    holds TARGET_PRECISION on random held-out halves of all the judgements (on zh-en's own 200 test judgements it
    holds 0.86: the model cards)."""
    from model.data import must_translate_rows
    from model.evaluate import translated_right

    folder = ROOT / "checkpoints" / name
    calibration = confidence.load_calibration(folder)
    assert calibration.min_precision == confidence.CHOICE_PRECISION and calibration.judged
    assert calibration.cross_validated_precision >= confidence.TARGET_PRECISION
    loaded = load_checkpoint(folder)
    source, language = loaded.metadata["source_language"], loaded.metadata["target_language"]
    rows = [r for r in must_translate_rows(source) if r.language == language and r.group == "app"]
    flagged_right = []
    for row in rows:
        tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, row.english, need_qkv=False)
        right = translated_right(tr.target_text, row.words, language)
        if right and tr.target_text not in READ_AS_WRONG and calibration.unsure(tr.token_probs):
            flagged_right.append((row.english, tr.target_text))
    assert flagged_right == []


# Translations that hold their must-translate words but that a reader judges wrong: a note on them is no false alarm.
# (en-zh stages 9 and 10 wrote "the animal street did not cross the road", 动物街上没有过马路，因为太累了。: 动物街上 is
# no phrase; stage 11 writes neither it nor another such translation of the app's rows.)
READ_AS_WRONG: set[str] = set()


def test_judgements_may_carry_the_judges_note_and_an_unjudged_row_is_refused(tmp_path):
    """confidence_labels.tsv: split, source, translation, good|bad, and optionally why (zh-en's judge wrote one for
    every bad row); a row still "unjudged" (judgement_sample.py, stale_judgements.py) must not count as good."""
    from model.confidence import read_labels

    path = tmp_path / "labels.tsv"
    path.write_text(
        "# split\tsource\ttranslation\tjudgement\tnote\n"
        "valid\t猫追狗。\tThe cat ran after the dog.\tgood\n"
        'test\t早上好。\tIt\'s OK in the morning.\tbad\tnot "Good morning"\n',
        encoding="utf-8",
    )
    assert read_labels(path) == {
        "valid": [("猫追狗。", "The cat ran after the dog.", False)],
        "test": [("早上好。", "It's OK in the morning.", True)],
    }
    path.write_text("valid\t猫追狗。\tThe cat ran after the dog.\tunjudged\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unjudged"):
        read_labels(path)

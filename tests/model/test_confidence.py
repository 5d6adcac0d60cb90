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

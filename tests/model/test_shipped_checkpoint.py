"""The checkpoint that ships in checkpoints/en-zh: its shape, fixed translations, and a BLEU floor."""

from __future__ import annotations

import pytest

from model.checkpoint import load_checkpoint
from model.data import DEFAULT_DATA_DIR, load_splits
from model.decode import translate
from model.evaluate import score, translate_corpus

from ..conftest import SHIPPED

EXPECTED = {
    "Tom is reading a book.": "汤姆在读一本书。",
    "I don't know what to do.": "我不知道要做什么。",
    "She bought a red car yesterday.": "她昨天买了一辆红色的汽车。",
    "The cat is sleeping on the sofa.": "猫正在沙发上睡觉。",
    "We will visit our grandmother next week.": "我们下周会去拜访我们的祖母。",
    "Where is the train station?": "火车站在哪里？",
}


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(SHIPPED)


def test_has_the_papers_layout(shipped):
    cfg = shipped.model.cfg
    assert (cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads) == (6, 6, 8)
    assert shipped.metadata["source_language"] == "en" and shipped.metadata["target_language"] == "zh"


@pytest.mark.parametrize("sentence", list(EXPECTED))
def test_translates_fixed_sentences_to_fixed_outputs(shipped, sentence):
    result = translate(shipped.model, shipped.source_tokenizer, shipped.target_tokenizer, sentence)
    assert result.target_text == EXPECTED[sentence]
    assert result.finished and all(p > 0 for p in result.token_probs)


@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "tatoeba-en-zh").exists(), reason="shared corpus not beside the repo")
def test_bleu_floor_on_the_first_300_test_sentences(shipped):
    examples = load_splits("tatoeba-en-zh").test[:300]
    hyps = translate_corpus(shipped.model, shipped.source_tokenizer, shipped.target_tokenizer,
                            [e.source for e in examples])
    # Measured 35.74 (greedy, sacrebleu 2.6, tok:zh); the floor leaves room for numeric noise across machines.
    assert score(hyps, examples, tokenize="zh")["bleu"] >= 33.0

"""The reduced speed benchmark CI runs (benchmarks/ has the full one): ratios between two ways of doing the same
work, measured alternately in one process, never absolute times (CI machines are shared and noisy). Each ratio
takes the fastest of several alternating runs, and its bound leaves room for noise: a test fails when a lever
is lost (the key/value cache, cheap capture, the lead over Marian), not when the machine is busy."""

from __future__ import annotations

import sys
import time

import pytest
import torch

from model import decode

from ..conftest import ROOT, SHIPPED

sys.path.insert(0, str(ROOT / "benchmarks"))
from decoding_speed import marian_model, marian_translate, our_model, sentence_of  # noqa: E402

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.slow,
    pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped tokenizers"),
]


def fastest(runs: dict, repeats: int = 5) -> dict[str, float]:
    """The fastest time of each function over `repeats` alternating rounds (after one warm-up round)."""
    best = {name: float("inf") for name in runs}
    for round_ in range(repeats + 1):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            if round_:
                best[name] = min(best[name], time.perf_counter() - start)
    return best


@pytest.fixture(scope="module")
def setup():
    from model.checkpoint import load_checkpoint

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the benchmark table: one thread each, comparable on any machine
    loaded = load_checkpoint(SHIPPED)
    model = our_model(loaded.source_tokenizer.vocab_size, loaded.target_tokenizer.vocab_size)
    text = sentence_of(loaded.source_tokenizer, 40)
    ids = decode.encode_source(loaded.source_tokenizer, text, model.cfg.max_len)[0]
    yield model, loaded, text, ids
    torch.set_num_threads(threads)


def test_the_key_value_cache_pays(setup):
    model, _, _, ids = setup
    t = fastest(
        {
            "cached": lambda: decode.beam_search(model, ids, 1, record=True, need_qkv=True),
            "full": lambda: decode.beam_search(model, ids, 1, record=True, need_qkv=True, incremental=False),
        },
        repeats=3,
    )
    assert t["cached"] < 0.8 * t["full"], t


def test_capturing_every_attention_map_costs_little(setup):
    model, loaded, text, ids = setup
    steps = decode.max_output_length(model, len(ids))
    t = fastest(
        {
            "capture": lambda: decode.translate_hypotheses(
                model, loaded.source_tokenizer, loaded.target_tokenizer, text
            ),
            "plain": lambda: decode.beam_search(model, ids, 1, max_len=steps),
        }
    )
    assert t["capture"] < 1.3 * t["plain"], t  # benchmarks/README.md: +3 to +24 % on a quiet machine


def test_faster_than_marian_generate_with_attentions(setup):
    pytest.importorskip("transformers")
    model, loaded, text, ids = setup
    marian = marian_model(max(loaded.source_tokenizer.vocab_size, loaded.target_tokenizer.vocab_size))
    steps = decode.max_output_length(model, len(ids))
    t = fastest(
        {
            "ours": lambda: decode.translate_hypotheses(
                model, loaded.source_tokenizer, loaded.target_tokenizer, text, beam_size=4
            ),
            "marian": lambda: marian_translate(marian, ids, 4, steps),
        },
        repeats=3,
    )
    assert t["ours"] < 1.0 * t["marian"], t  # benchmarks/README.md has the measured ratios

"""Measured head roles: importance from head gates, positional and rare-word heads from argmax positions."""

import numpy as np
import torch

from model.checkpoint import load_checkpoint
from model.roles import COLUMNS, argmax_offsets, head_importance, measure_roles, rare_piece_share


def test_a_previous_token_head_has_its_argmax_at_offset_minus_one_for_every_query_but_the_first():
    n = 5
    previous = np.zeros((1, 1, n, n))
    previous[0, 0, 0, 0] = 1
    for q in range(1, n):
        previous[0, 0, q, q - 1] = 1
    shares = argmax_offsets(previous)
    assert shares[-1][0, 0] == 0.8 and shares[0][0, 0] == 0.2 and shares[1][0, 0] == 0.0


def test_the_rare_word_share_counts_queries_whose_largest_weight_is_on_the_rarest_piece():
    attention = np.full((1, 2, 4, 4), 0.1)
    attention[0, 0, :, 2] = 0.7  # head 1 looks at piece 2 from every query
    attention[0, 1, :2, 2] = 0.7  # head 2 from half of them
    rarity = np.array([1.0, 2.0, 5.0, -np.inf])
    np.testing.assert_allclose(rare_piece_share(attention, rarity), [[1.0, 0.5]])


def test_a_head_that_adds_nothing_has_zero_importance(tiny_model, tiny_tokenizers):
    src, tgt = tiny_tokenizers
    attention = tiny_model.encoder_layers[0].self_attention
    d_k = attention.d_k
    with torch.no_grad():
        attention.w_o.weight[:, :d_k] = 0  # head 1 of encoder layer 1 writes nothing to the residual stream
    pairs = [
        (src.encode(s), tgt.encode(t)) for s, t in [("I like tea.", "我喜欢茶。"), ("Tom drinks tea.", "汤姆喝茶。")]
    ]
    importance = head_importance(tiny_model, pairs)
    assert importance["encoder_self"][0, 0] == 0.0 and (importance["encoder_self"][0, 1:] > 0).all()
    np.testing.assert_allclose(np.linalg.norm(importance["cross"], axis=1), 1.0, rtol=1e-5)  # per-layer L2 norm


def test_the_roles_table_has_a_row_per_head_and_names_the_best_aligners(tiny_checkpoint):
    loaded = load_checkpoint(tiny_checkpoint)
    alignment = {
        "results": [
            {"method": "attention", "layer": 2, "head": 3, "aer": 0.3},
            {"method": "attention", "layer": 1, "head": 1, "aer": 0.9},
        ]
    }
    frame = measure_roles(
        loaded,
        ["I like tea.", "Tom drinks tea.", "We drink water."],
        ["我喜欢茶。", "汤姆喝茶。", "我们喝水。"],
        alignment,
    )
    cfg = loaded.model.cfg
    assert list(frame.columns) == COLUMNS and len(frame) == 3 * cfg.n_encoder_layers * cfg.n_heads
    aligner = frame[(frame.kind == "cross") & (frame.layer == 2) & (frame["head"] == 3)].iloc[0]
    assert aligner.role == "alignment" and aligner.evidence == "AER 0.30"
    assert "alignment" not in frame[(frame.kind == "cross") & (frame.layer == 1) & (frame["head"] == 1)].iloc[0].role
    assert frame[frame.kind == "encoder_self"].positional_share.between(0, 1).all()

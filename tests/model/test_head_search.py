"""Word-pair head search: the ranking on constructed maps and on a tiny model built to have one linking head."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from model import head_search
from model.decode import translate


def uniform_maps(layers=2, heads=3, n=4) -> np.ndarray:
    return np.full((layers, heads, n, n), 1.0 / n)


def set_row(maps, layer, head, query, row):
    maps[layer, head, query] = np.asarray(row) / np.sum(row)


def test_the_head_that_links_the_pair_ranks_first_with_its_map_value():
    maps = uniform_maps()
    set_row(maps, 1, 1, query=1, row=[0.05, 0.05, 0.0, 0.9])
    ranked = head_search.rank_heads(maps, query=1, key=3)
    assert (ranked[0].layer, ranked[0].head) == (1, 1)  # from 0, as everywhere in model/
    assert ranked[0].weight == pytest.approx(maps[1, 1, 1, 3])
    assert len(ranked) == 6 and {(h.layer, h.head) for h in ranked} == {
        (layer, h) for layer in (0, 1) for h in (0, 1, 2)
    }
    # every score is the map's own value at that cell
    for h in ranked:
        assert h.weight == maps[h.layer, h.head, 1, 3]


def test_lift_ranks_a_head_that_links_this_query_above_one_that_sends_every_query_there():
    maps = uniform_maps()
    for query in range(4):  # a sink: every query puts 0.8 on key 3
        set_row(maps, 0, 0, query, [0.2 / 3, 0.2 / 3, 0.2 / 3, 0.8])
    set_row(maps, 1, 2, 1, [0.1, 0.2, 0.1, 0.6])  # only query 1 looks at key 3
    by_weight = head_search.rank_heads(maps, 1, 3, by="weight")
    by_lift = head_search.rank_heads(maps, 1, 3, by="lift")
    assert (by_weight[0].layer, by_weight[0].head) == (0, 0)
    assert (by_lift[0].layer, by_lift[0].head) == (1, 2)
    assert by_weight[0].lift == pytest.approx(1.0)  # the sink's weight is its average: no lift


def test_decoder_pairs_use_only_visible_cells():
    n = 4
    mask = np.triu(np.ones((n, n), dtype=bool), 1)
    maps = np.tril(np.random.default_rng(0).random((1, 2, n, n)))
    maps /= maps.sum(-1, keepdims=True)
    with pytest.raises(ValueError, match="masked"):
        head_search.rank_heads(maps, 1, 2, mask)
    assert head_search.visible_keys(mask, 1, n) == [0, 1]
    ranked = head_search.rank_heads(maps, 2, 1, mask, by="lift")
    # lift divides by the mean over queries 1..3 (query 0 cannot see key 1)
    top = ranked[0]
    expected = maps[0, top.head, 2, 1] / maps[0, top.head, 1:, 1].mean()
    assert top.lift == pytest.approx(expected)


def test_a_tiny_model_built_with_one_linking_head_is_found(tiny_model, tiny_tokenizers):
    """Encoder layer 1, head 2 is given weights that make every query look at the piece ▁tea; the search over
    the model's own attention finds that head first, with the weight the map shows."""
    source, target = tiny_tokenizers
    model = copy.deepcopy(tiny_model)
    tea = source.encode("tea")[-1]
    attention = model.encoder_layers[0].self_attention
    d_k, head = attention.d_k, 1
    rows = slice(head * d_k, (head + 1) * d_k)
    with torch.no_grad():
        direction = torch.zeros(model.cfg.d_model)
        direction[0] = 1.0
        model.src_embed.lookup.weight[tea] = 0.0
        model.src_embed.lookup.weight[tea, 0] = 3.0  # ▁tea stands out along feature 0
        attention.w_q.weight[rows] = 0.0
        attention.w_q.bias[rows] = 5.0  # every query the same, large
        attention.w_k.weight[rows] = 0.0
        attention.w_k.weight[rows, 0] = 5.0  # a key is large when feature 0 is
        attention.w_k.bias[rows] = 0.0
    result = translate(model, source, target, "I like tea.")
    position = result.source_ids.index(tea)
    ranked = head_search.rank_heads(result.attention("encoder_self"), query=0, key=position)
    assert (ranked[0].layer, ranked[0].head) == (0, head)
    assert ranked[0].weight > 0.9
    assert ranked[0].weight == result.attention("encoder_self")[0, head, 0, position]


def test_word_level_maps_merge_each_head():
    maps = uniform_maps(n=3)
    merged, queries, keys, _ = head_search.maps_at_level(maps, ["▁I", "▁li", "ke"], ["▁I", "▁li", "ke"], None, True)
    assert queries == keys == ["▁I", "▁like"] and merged.shape == (2, 3, 2, 2)
    np.testing.assert_allclose(merged.sum(-1), 1.0)

"""Attention figures are true to the arrays: labels, masks, rows, escaping."""

import html

import numpy as np
import pytest

from viz.attention import MASKED_COLOR, attention_grid, attention_heatmap, causal_mask, mean_over_heads
from viz.tables import attention_csv, attention_frame


def random_attention(n_q, n_k, masked=None, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((n_q, n_k))
    if masked is not None:
        scores = np.where(masked, -np.inf, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_axes_are_labelled_with_tokens_and_named():
    queries, keys = ["<s>", "我", "喜欢"], ["▁I", "▁like", "▁tea", ".", "</s>"]
    fig = attention_heatmap(random_attention(3, 5), queries, keys, "decoder position (query)", "encoder position (key)")
    # Tick text is the tokens, HTML-escaped (Plotly shows "&lt;s&gt;" as "<s>").
    assert list(fig.layout.yaxis.ticktext) == [html.escape(q) for q in queries]
    assert list(fig.layout.xaxis.ticktext) == [html.escape(k) for k in keys]
    # A name longer than a short map is high stands upright under it (turned on its side it was cut off)...
    assert fig.layout.yaxis.title.text is None
    assert [a.text for a in fig.layout.annotations] == ["↓ decoder position (query)"]
    assert fig.layout.xaxis.title.text == "encoder position (key)"
    # ...and along the side of a map tall enough for it
    tall = attention_heatmap(random_attention(12, 5), list("abcdefghijkl"), keys, "decoder position (query)", "k")
    assert tall.layout.yaxis.title.text == "decoder position (query)" and not tall.layout.annotations
    assert fig.layout.yaxis.autorange == "reversed"  # first query at the top, like a matrix


def test_repeated_tokens_keep_their_own_rows():
    tokens = ["▁the", "▁cat", "▁the", "▁dog", "</s>"]
    weights = random_attention(5, 5)
    fig = attention_heatmap(weights, tokens, tokens, "q", "k")
    heat = fig.data[0]
    assert list(heat.y) == [0, 1, 2, 3, 4] and list(fig.layout.yaxis.tickvals) == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(np.array(heat.z, dtype=float), weights)


def test_rows_shown_sum_to_one_and_use_a_fixed_scale():
    weights = random_attention(4, 6)
    fig = attention_heatmap(weights, list("abcd"), list("uvwxyz"), "q", "k")
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float).sum(1), 1.0)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)


def test_masked_cells_are_drawn_as_masked_not_as_low_values():
    n = 4
    masked = causal_mask(n)
    weights = random_attention(n, n, masked)
    assert (weights[masked] == 0).all()
    fig = attention_heatmap(weights, list("abcd"), list("abcd"), "q", "k", masked=masked, masked_label="masked")
    shown = np.array(fig.data[0].z, dtype=float)
    assert np.isnan(shown[masked]).all() and not np.isnan(shown[~masked]).any()
    overlay = next(trace for trace in fig.data if trace.name == "masked")
    overlay_z = np.array(overlay.z, dtype=float)
    assert (~np.isnan(overlay_z) == masked).all()
    assert "masked" in overlay.hovertemplate
    np.testing.assert_allclose(np.nansum(shown, axis=1), 1.0)


def test_causal_mask_hides_exactly_the_future():
    assert causal_mask(3).tolist() == [[False, True, True], [False, False, True], [False, False, False]]


def test_hover_names_query_key_and_prediction():
    fig = attention_heatmap(
        random_attention(2, 3),
        ["<s>", "我"],
        ["a", "b", "c"],
        "decoder position (query)",
        "encoder position (key)",
        predicted_tokens=["我", "</s>"],
        predicted_label="predicts",
    )
    heat = fig.data[0]
    assert "decoder position (query)" in heat.hovertemplate and "predicts" in heat.hovertemplate
    assert tuple(heat.customdata[1][2]) == ("我", "c", "&lt;/s&gt;", 1, 2)  # query, key, prediction, positions
    assert "%{y}" not in heat.hovertemplate  # Plotly prints the tick text for %{y}: the piece would show twice


def test_user_text_is_escaped_everywhere():
    evil = "<script>alert(1)</script>"
    fig = attention_heatmap(random_attention(1, 2), [evil], ["<b>x</b>", "y"], "q", "k", title=evil)
    assert "<script>" not in fig.to_json()
    assert fig.layout.yaxis.ticktext[0] == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert fig.layout.xaxis.ticktext[0] == "&lt;b&gt;x&lt;/b&gt;"


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 query"):
        attention_heatmap(random_attention(3, 3), ["a", "b"], ["a", "b", "c"], "q", "k")


def test_grid_shows_every_layer_and_head_as_a_titled_tile_and_frames_the_selected_one():
    attention = np.stack(
        [np.stack([random_attention(4, 5, seed=10 * layer + head) for head in range(3)]) for layer in range(2)]
    )
    fig = attention_grid(attention, highlight=(1, 2))
    # one trace for all six heads, not a subplot each (and the see-through markers a click on a title selects)
    assert [trace.type for trace in fig.data] == ["heatmap", "scatter"]
    tiles = np.array(fig.data[0].z, dtype=float)
    index = np.array(fig.data[0].customdata)
    titles = {a.text: (a.x, a.y) for a in fig.layout.annotations}
    assert list(titles)[:3] == ["L1 H1", "L1 H2", "L1 H3"] and len(titles) == 6
    for layer in range(2):
        for head in range(3):
            # The tile under each title holds that head's weights, and the hover names that layer and head.
            rows, cols = np.nonzero((index[..., 0] == layer + 1) & (index[..., 1] == head + 1))
            tile = tiles[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
            np.testing.assert_allclose(tile, attention[layer, head], rtol=1e-6)
            x, y = titles[f"L{layer + 1} H{head + 1}"]
            assert cols.min() <= x <= cols.max() and y < rows.min()
            assert (index[rows, cols, 2] == rows - rows.min()).all() and (
                index[rows, cols, 3] == cols - cols.min()
            ).all()
    # Gaps between tiles are empty, not zero weights.
    assert np.isnan(tiles).sum() == tiles.size - attention.size
    frame = fig.layout.shapes[0]
    rows, cols = np.nonzero((index[..., 0] == 2) & (index[..., 1] == 3))
    assert frame.x0 < cols.min() and frame.x1 > cols.max() and frame.y0 < titles["L2 H3"][1] and frame.y1 > rows.max()
    assert frame.y0 > 3.5  # below the tile above it, whose last row is row 3
    # a click on a title selects the marker on it, which names that title's layer and head
    markers = fig.data[1]
    for (x, y), (layer, head) in zip(zip(markers.x, markers.y), markers.customdata):
        title_x, title_y = titles[f"L{layer} H{head}"]
        assert x == title_x and title_y - 1 < y < title_y


def test_grid_of_decoder_maps_greys_masked_cells():
    n = 4
    mask = causal_mask(n)
    attention = np.stack([np.stack([np.tril(random_attention(n, n, seed=head)) for head in range(2)])])
    fig = attention_grid(attention, masked=mask)
    weights, grey = (np.array(trace.z, dtype=float) for trace in fig.data if trace.type == "heatmap")
    first = weights[:n, :n]
    assert np.isnan(first[mask]).all() and not np.isnan(first[~mask]).any()
    assert (grey[:n, :n][mask] == 1).all() and np.isnan(grey[:n, :n][~mask]).all()
    assert fig.data[1].colorscale[0][1] == MASKED_COLOR


def test_mean_over_heads_keeps_rows_summing_to_one():
    heads = np.stack([random_attention(3, 4, seed=s) for s in range(8)])
    np.testing.assert_allclose(mean_over_heads(heads).sum(-1), 1.0)


def test_csv_has_position_labelled_rows_and_columns():
    weights = random_attention(2, 3)
    frame = attention_frame(weights, ["<s>", "=1+1"], ["a", "a", "</s>"])
    assert list(frame.index) == ["0:<s>", "1:=1+1"] and list(frame.columns) == ["0:a", "1:a", "2:</s>"]
    csv = attention_csv(weights, ["<s>", "我"], ["a", "b", "c"], "decoder position (query)")
    lines = csv.splitlines()
    assert lines[0] == "decoder position (query),0:a,1:b,2:c"
    assert sum(float(v) for v in lines[1].split(",")[1:]) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("rows", [11, 17])
@pytest.mark.parametrize(
    "query_axis", ["decoder position (query): reads → next piece", "解码器位置（查询）：读入 → 下一个子词"]
)
def test_a_presentation_map_of_long_source_words_stays_within_its_height(rows, query_axis):
    """Under the unsure note a presentation map has 402 px: upright 18 px labels of long English words
    ("grandmother", eleven rows) ran 17 px past a 768 px screen, a bad translation of ten words in sixteen pieces
    (17 rows) 59 px. The key labels shrink to the page's own 12 px before the rows shrink, and no label goes under
    8 px."""
    farmer = ["▁The", "▁farmer", "'", "s", "▁daughter", "▁quietly", "▁st", "it", "ched", "▁a", "▁quilt", "▁for"]
    farmer += ["▁the", "▁winter", ".", "</s>"]
    grandmother = ["▁My", "▁grandmother", "▁patiently", "▁knitted", "▁a", "▁scarf", "▁for", "▁the", "▁cold"]
    keys = grandmother + ["▁winter", ".", "</s>"] if rows == 11 else farmer
    queries = [f"{i}: 农夫 → 的" for i in range(rows)]
    weights = np.full((rows, len(keys)), 1 / len(keys))
    fig = attention_heatmap(
        weights, queries, keys, query_axis, "encoder position (key)", "title", font_scale=1.5, max_height=402
    )
    assert fig.layout.height <= 402
    assert fig.layout.xaxis.tickfont.size >= 12 and fig.layout.yaxis.tickfont.size >= 8
    # room for the rows is taken from the key labels first: eleven rows keep their 12 px presentation labels
    if rows == 11:
        assert fig.layout.yaxis.tickfont.size == 12

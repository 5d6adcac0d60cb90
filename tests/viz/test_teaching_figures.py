"""Positional encoding, softmax scaling and step-by-step figures show the numbers the paper argues with."""

import numpy as np
import pytest
import torch

from model.decode import translate
from model.transformer import sinusoidal_positional_encoding
from viz.attention import causal_mask
from viz.escape import markdown_literal
from viz.positional import position_similarity, positional_curves, positional_heatmap
from viz.softmax import (
    dot_product_variance,
    entropy,
    saturation_statistics,
    softmax,
    softmax_gradient_norm,
    softmax_pair_figure,
)
from viz.steps import attention_steps, steps_figure, steps_table
from words import STRINGS


def test_positional_heatmap_shows_the_encoding_itself():
    pe = sinusoidal_positional_encoding(20, 16).numpy()
    fig = positional_heatmap(pe)
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), pe)
    curves = positional_curves(pe, [0, 1, 6])
    assert [trace.name for trace in curves.data] == ["dim 0 (sin)", "dim 1 (cos)", "dim 6 (sin)"]
    np.testing.assert_allclose(curves.data[2].y, np.sin(np.arange(20) / 10000 ** (6 / 16)), atol=1e-6)


def test_position_similarity_depends_only_on_distance():
    sim = position_similarity(sinusoidal_positional_encoding(30, 64).numpy())
    for offset in (0, 1, 5):
        diagonal = np.diagonal(sim, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    assert sim[0, 0] == pytest.approx(32.0, abs=1e-4)  # d_model/2 sin^2 + cos^2 pairs
    assert (np.argmax(sim, axis=1) == np.arange(30)).all()


def test_dot_product_variance_grows_like_d_k_and_scaling_fixes_it():
    stats = dot_product_variance([4, 64, 256], n_samples=20000)
    np.testing.assert_allclose(stats["unscaled"], [4, 64, 256], rtol=0.08)
    np.testing.assert_allclose(stats["scaled"], 1.0, rtol=0.08)


def test_unscaled_softmax_saturates_as_d_k_grows():
    stats = saturation_statistics([4, 64, 512], n_keys=10, n_trials=300)
    unscaled_max, scaled_max = stats["max_weight"]["unscaled"], stats["max_weight"]["scaled"]
    assert unscaled_max[0] < unscaled_max[1] < unscaled_max[2] and unscaled_max[2] > 0.85
    assert np.ptp(scaled_max) < 0.1  # with scaling the peak stays about the same at any d_k
    assert stats["gradient_norm"]["unscaled"][2] < 0.3 * stats["gradient_norm"]["scaled"][2]
    assert stats["entropy"]["unscaled"][2] < stats["entropy"]["scaled"][2]


def test_softmax_helpers():
    p = softmax(np.array([1.0, 2.0, 3.0]), masked=np.array([False, False, True]))
    assert p[2] == 0 and p.sum() == pytest.approx(1.0)
    assert entropy(np.array([0.25] * 4)) == pytest.approx(np.log(4))
    assert softmax_gradient_norm(np.array([1.0, 0.0, 0.0])) == pytest.approx(0.0)


def test_softmax_pair_figure_compares_the_same_scores():
    scores = np.array([8.0, 0.0, -4.0])
    labels = dict(unscaled="raw", scaled="scaled", title="", x="key", y="weight")
    fig = softmax_pair_figure(scores, 64, ["a", "b", "c"], labels)
    np.testing.assert_allclose(fig.data[0].y, softmax(scores))
    np.testing.assert_allclose(fig.data[1].y, softmax(scores / 8))
    assert fig.data[0].y[0] > fig.data[1].y[0]


STEP_LABELS = dict(
    key="key",
    scores="scores",
    scaled="scaled",
    mask="mask",
    weights="weights",
    masked="masked",
    q="q",
    k="K",
    v="V",
    output="out",
)


@pytest.mark.parametrize("kind", ["encoder_self", "decoder_self", "cross"])
def test_step_by_step_reproduces_the_models_attention_row(tiny_model, tiny_tokenizers, kind):
    """The step-by-step view recomputes softmax(q·K/√d_k) from the model's own Q and K: it must land exactly on
    the weights the model returned, for every layer, head and query."""
    result = translate(tiny_model, *tiny_tokenizers, "Tom drinks tea.")
    qkv, attention = result.record.qkv[kind], result.attention(kind)
    n_layers, n_heads, n_queries, _ = attention.shape
    for layer in range(n_layers):
        for head in range(n_heads):
            for query in range(n_queries):
                masked = causal_mask(n_queries)[query] if kind == "decoder_self" else None
                steps = attention_steps(
                    qkv["q"][layer, head, query], qkv["k"][layer, head], qkv["v"][layer, head], masked
                )
                np.testing.assert_allclose(steps.weights, attention[layer, head, query], atol=1e-5)


def test_step_by_step_output_is_the_heads_weighted_sum(tiny_model, tiny_tokenizers):
    """The head output Σ w_j v_j, concatenated over heads and passed through W_O, is the layer's real output."""
    result = translate(tiny_model, *tiny_tokenizers, "I like tea.")
    qkv = result.record.qkv["encoder_self"]
    n_heads = qkv["q"].shape[1]
    outputs = [attention_steps(qkv["q"][0, h, 1], qkv["k"][0, h], qkv["v"][0, h]).output for h in range(n_heads)]
    layer = tiny_model.encoder_layers[0].self_attention
    with torch.no_grad():
        expected = layer.w_o(torch.tensor(np.concatenate(outputs), dtype=torch.float32))
        src = torch.tensor([result.source_ids])
        x = tiny_model.positional(tiny_model.src_embed(src))
        actual = layer(x, x, None).output[0, 1]
    torch.testing.assert_close(expected, actual, atol=1e-5, rtol=1e-4)


def test_steps_table_and_figure_mark_masked_keys():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal(8), rng.standard_normal((3, 8)), rng.standard_normal((3, 8))
    steps = attention_steps(q, k, v, np.array([False, False, True]))
    np.testing.assert_allclose(steps.scaled, (k @ q) / np.sqrt(8))
    assert steps.weights[2] == 0 and steps.weights.sum() == pytest.approx(1.0)
    table = steps_table(steps, ["a", "b", "c"], STEP_LABELS)
    assert list(table["mask"]) == ["", "", "masked"]
    fig = steps_figure(steps, ["a", "b", "c"], STEP_LABELS)
    assert list(fig.data[1].text) == ["", "", "masked"]


def test_both_languages_have_every_string_with_the_same_placeholders():
    import string

    assert STRINGS["en"].keys() == STRINGS["zh"].keys()
    fields = lambda s: {f for _, f, _, _ in string.Formatter().parse(s) if f}  # noqa: E731
    for key in STRINGS["en"]:
        assert fields(STRINGS["en"][key]) == fields(STRINGS["zh"][key]), key


def test_markdown_literal_neutralises_markup():
    assert markdown_literal("<b>*x*</b>") == "\\<b\\>\\*x\\*\\</b\\>"


def test_small_readability_fixes_of_issue_21():
    """Each seen in a browser: a tiny probability read as 0, a PE·PE plot stretched around a narrow square, the
    padding lesson's title cut in its narrow figure, the full stop glued to the last word at word level."""
    from pathlib import Path

    import numpy as np

    from model.tokenizer import group_pieces_into_words
    from model.transformer import sinusoidal_positional_encoding
    from viz.padding import padded_tokens_figure
    from viz.positional import position_similarity_heatmap
    from viz.tables import probability_text, token_table

    assert probability_text(0.00002) == "< 0.0001" and probability_text(0.0002) == "0.0002"
    table = token_table(
        ["a", "b"],
        [0.9, 0.00001],
        [[("a", 0.9)], [("c", 0.5), ("b", 0.00001)]],
        {"position": "p", "piece": "x", "probability": "q", "alternatives": "r"},
    )
    assert table["q"].tolist() == ["0.9000", "< 0.0001"] and table["r"].tolist() == ["", "c 0.5000"]  # the others
    narrow = token_table(
        ["a"],
        [0.5],
        [[("a", 0.5), ("Krankenhaus", 0.2), ("Gast", 0.1)]],
        {"position": "p", "piece": "x", "probability": "q", "alternatives": "r"},
        alternatives_px=150,
    )
    assert narrow["r"][0] == "Krankenhaus 0.2000"  # what fits 150 px whole, not "Krankenhaus 0.2000  Ga"
    fig = position_similarity_heatmap(sinusoidal_positional_encoding(20, 16).numpy())
    assert fig.layout.xaxis.constrain == "domain" and fig.layout.yaxis.constrain == "domain"
    pad = padded_tokens_figure(
        [["a", "<pad>"]],
        np.array([[True, False]]),
        ["s"],
        {"position": "p", "real": "r", "padding": "x", "title": "first line\nsecond line"},
    )
    assert pad.layout.title.text == "first line<br>second line"
    assert group_pieces_into_words(["\u2581Tom", "\u2581chase", "s", "\u2581Jerry", ".", "</s>"]) == [
        [0],
        [1, 2],
        [3],
        [4],
        [5],
    ]
    assert group_pieces_into_words(["\u2581didn", "'", "t"]) == [[0, 1, 2]]  # an apostrophe stays inside
    config = (Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text()
    assert 'toolbarMode = "minimal"' in config  # no Deploy button on a teaching server


def test_the_query_key_plane_shades_where_every_held_out_point_lies_and_labels_the_sentences_points():
    from viz.steps import qk_space_figure

    rng = np.random.default_rng(0)
    queries, keys = rng.normal(size=(4, 2)), rng.normal(size=(5, 2))
    sample_queries, sample_keys = rng.normal(size=(1000, 2)), rng.normal(2.0, 1.0, size=(800, 2))
    labels = dict(
        query="queries",
        key="keys",
        sample_query="where held-out queries lie",
        sample_key="where held-out keys lie",
        weight="weight",
        x="PC 1",
        y="PC 2",
        title="L1 H1",
    )
    fig = qk_space_figure(
        queries,
        keys,
        sample_queries,
        sample_keys,
        list("abcd"),
        list("vwxyz"),
        1,
        np.array([0.5, 0.3, 0.1, 0.1, 0.0]),
        labels,
    )
    shades = [t for t in fig.data if t.type == "heatmap"]
    assert len(shades) == 2
    for shade, expected in zip(shades, (1000, 800)):  # the shading is the square root of each cell's count
        assert np.nansum(np.asarray(shade.z, dtype=float) ** 2) == pytest.approx(expected)
        cell = np.diff(shade.x)[0]
        assert np.diff(shade.y)[0] == pytest.approx(cell)  # square cells on axes that share one scale
    named = [t.name for t in fig.data if t.type == "scatter" and t.showlegend is not False]
    assert named == ["where held-out queries lie", "where held-out keys lie", "queries", "keys"]
    points = {t.name: t for t in fig.data if t.name in ("queries", "keys")}
    assert list(points["queries"].hovertext) == list("abcd") and len(points["keys"].x) == 5
    assert points["queries"].text[1] == "b"  # the chosen query is always labelled
    assert (
        len([t for t in fig.data if t.type == "scatter" and t.mode == "lines"]) == 4
    )  # a line to each key with a weight ≥ 0.02


def test_words_beside_the_query_key_points_never_cover_one_another():
    """Issue 36: on a ten-word sentence the words of the query-key plane were heaped on one another. Each point's
    word goes above, below, right or left of it where it covers no word placed before it, the chosen query's
    first; one that fits nowhere is left off (hover names it)."""
    from viz.steps import label_boxes, place_labels

    rng = np.random.default_rng(1)
    points = rng.normal(size=(30, 2))  # thirty points in a few hundred pixels: they cannot all have a word
    texts = ["▁because", "猫", "▁the", "▁sat"] * 7 + ["▁a", "▁b"]
    order = list(range(29, -1, -1))
    positions = place_labels(points, texts, order, scale=60.0)
    assert positions[29] == "top center"  # the first to claim room gets its first place
    assert 0 < sum(p is None for p in positions) < 30

    def box(i):
        return label_boxes(points[i], texts[i], scale=60.0)[positions[i]]

    boxes = [box(i) for i in range(30) if positions[i]]
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            p, q = boxes[a], boxes[b]
            assert not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3])
    # nor any point: a word over another point's marker hid it
    for p in boxes:
        for x, y in points * 60.0:
            assert not (p[0] < x < p[2] and p[1] < -y < p[3])
    spread = place_labels(points * 100, texts, order, scale=60.0)
    assert all(spread)  # points far apart all keep their word


def test_long_titles_wrap_inside_the_figure_at_1024_with_the_sidebar_open():
    """Issue 36: the softmax view's last title ran off at "…(d_", the logit lens's at "…probability (col"; a
    title now breaks into lines that fit the 564-px main column, and the figure grows to hold them."""
    from viz import decoding, softmax
    from viz.titles import TITLE_WIDTH
    from viz.widths import display_width

    long = (
        "Your sentence through layer 6, head 8: softmax of the same scores without and with dividing by √d_k (d_k = 64)"
    )
    labels = dict(title=long, x="key", y="weight", unscaled="without", scaled="with", masked="masked")
    short = softmax.softmax_pair_figure(np.array([1.0, 2.0]), 64, ["a", "b"], dict(labels, title="Short"))
    fig = softmax.softmax_pair_figure(np.array([1.0, 2.0]), 64, ["a", "b"], labels)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) >= 2 and all(display_width(line) <= TITLE_WIDTH for line in lines)
    assert " ".join(lines) == long and fig.layout.margin.t > short.layout.margin.t
    lens_labels = dict(layer="layer", step="step", probability="p", rank="rank", top="top", title=long)
    rank = np.ones((2, 3))
    lens = decoding.logit_lens_figure(
        rank, rank * 0.5, [[["x"]] * 3] * 2, np.full((2, 3, 1), 0.5), ["a", "b", "c"], lens_labels
    )
    assert all(display_width(line) <= TITLE_WIDTH for line in lens.layout.title.text.split("<br>"))


def test_column_labels_stay_apart_however_many_columns():
    """Issue 36: with 40 and more pieces the slanted labels lay on one another. Every label shown has at least
    its font's height (plus a pixel each side) of room across, at the main column's width."""
    from viz.titles import MAP_PLOT_PX, column_labels

    for n in (5, 9, 20, 24, 30, 40, 64, 120):
        shown, angle, font = column_labels([f"piece{i}" for i in range(n)])
        assert len(shown) == n and shown[0] == "piece0"
        written = [i for i, label in enumerate(shown) if label]
        room = MAP_PLOT_PX / n * min((b - a for a, b in zip(written, written[1:])), default=n)
        if angle == -90:
            assert room >= font + 2 and font >= 9, (n, room, font)
        elif angle == -45:
            assert room >= 17, (n, room)


def test_long_words_do_not_stand_level_in_narrow_columns():
    """Stage 6 reads "Softmax turns scores into probabilities." as eight whole pieces, and level labels ran
    "▁into" into "▁probabilities" at 1024 px; short pieces stay level, long ones slant (or stand upright in
    presentation mode's map)."""
    from viz.attention import attention_heatmap
    from viz.titles import column_labels

    pieces = ["▁Softmax", "▁turns", "▁score", "s", "▁into", "▁probabilities", ".", "</s>"]
    assert column_labels(pieces)[1] == -45
    assert column_labels(["▁I", "▁like", "▁tea", ".", "</s>"])[1] == 0
    weights = np.full((len(pieces), len(pieces)), 1 / len(pieces))
    for scale, angle in ((1.0, -45), (1.5, -90)):
        fig = attention_heatmap(weights, pieces, pieces, "query", "key", "t", font_scale=scale)
        assert fig.layout.xaxis.tickangle == angle, scale


def test_short_source_pieces_stand_level_in_the_decoding_steps_third():
    """The decoding steps' cross-attention chart is a third of the column (150 px): 猫 追 狗 。 </s> slanted 45°
    for want of half a pixel, each character tilted alone on a projector; one pixel smaller, they stand level.
    Pieces that need more than a pixel still slant."""
    from viz.decoding import THIRD_PLOT_PX
    from viz.titles import column_labels

    assert column_labels(["猫", "追", "狗", "。", "&lt;/s&gt;"], plot_px=THIRD_PLOT_PX) == (
        ["猫", "追", "狗", "。", "&lt;/s&gt;"],
        0,
        11,
    )
    assert (
        column_labels(["▁The", "▁cat", "▁chases", "▁the", "▁dog", ".", "&lt;/s&gt;"], plot_px=THIRD_PLOT_PX)[1] == -45
    )


def test_the_decoding_steps_charts_name_their_tallest_bars():
    """Fourteen source pieces in a third of the column: only every other label fits, and the tallest bar of the
    step's cross-attention (0.83 on ▁animal, the second piece) stood unnamed. It is named now, its neighbours left
    blank so that no two labels touch; a bar under 0.1 gives way to the labels' own spacing."""
    from viz.decoding import decoding_step_figure

    source = "▁The ▁animal ▁didn ' t ▁cross ▁the ▁street ▁because ▁it ▁was ▁too ▁tired .".split() + ["</s>"]
    cross = np.full(len(source), 0.01)
    cross[1], cross[9] = 0.83, 0.06
    labels = dict(self="self", cross="cross", next="next", weight="weight", probability="p")
    fig = decoding_step_figure(0, np.array([1.0]), ["<s>"], cross, source, [("动物", 0.9)], "动物", labels)
    shown = list(fig.layout.xaxis2.ticktext)
    assert shown[1] == "▁animal" and shown[0] == shown[2] == ""
    written = [i for i, label in enumerate(shown) if label]
    assert len(written) > 3 and min(b - a for a, b in zip(written, written[1:])) >= 2  # every other, as fits


def test_chinese_column_labels_turn_upright_sooner_than_latin_ones():
    """A Chinese character fills its line's whole height: nineteen steps of "1: 老师" slanted at 21 px apart lay
    on one another in the logit lens (stage 6's output for a 40-word sentence), where Latin labels still fit."""
    from viz.titles import column_labels

    assert column_labels([f"{i}: step" for i in range(19)])[1] == -45
    shown, angle, _ = column_labels([f"{i}: 老师" for i in range(19)])
    assert angle == -90 and all(shown)
    assert column_labels([f"{i}: 老师" for i in range(12)])[1] == -45  # 33 px apart: room enough


def test_the_room_above_a_map_grows_with_its_longest_label_and_its_angle():
    """One estimate of the column labels' height for every map with labels on top (attention, logit lens,
    explanation): level labels one line whatever their length; turned ones as tall as the longest is long, a
    Chinese character as wide as two Latin ones, upright taller than slanted; blank labels take no room."""
    from viz.titles import column_labels_px

    assert column_labels_px(["a", "a much longer label"], 0, 12) == column_labels_px(["a"], 0, 12)
    latin, chinese = column_labels_px(["abcd"], -90, 12), column_labels_px(["注意力机"], -90, 12)
    assert chinese > latin + 20  # four characters, twice as wide
    assert column_labels_px(["▁Krankenhaus"], -90, 12) > column_labels_px(["▁Krankenhaus"], -45, 12) > 40
    assert column_labels_px(["▁Krankenhaus", ""], -90, 12) == column_labels_px(["▁Krankenhaus"], -90, 12)
    assert column_labels_px(["&lt;s&gt;"], -90, 12) == column_labels_px(["<s>"], -90, 12)  # escaped text as shown


def test_each_faithfulness_value_sits_beyond_its_error_bar():
    """Issue 59: lesson 10's values sat at the bars' ends, where their error bars crossed them."""
    from viz.explanation import faithfulness_bars

    fig = faithfulness_bars(
        ["attention", "integrated gradients", "rollout"],
        [0.2, -0.3, 0.05],
        "title",
        "ρ",
        intervals=[(0.1, 0.35), (-0.5, -0.1), (-0.02, 0.12)],
    )
    placed = {a.y: (a.x, a.xanchor, a.text) for a in fig.layout.annotations}
    assert placed["attention"] == (0.35, "left", "0.20")
    assert placed["integrated gradients"] == (-0.5, "right", "-0.30")
    assert placed["rollout"] == (0.12, "left", "0.05")
    assert fig.data[0].text is None  # no label on the bar itself, under the error bar


def test_the_explanation_lessons_method_names_take_two_lines_not_half_the_column():
    """Lesson 10's map of one piece under every method: "occlusion: log-prob drop without the word (max 14.5)" on
    one line took half the main column, and the map's numbers were 5 px on a projector. Long names break into two
    lines, the map keeps the rest of the column and its column labels stand level."""
    from viz.explanation import ROW_NAME_WIDTH, method_comparison
    from viz.widths import display_width

    names = ["occlusion: log-prob drop without the word (max 14.5)", "norm-weighted ‖α·f(x)‖, layer 6 (max 0.658)"]
    words = "▁The ▁animal ▁didn ' t ▁cross ▁the ▁street ▁because ▁it ▁was ▁too ▁tired .".split()
    fig = method_comparison(np.ones((2, len(words))), names, words, "title", "scaled", "raw")
    for name in fig.layout.yaxis.ticktext:
        lines = name.split("<br>")
        assert len(lines) == 2 and max(display_width(line) for line in lines) <= ROW_NAME_WIDTH, name
    assert "occlusion: log-prob drop" in fig.layout.yaxis.ticktext[0]
    assert fig.layout.xaxis.tickangle in (0, -45)  # the words named, not every other one upright


def test_the_explanation_lessons_row_names_keep_each_number_with_its_words():
    """Wrapped on two lines, the methods' names broke "第 1 层" into "第 1" and "层" and "（最大 0.3）" into
    "（最大" and "0.3）" (read as 最大0.3 and 第 1层 on a projector), and a name with no space broke inside 0.3."""
    from viz.explanation import method_comparison

    names = [
        "遮挡：去掉该词后对数概率的下降（最大 14.5）",
        "积分梯度 · 第 1 层的范数注意力（最大 0.3）",
        "raw attention, layer 1 (max 0.3)",
    ]
    fig = method_comparison(np.ones((3, 3)), names, ["a", "b", "c"], "t", "v", "r")
    for name, shown in zip(names, fig.layout.yaxis.ticktext):
        lines = shown.replace("\u00a0", " ").split("<br>")
        assert "".join(lines).replace(" ", "") == name.replace(" ", "")
        for number in ("第 1 层", "最大 14.5", "最大 0.3", "layer 1", "max 0.3"):
            if number.split(" ")[1] in name and number in name:
                assert any(number.split(" ")[1] in line and number.split(" ")[0][-1] in line for line in lines), shown

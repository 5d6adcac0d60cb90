"""What a student reads must say what the numbers show: one numbering of steps everywhere, "fed" (not
"predicts") under teacher forcing, captions quoting the plotted numbers, masked keys marked, and no English
left in the Chinese interface."""

from __future__ import annotations

import re

import numpy as np
import pytest

from viz import softmax as softmax_viz
from words import STRINGS

from .test_app import each_tab, every_figure, figures, open_tab, run_app


def hover_rows(spec: dict) -> list:
    """customdata of the main heatmap trace: per row, per column [query piece, key piece, predicted]."""
    return spec["data"][0]["customdata"]


def test_one_numbering_of_steps_in_table_hover_and_slider(checkpoint_root):
    at = open_tab(run_app(), "tab_decoder")
    table = at.dataframe[0].value
    steps, pieces = table.iloc[:, 0].tolist(), table.iloc[:, 1].tolist()
    assert steps[0] == 0 and steps == list(range(len(pieces)))
    rows = hover_rows(figures(at)["heatmap-decoder_self"])
    for t, piece in enumerate(pieces):  # row t of the decoder map chose the piece of step t
        assert rows[t][0][2].startswith(piece.replace("<", "&lt;").replace(">", "&gt;"))
    open_tab(at, "tab_decoding").slider(key="decode_step").set_value(1).run()
    assert f"“{pieces[1]}”" in " ".join(c.value for c in at.caption).replace("\\", "")


def test_teacher_forcing_says_fed_and_shows_the_models_own_choice(checkpoint_root):
    at = run_app()
    at.text_input(key="reference").input("我喜欢茶。").run()
    spec = figures(open_tab(at, "tab_cross"))["heatmap-cross"]
    assert "fed:" in spec["data"][0]["hovertemplate"] and "predicts" not in spec["data"][0]["hovertemplate"]
    assert "the model's own top choice" in hover_rows(spec)[0][0][2]
    caption = " ".join(c.value for c in open_tab(at, "tab_decoding").caption)
    assert "Teacher forcing: this step was fed" in caption


def test_a_fed_piece_outside_the_top_five_still_gets_its_green_bar():
    from viz.decoding import decoding_step_figure

    labels = dict(self="s", cross="c", next="n", weight="w", probability="p")
    fig = decoding_step_figure(
        0,
        np.array([1.0]),
        ["<s>"],
        np.array([0.5, 0.5]),
        ["a", "</s>"],
        [("x", 0.5), ("y", 0.2), ("z", 0.1), ("u", 0.1), ("v", 0.05)],
        "蓝",
        labels,
        chosen_probability=0.001,
    )
    bars = fig.data[2]
    assert list(fig.layout.xaxis3.ticktext)[-1] == "蓝" and bars.y[-1] == 0.001
    assert bars.marker.color[-1] == "#2ca02c" and list(bars.marker.color).count("#2ca02c") == 1


def test_the_scaling_caption_quotes_the_plotted_numbers(checkpoint_root):
    at = open_tab(run_app(), "tab_softmax")
    caption = next(c.value for c in at.caption if "variance d_k" in c.value)
    stats = softmax_viz.saturation_statistics([1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
    at64 = softmax_viz.saturation_at(stats, 64)
    assert f"{at64['max_weight_unscaled']:.2f}" in caption and f"{at64['gradient_norm_unscaled']:.3f}" in caption
    assert "independent" in caption and "nearly one-hot" not in caption
    assert (
        f"{at64['near_one_hot_unscaled']:.0%}".replace("%", "\\%") in caption
        or f"{at64['near_one_hot_unscaled']:.0%}" in caption
    )


def test_masked_keys_are_marked_in_the_models_scaling_chart(checkpoint_root):
    at = open_tab(run_app(), "tab_softmax")
    at.radio(key="scaling_kind").set_value("decoder_self").run()
    spec = figures(at)["model-scaling"]
    marks = [trace for trace in spec["data"] if trace.get("name") == "masked (−∞)"]
    n_keys = len(spec["layout"]["xaxis"]["ticktext"])
    assert marks and len(marks[0]["x"]) == n_keys - 1  # query 0 (<s>) sees only itself


def test_wording_divides_by_the_square_root_and_names_both_thresholds():
    english = " ".join(STRINGS["en"].values())
    assert "scaled by √d_k" not in english and "divided by √d_k" in english
    assert "0.7" in STRINGS["en"]["no_named_heads"] and "0.7" in STRINGS["zh"]["no_named_heads"]
    assert "final LayerNorm" in STRINGS["en"]["norm_first_note"]
    assert "词元" not in " ".join(STRINGS["zh"].values())  # one term (子词) for a piece


# Words allowed in the Chinese interface: notation and names, not English sentences.
ALLOWED = {
    "softmax",
    "d_k",
    "d_model",
    "PE",
    "sin",
    "cos",
    "W_O",
    "W_Q",
    "W_K",
    "BLEU",
    "CSV",
    "LayerNorm",
    "Sublayer",
    "Attention",
    "Is",
    "All",
    "You",
    "Need",
    "Transformer",
    "SentencePiece",
    "python",
    "model",
    "probe",
    "checkpoint",
    "split",
    "test",
    "ablate",
    "W_V",
    "pos",
    "CPU",
    "README",
    "Tatoeba",
    "JEC",
    "CC",
    "CEDICT",
    "Unicode",
    "CLDR",
    "Multi30k",
    "chrF",
    "Q",
    "K",
    "V",
    "L",
    "H",
    "x",
    "k",
    "q",
    "v",
    "i",
    "t",
    "n",
}


def english_words(text: str) -> set[str]:
    text = re.sub(r"<[^>]*>|%\{[^}]*\}|&[a-z]+;", " ", text)  # markup, Plotly placeholders, entities
    return {w for w in re.findall(r"[A-Za-z_]{2,}", text) if w not in ALLOWED}


@pytest.mark.slow  # 15 s in the fresh-clone CI run of 2026-12-03 (--durations)
def test_the_chinese_interface_shows_no_english_labels(checkpoint_root):
    at = run_app(lang="zh")
    assert not at.exception
    leftovers = {}
    for key, spec in every_figure(at).items():
        layout = spec["layout"]
        texts = [layout.get("title", {}).get("text", "")]
        for axis in [k for k in layout if k.startswith(("xaxis", "yaxis"))]:
            texts.append(layout[axis].get("title", {}).get("text", ""))
        texts += [a.get("text", "") for a in layout.get("annotations", [])]
        for trace in spec["data"]:
            texts.append(trace.get("hovertemplate", ""))
            if (
                trace.get("type") in ("bar", "scatter")
                and trace.get("showlegend", True)
                and layout.get("showlegend", True)
            ):
                texts.append(trace.get("name", ""))  # a legend entry a reader sees
        words = set().union(*(english_words(str(x)) for x in texts))
        words = {w for w in words if w not in at.session_state["sentence"]}  # the sentence's own pieces ("om")
        if words:
            leftovers[key] = sorted(words)
    assert not leftovers, leftovers


@pytest.mark.slow  # 19 s in the fresh-clone CI run of 2026-12-03 (--durations)
def test_the_chinese_interface_text_has_no_english_sentences(checkpoint_root):
    at = run_app(lang="zh")
    texts = []
    for _ in each_tab(at):
        texts += [
            e.value
            for kind in ("caption", "markdown", "info", "warning", "subheader", "title")
            for e in getattr(at, kind)
            if not e.value.startswith("<style>")
        ]  # the page's fixed CSS
        texts += [
            w.label
            for kind in (
                "selectbox",
                "radio",
                "multiselect",
                "slider",
                "text_input",
                "checkbox",
                "select_slider",
                "button",
            )
            for w in getattr(at, kind)
        ]
    sentence = at.session_state["sentence"]
    leftovers = set()
    for text in texts:
        text = re.sub(r"`[^`]*`", " ", text.replace(sentence, " "))  # code spans and the user's own sentence
        leftovers |= english_words(text.replace("\\", ""))
    leftovers -= {"English", "Chinese"}  # the language radio names each language in its own tongue
    assert not leftovers, sorted(leftovers)

"""The handout (viz.handout): one web page of a translation that holds every map the model computed,
needs nothing from the network, keeps user text inert, and carries a Chinese font with just its own characters."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from model import decode
from model.checkpoint import load_checkpoint
from viz import cjk
from viz.handout import handout, handout_html, map_font_px, map_layout
from viz.handout import page_data as build_page_data
from viz.titles import MAP_PLOT_PX

from ..conftest import SHIPPED

LABEL_KEYS = ("title", "pieces", "position", "piece", "probability", "grid", "grid_hint", "footer", "layer", "head")
LABEL_KEYS += ("layer_n", "head_n", "mean", "weight", "masked", "mean_short")


def page_data(page: str) -> dict:
    return json.loads(re.search(r"const DATA = (\{.*?\});\n", page).group(1))


def outside_scripts(page: str) -> str:
    """The page without the text of its <script> elements (the inlined Plotly names URLs in its code)."""
    return re.sub(r"<script>.*?</script>", "<script></script>", page, flags=re.S)


def test_the_page_holds_every_head_of_every_kind_as_the_model_computed_it(tiny_model, tiny_tokenizers):
    tr = decode.translate(tiny_model, *tiny_tokenizers, "I like tea.")
    data = page_data(handout(tr, "en", "tiny", ("en", "zh")))
    assert data["order"] == ["encoder_self", "decoder_self", "cross"]
    for kind in data["order"]:
        np.testing.assert_allclose(np.array(data["kinds"][kind]["weights"]), tr.attention(kind), atol=5e-5)
    assert data["kinds"]["decoder_self"]["masked"] and not data["kinds"]["cross"]["masked"]
    assert data["kinds"]["cross"]["queries"][0].startswith("<s>")  # a decoder row: what it reads → what it writes


def test_the_page_opens_on_the_map_that_was_on_screen(tiny_model, tiny_tokenizers):
    """Issue 59: it opened on layer 1 of the cross-attention (for a 17-word sentence a pale blur), whatever the app
    showed; it opens on the kind, layer and head on screen, and a font that loads later lays the axes out again."""
    tr = decode.translate(tiny_model, *tiny_tokenizers, "I like tea.")
    page = handout(tr, "en", "tiny", ("en", "zh"), "encoder_self", 2, "3")
    assert page_data(page)["start"] == {"kind": "encoder_self", "layer": 1, "head": 2}
    assert page_data(handout(tr, "en", "tiny", ("en", "zh"), "cross", 1, "mean"))["start"]["head"] == "mean"
    assert "face.load()" in page


def test_the_page_fetches_nothing_and_user_text_stays_inert(tiny_model, tiny_tokenizers):
    hostile = '</script><script>alert("x")</script> <img src=http://example.com/x.png>'
    tr = decode.translate(tiny_model, *tiny_tokenizers, hostile)
    page = handout(tr, "en", "tiny", ("en", "zh"))
    shell = outside_scripts(page)
    tags = " ".join(re.findall(r"<[a-zA-Z][^>]*>", shell))  # the page's own elements (user text is escaped)
    assert not re.search(r"""(src|href)\s*=""", tags, re.I)
    assert not re.search(r"url\(\s*[\"']?(https?:)?//|@import", shell, re.I)
    assert "<img" not in shell and 'alert("x")' not in shell  # escaped in the HTML
    assert page.count("</script>") == 2  # Plotly, then the data and the page's code: nothing the sentence brought
    assert page_data(page)["kinds"]["encoder_self"]["queries"]  # and the data still parses


def test_a_chinese_page_embeds_a_font_of_just_its_characters_and_an_english_one_none(tiny_model, tiny_tokenizers):
    pytest.importorskip("fontTools")
    tr = decode.translate(tiny_model, *tiny_tokenizers, "I like tea.")
    english = handout_html(
        dict(source="I like tea.", target="Ich mag Tee.", model="m", pieces=[["▁Ich", 0.5]], kinds={}),
        {key: key for key in LABEL_KEYS},
        "en",
    )
    assert "font/woff2" not in english  # nothing Chinese on the page: no font
    chinese = handout(tr, "zh", "tiny", ("en", "zh"))
    assert "font/woff2;base64" in chinese
    embedded = re.search(r"base64,([A-Za-z0-9+/=]+)\)", chinese).group(1)
    assert len(embedded) < 200_000  # a few dozen characters, not the 1 MB subset
    shown = {c for c in outside_scripts(chinese) + json.dumps(page_data(chinese), ensure_ascii=False) if cjk.is_cjk(c)}
    font_file = tmp_font(embedded)
    assert cjk.characters_of(font_file) >= shown


def tmp_font(encoded: str):
    import base64
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "page.woff2"
    path.write_bytes(base64.b64decode(encoded))
    return path


@pytest.mark.checkpoint
@pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped en-zh checkpoint")
def test_a_twenty_word_sentence_makes_a_page_under_six_megabytes():
    loaded = load_checkpoint(SHIPPED)
    sentence = "The old man who lives next door gave my little sister a red bicycle for her birthday in early May."
    assert len(sentence.split()) == 20
    tr = decode.translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence)
    for lang in ("en", "zh"):
        assert len(handout(tr, lang, "en-zh", ("en", "zh")).encode()) < 6 * 2**20


def test_column_labels_stand_level_while_they_fit_their_columns():
    """A sentence of nine Chinese pieces (我的朋友杰克住在巴黎。 and </s>) had its column labels slanted 45° in the
    page's map, 一 read as a stroke on a projector; they stand level now while each fits its column, and labels
    that do not fit still slant, with room above the map for the longest."""
    chinese = ["我", "的", "朋友", "杰克", "住", "在", "巴黎", "。", "</s>"]
    for font in (map_font_px(False), map_font_px(True)):
        assert map_layout(["row"] * 7, chinese, font)["angle"] == 0
    english = ["▁The", "▁softmax", "▁turns", "▁the", "▁scores", "▁into", "▁probabilities", ".", "</s>"]
    slanted, short = map_layout(["row"] * 7, english), map_layout(["row"] * 7, english[:8])
    assert slanted["angle"] == -45 and short["angle"] == 0  # eight columns stay level, as before
    assert slanted["top"] > short["top"] + 50 and slanted["height"] > short["height"]
    # the page lays its map out by them: the same numbers in the page's data
    kinds = {"cross": {"queries": ["row"] * 7, "keys": chinese, "weights": np.zeros((1, 1, 7, 9))}}
    data = build_page_data({"kinds": kinds})
    assert data["kinds"]["cross"]["layout"] == map_layout(["row"] * 7, chinese)


def test_a_long_sentences_column_labels_stand_apart_in_the_page():
    """33 columns (a 32-word sentence's encoder map) were slanted 45° about 12 px apart, each label over its
    neighbours: past the room a slant needs, the page writes them upright and smaller, as the app's own maps, and
    every label it writes has its font's height of room."""
    words = (
        "Although the weather was terrible yesterday , my friends and I still decided to walk to the old museum "
        "near the river to see the new exhibition about ancient China . more"
    ).split()
    keys = ["▁" + w for w in words] + ["</s>"]
    assert len(keys) == 33
    for font in (map_font_px(False), map_font_px(True)):
        layout = map_layout(["row"] * 33, keys, font)
        assert layout["angle"] == -90 and len(layout["ticks"]) == 33
        written = [i for i, label in enumerate(layout["ticks"]) if label]
        spacing = MAP_PLOT_PX / len(keys) * min(b - a for a, b in zip(written, written[1:]))
        assert spacing >= layout["tick_px"] + 2, (font, layout["tick_px"], spacing)
        longest = max(len(label) for label in layout["ticks"])
        assert layout["top"] >= 0.55 * layout["tick_px"] * longest  # room above the map for the longest upright

"""The Chinese font served with the app draws every Chinese character the app can show: each piece of the shipped
Chinese vocabulary and all of the interface's Chinese (a new character there needs `python -m ui.cjk_font`)."""

from __future__ import annotations

import tomllib

import pytest

from ui import cjk_font
from viz import cjk

from ..conftest import ROOT

pytest.importorskip("fontTools")
pytest.importorskip("brotli")


def test_the_served_font_has_every_chinese_character_the_app_can_show():
    needed = cjk_font.needed_characters()
    assert len(needed) > 2500  # the vocabulary's characters are in it, not only the interface's
    missing = sorted(needed - cjk.characters_of())
    assert not missing, f"rebuild static/cjk-subset.woff2 (python -m ui.cjk_font --source …): {''.join(missing[:50])}"


def test_the_app_serves_the_font_and_names_it_after_the_latin_font_for_the_chinese_ranges_only():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["enableStaticServing"] is True
    face = next(f for f in config["theme"]["fontFaces"] if f["family"] == cjk.FAMILY)
    assert (ROOT / face["url"].removeprefix("app/")).is_file()
    assert face["unicodeRange"].replace(" ", "") == cjk.UNICODE_RANGE
    families = [f.strip(" '") for f in config["theme"]["font"].split(",")]
    assert families.index("Source Sans") < families.index(cjk.FAMILY)
    assert (ROOT / "static" / "LICENSE-NotoSansCJK.txt").is_file()
    # well under the 6 MB a handout may weigh: the subset, not the 16 MB font
    assert (ROOT / "static" / "cjk-subset.woff2").stat().st_size < 1.5 * 2**20

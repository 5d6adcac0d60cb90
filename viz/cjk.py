"""The app's Chinese font (static/cjk-subset.woff2, a subset of Noto Sans CJK SC built by ui/cjk_font.py): which
characters it is for, and cutting a font down to given characters (fontTools), for the served subset and for a
handout's embedded one."""

from __future__ import annotations

import io
from pathlib import Path

FONT = Path(__file__).resolve().parent.parent / "static" / "cjk-subset.woff2"
FAMILY = "explorer-cjk"  # the name the theme (.streamlit/config.toml), the charts and the handouts give it
# The ranges it is used for (CSS unicode-range): CJK punctuation and kana, unified ideographs and extension A,
# compatibility ideographs, full-width forms.
RANGES = ((0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF))
UNICODE_RANGE = ",".join(f"U+{low:04X}-{high:04X}" for low, high in RANGES)


def is_cjk(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in RANGES)


def subset_woff2(source: Path, chars: set[str], font_number: int = 0) -> bytes:
    """source (an .otf, .ttf, .ttc or .woff2) cut down to chars, as WOFF2, its licence notices kept."""
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # vertical and proportional forms of punctuation
    options.name_IDs = ["*"]  # the copyright and licence notices
    options.font_number = font_number
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(chars)))
    subsetter.subset(font)
    out = io.BytesIO()
    subset.save_font(font, out, options)
    return out.getvalue()


def characters_of(path: Path = FONT) -> set[str]:
    """The characters a font can draw."""
    from fontTools.ttLib import TTFont

    return {chr(code) for code in TTFont(str(path)).getBestCmap()}

"""How wide a text is drawn: the one place where figures and tables estimate it (the page is laid out on the
server, before a browser measures anything). One classification of characters for all of them: a wide (Chinese,
full-width) character takes about twice a Latin one."""

from __future__ import annotations

import unicodedata


def is_wide(char: str) -> bool:
    """A character drawn about twice as wide as a Latin letter (East Asian wide or full-width)."""
    return unicodedata.east_asian_width(char) in "WF"


def display_width(text: str) -> int:
    """Width in Latin characters: a wide character counts two (titles and axis labels of the figures)."""
    return sum(2 if is_wide(c) else 1 for c in text)


# Text widths in the data grid's font (st.dataframe: Source Sans, 14 px), measured in Chromium with canvas
# measureText: wide characters 14 px, digits 7.8, narrow punctuation and i/l about 3.5, other letters at most 7.2.
GRID_NARROW = " .,:;il'|"


def grid_text_px(text: str) -> float:
    """Estimated width in pixels of text in the data grid, with 5 % spare."""
    width = sum(14.0 if is_wide(c) else 7.8 if c.isdigit() else 3.5 if c in GRID_NARROW else 7.2 for c in text)
    return 1.05 * width

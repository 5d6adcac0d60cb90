"""Figure titles that wrap instead of running off the figure: Plotly draws a title on one line, and at 1024 px
with the sidebar open the main column is 564 px wide ("…(d_" was all a reader saw of the softmax view's last
title)."""

from __future__ import annotations

import unicodedata

# Latin characters that fit on one title line of a grid in the main column at 1024 px with the sidebar open (564 px:
# 88 ran "... (corpus average)" off the figure), and the height of a title line in pixels.
TITLE_WIDTH = 72
TITLE_LINE_PX = 22


def display_width(text: str) -> int:
    """Width in Latin characters: a Chinese (wide or full-width) character counts two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_title(title: str, width: int = TITLE_WIDTH) -> list[str]:
    """A title in lines of at most `width` (display_width), broken at a space where there is one, so a long
    title wraps instead of running off the figure."""
    lines, line = [], ""
    for char in title:
        line += char
        if display_width(line) > width:
            cut = line.rfind(" ")
            head, line = (line[:cut], line[cut + 1 :]) if cut > 0 else (line[:-1], char)
            lines.append(head.rstrip())
    return lines + [line] if line else lines


def wrapped_title(text: str, width: int = TITLE_WIDTH) -> tuple[str, int]:
    """A title (Plotly's HTML subset, already escaped) in lines of at most `width` -> (the text with <br> between
    lines, the number of lines), for a figure to make room for them."""
    lines = wrap_title(text, width)
    return "<br>".join(lines), len(lines)

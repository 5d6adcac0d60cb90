"""Figure titles that wrap instead of running off the figure: Plotly draws a title on one line, and at 1024 px
with the sidebar open the main column is 564 px wide ("…(d_" was all a reader saw of the softmax view's last
title)."""

from __future__ import annotations

import html
import math

from .widths import display_width, is_wide

# Latin characters that fit on one title line of a grid in the main column at 1024 px with the sidebar open (564 px:
# 88 ran "... (corpus average)" off the figure), and the height of a title line in pixels.
TITLE_WIDTH = 72
TITLE_LINE_PX = 22


def breaks_between(before: str, after: str) -> bool:
    """Whether a line of Chinese may break between these two characters: beside a Chinese one, not at a no-break
    space (which holds a number to its word)."""
    return (is_wide(before) or is_wide(after)) and "\u00a0" not in (before, after)


def wrap_title(title: str, width: int = TITLE_WIDTH) -> list[str]:
    """A title in lines of at most `width` (display_width), broken at a space where there is one, so a long
    title wraps instead of running off the figure."""
    lines, line = [], ""
    for char in title:
        line += char
        if display_width(line) > width:
            cut = line.rfind(" ")
            if cut > 0:
                head, line = line[:cut], line[cut + 1 :]
            else:  # Chinese: between characters, not inside a number or a Latin word ("0." | "3）")
                cut = next((i for i in range(len(line) - 1, 0, -1) if breaks_between(line[i - 1], line[i])), 0)
                cut = cut if cut > 0 else len(line) - 1
                head, line = line[:cut], line[cut:]
            lines.append(head.rstrip())
    return lines + [line] if line else lines


def wrapped_title(text: str, width: int = TITLE_WIDTH) -> tuple[str, int]:
    """A title (Plotly's HTML subset, already escaped) in lines of at most `width` -> (the text with <br> between
    lines, the number of lines), for a figure to make room for them."""
    lines = wrap_title(text, width)
    return "<br>".join(lines), len(lines)


# The plot area of a map in the main column at 1024 px with the sidebar open, less its row labels and colour bar:
# the room the column labels share.
MAP_PLOT_PX = 400


def level_labels_fit(labels: list[str], font_px: int, plot_px: int = MAP_PLOT_PX) -> bool:
    """Whether labels (Plotly's escaped text) written level fit their columns: up to 8 columns, each label no
    wider than its column less a few pixels ("▁probabilities" is about 92 px at 12 px; eight columns of the main
    column are 50 px, and it ran into "▁into" once "Softmax turns scores into probabilities." was eight pieces)."""
    if not labels:
        return True
    if len(labels) > 8:
        return False
    longest = max(display_width(html.unescape(label)) for label in labels)
    return level_label_fits(longest, len(labels), font_px, plot_px)


def level_label_fits(longest: int, columns: int, font_px: int, plot_px: int = MAP_PLOT_PX) -> bool:
    """Whether a level label this long (display_width) fits one of `columns` columns, less a few pixels (a Latin
    character is about 0.55 of the font wide)."""
    return 0.55 * font_px * longest + 4 <= plot_px / columns


def column_labels(labels: list[str], font_px: int = 12, plot_px: int = MAP_PLOT_PX) -> tuple[list[str], int, int]:
    """Labels across the top of a map -> (the labels shown, their angle, their font size) so that neighbours do
    not overlap: level up to 8 columns while each fits its column (level_labels_fit), at one pixel smaller if it
    takes that; slanted 45° while a column
    is at least 17 px wide (slanted labels stand about 0.7 of their spacing apart, 12 px at 17: room for Latin
    letters, most of which stand well under the font's height), 22 px where a label holds Chinese, whose
    characters fill the whole height (at 20 px "1: 老师" touched "2: 在"); beyond, upright and smaller (down to
    9 px), and where even those would touch only every k-th label is written (the others are blank; hover still
    names each column)."""
    n = len(labels)
    if level_labels_fit(labels, font_px, plot_px):
        return list(labels), 0, font_px
    # one pixel smaller rather than slanted: 猫 追 狗 。 </s> in a third of the column tilted 45° for want of
    # half a pixel ("</s>" the widest), each character slanted alone
    if level_labels_fit(labels, font_px - 1, plot_px):
        return list(labels), 0, font_px - 1
    spacing = plot_px / n  # n > 0: an empty list returned level above
    full_height = any(is_wide(c) for label in labels for c in html.unescape(label))
    if spacing >= (22 if full_height else 17):
        return list(labels), -45, font_px
    font = max(9, min(font_px, int(spacing) - 2))
    stride = max(1, math.ceil((font + 2) / spacing))
    return [label if i % stride == 0 else "" for i, label in enumerate(labels)], -90, font


def column_labels_naming(
    labels: list[str], weights, font_px: int = 12, plot_px: int = MAP_PLOT_PX
) -> tuple[list[str], int, int]:
    """column_labels for bars: where only every k-th label is written, the heaviest bars are named anyway (the
    tallest always, then each of at least 0.1 that is k columns from those named), their neighbours within k left
    blank; the other labels as column_labels writes them where they keep that distance. (The tallest bar of a
    step's cross-attention, 0.83 on ▁animal, stood unnamed between ▁The and ▁didn.)"""
    shown, angle, font = column_labels(labels, font_px, plot_px)
    written = [i for i, label in enumerate(shown) if label]
    if len(written) == len(labels):
        return shown, angle, font
    stride = written[1] - written[0] if len(written) > 1 else len(labels)
    named: list[int] = []
    for i in sorted(range(len(labels)), key=lambda i: -float(weights[i])):
        if named and float(weights[i]) < 0.1:
            break
        if all(abs(i - j) >= stride for j in named):
            named.append(i)
    out = ["" for _ in labels]
    for i in named + [i for i in written if all(abs(i - j) >= stride for j in named)]:
        out[i] = labels[i]
    return out, angle, font


def column_labels_px(labels: list[str], angle: int, font_px: int) -> int:
    """The height that column labels (as column_labels gives them; Plotly's escaped text) take above a map, for
    the figure's top margin to hold them, the axis title and the title without one running into another: level,
    one line; upright (-90°), as tall as the longest is long; slanted (-45°), about 0.7 of its length and its line.
    A Latin character is about 0.55 of the font wide, a Chinese one twice that (display_width counts it as two)."""
    if angle == 0:
        return font_px + 8
    longest = max((display_width(html.unescape(label)) for label in labels if label), default=1)
    along = 0.55 * font_px * longest
    return round(along if angle == -90 else 0.71 * (along + font_px)) + 10

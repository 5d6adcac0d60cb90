"""The layers x heads grids: numbered from 1, and a long title wraps instead of running off the figure."""

from __future__ import annotations

import numpy as np

from viz.heads import statistic_grid
from viz.titles import TITLE_WIDTH, wrap_title
from viz.widths import display_width
from words import t


def test_the_aer_grid_title_wraps_in_both_languages_within_the_column_at_1024():
    english = t("aer_grid_title", "en", method=t("aer_value-zeroing", "en"), sentences=110)
    chinese = t("aer_grid_title", "zh", method=t("aer_value-zeroing", "zh"), sentences=110)
    lines = wrap_title(english)
    assert len(lines) == 2 and all(display_width(line) <= TITLE_WIDTH for line in lines)
    assert " ".join(lines) == english  # broken at a space, nothing lost
    lines = wrap_title(chinese)  # 44 characters do not fit the 564 px column either
    assert len(lines) == 2 and all(display_width(line) <= TITLE_WIDTH for line in lines)
    assert " ".join(lines) == chinese
    assert display_width("注意 ab") == 7
    assert "".join(wrap_title("注意" * 60)) == "注意" * 60  # no space: broken between characters


def test_grid_puts_layers_down_and_heads_across_numbered_from_one():
    values = np.arange(12, dtype=float).reshape(3, 4)
    fig = statistic_grid(values, "A title " * 20)
    heatmap = fig.data[0]
    assert list(heatmap.x) == [1, 2, 3, 4] and list(heatmap.y) == [1, 2, 3]
    assert np.array_equal(np.asarray(heatmap.z), values)
    assert fig.layout.title.text.count("<br>") == 2  # 160 characters in three lines
    # Plotly sets a several-line title by its first baseline: that one sits inside the figure's top, and the
    # three lines end above the head axis (110 px of top margin, about 40 of them for the axis' labels)
    first_baseline = (1 - fig.layout.title.y) * fig.layout.height
    assert fig.layout.title.yanchor == "bottom" and 15 <= first_baseline <= 30 and first_baseline + 2 * 22 < 110 - 40

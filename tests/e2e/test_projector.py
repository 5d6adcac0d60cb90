"""A classroom projector: at 1024×768 and 1280×720, in both languages, normal and presentation mode, the
attention map starts on the first screen and no two tick labels overlap. Screenshots go to test-artifacts/."""

from __future__ import annotations

import math
import urllib.parse

import pytest

from ..conftest import SHIPPED
from .conftest import ARTIFACTS, assert_no_exception, wait_until_idle

pytestmark = pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped checkpoints")

SENTENCE = "The little girl gave her old teacher a beautiful red flower yesterday."  # 12 words

# Bounding boxes of the first visible map's tick labels, their font size, and the map's own box.
MEASURE = r"""(tab) => {
    const panel = [...document.querySelectorAll('[role="tabpanel"]')].find(p => p.offsetParent !== null);
    const plot = panel.querySelector('.js-plotly-plot');
    const boxes = sel => [...plot.querySelectorAll(sel)].map(t => {
        const r = t.getBoundingClientRect();
        return {x: r.left, y: r.top, w: r.width, h: r.height, text: t.textContent,
                size: parseFloat(getComputedStyle(t).fontSize),
                angle: parseFloat(((t.getAttribute('transform') || '').match(/rotate\((-?[0-9.]+)/) || [0, 0])[1])};
    });
    const r = plot.getBoundingClientRect();
    return {top: r.top, left: r.left, right: r.right, x: boxes('.xtick text'), y: boxes('.ytick text')};
}"""


# The layers x heads overview below the map: its thumbnails' titles ("L1 H1") and the big map's colour bar
# against the map's right edge.
MEASURE_GRID = r"""() => {
    const panel = [...document.querySelectorAll('[role="tabpanel"]')].find(p => p.offsetParent !== null);
    const [map, grid] = panel.querySelectorAll('.js-plotly-plot');
    const titles = [...grid.querySelectorAll('.annotation-text')].map(t => {
        const r = t.getBoundingClientRect();
        return {x: r.left, y: r.top, w: r.width, h: r.height, text: t.textContent, angle: 0};
    });
    const colorbar = map.querySelector('.colorbar').getBoundingClientRect();
    return {titles, colorbar_right: colorbar.right,
            map_right: map.getBoundingClientRect().right, grid_right: grid.getBoundingClientRect().right,
            viewport: window.innerWidth};
}"""


def overlapping(ticks: list[dict]) -> list[tuple[str, str]]:
    """Pairs of neighbouring tick labels that overlap. Upright labels: their boxes intersect. Slanted labels (45°
    or 90°) start at their tick (the left edge of their box) and rise to the right: the gap between two such
    parallel lines is the horizontal spacing of their starts times |sin(angle)|, and it must hold the text's
    height."""
    pairs = []
    for a, b in zip(ticks, ticks[1:]):
        if a["angle"] or b["angle"]:
            spacing = abs(b["x"] - a["x"]) * abs(math.sin(math.radians(a["angle"])))
            if spacing < 0.9 * a["size"]:
                pairs.append((a["text"], b["text"]))
        elif (a["x"] < b["x"] + b["w"] - 1 and b["x"] < a["x"] + a["w"] - 1
              and a["y"] < b["y"] + b["h"] - 1 and b["y"] < a["y"] + a["h"] - 1):
            pairs.append((a["text"], b["text"]))
    return pairs


@pytest.mark.parametrize("width, height", [(1024, 768), (1280, 720)])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_the_map_is_on_the_first_screen_and_labels_do_not_overlap(streamlit_server, browser, width, height,
                                                                  lang, present):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": height})
    query = urllib.parse.urlencode({"s": SENTENCE, "lang": lang, "present": present})
    page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
    page.wait_for_selector("[role='tabpanel'] .js-plotly-plot .xtick text", state="attached", timeout=120_000)
    wait_until_idle(page)
    assert_no_exception(page)
    measured = page.evaluate(MEASURE, None)
    name = f"projector-{width}x{height}-{lang}-{'presentation' if present == '1' else 'normal'}.png"
    page.screenshot(path=str(ARTIFACTS / name))
    # the map's top edge and its first rows are inside the first viewport, without scrolling
    first_rows = sorted(t["y"] for t in measured["y"])[:2]
    assert measured["top"] < height and all(y + 20 < height for y in first_rows), (measured["top"], first_rows)
    assert not overlapping(measured["x"]) and not overlapping(measured["y"])
    # nothing cut at the left edge (long pieces on the query axis)
    assert min(t["x"] for t in measured["y"]) >= 0
    # the overview grid stays legible instead of shrinking, its titles apart; the colour bar inside the map
    grid = page.evaluate(MEASURE_GRID)
    rows: dict[int, list] = {}
    for title in grid["titles"]:
        rows.setdefault(round(title["y"]), []).append(title)
    for row in rows.values():
        row.sort(key=lambda t: t["x"])
        assert not overlapping(row)
        # Each title is centred over its thumbnail; thumbnails fill 8/9 of the spacing of their centres.
        centres = [t["x"] + t["w"] / 2 for t in row]
        thumbnail = min(b - a for a, b in zip(centres, centres[1:])) * 0.85
        assert thumbnail >= 40, thumbnail
    assert grid["colorbar_right"] <= grid["map_right"] + 1 and grid["grid_right"] <= grid["viewport"]
    page.close()


def test_long_german_pieces_fit_the_cross_attention_axes(streamlit_server, browser):
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    query = urllib.parse.urlencode({"s": "The firefighters are extinguishing a burning warehouse near the harbour.",
                                    "ckpt": "en-de", "present": "1"})
    page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
    page.wait_for_selector("[role='tabpanel'] .js-plotly-plot .xtick text", state="attached", timeout=120_000)
    wait_until_idle(page)
    page.get_by_role("tab", name="Cross-attention", exact=True).click()
    page.wait_for_timeout(800)
    measured = page.evaluate(MEASURE, None)
    page.screenshot(path=str(ARTIFACTS / "projector-1024x768-en-de-cross.png"))
    assert not overlapping(measured["x"]) and not overlapping(measured["y"])
    assert min(t["x"] for t in measured["y"]) >= 0
    page.close()

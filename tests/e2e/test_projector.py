"""A classroom projector: at 1024×768 and 1280×720, in both languages, normal and presentation mode, the
attention map starts on the first screen and no two tick labels overlap. Screenshots go to test-artifacts/."""

from __future__ import annotations

import math
import os
import time
import urllib.parse

import pytest

from ..conftest import SHIPPED
from .conftest import ARTIFACTS, assert_no_exception, open_view, wait_until_idle

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


TICKS_LAID_OUT = r"""() => {
    const panel = [...document.querySelectorAll('[role="tabpanel"]')].find(p => p.offsetParent !== null);
    const ticks = panel ? [...panel.querySelectorAll('.js-plotly-plot .xtick text')] : [];
    return ticks.length > 0 && ticks.every(t => t.getBoundingClientRect().height > 0);
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
        elif (
            a["x"] < b["x"] + b["w"] - 1
            and b["x"] < a["x"] + a["w"] - 1
            and a["y"] < b["y"] + b["h"] - 1
            and b["y"] < a["y"] + a["h"] - 1
        ):
            pairs.append((a["text"], b["text"]))
    return pairs


@pytest.mark.parametrize("width, height", [(1024, 768), (1280, 720)])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("present", ["0", "1"])
def test_the_map_is_on_the_first_screen_and_labels_do_not_overlap(
    streamlit_server, browser, width, height, lang, present
):
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
    query = urllib.parse.urlencode(
        {
            "s": "The firefighters are extinguishing a burning warehouse near the harbour.",
            "ckpt": "en-de",
            "present": "1",
        }
    )
    page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
    page.wait_for_selector("[role='tabpanel'] .js-plotly-plot .xtick text", state="attached", timeout=120_000)
    wait_until_idle(page)
    open_view(page, "Cross-attention")
    wait_until_idle(page)
    # until the visible panel's map has laid out its tick labels (a fixed wait measured half-drawn labels
    # once, while the server computed ahead for the new map)
    page.wait_for_function(TICKS_LAID_OUT, timeout=60_000)
    page.wait_for_timeout(300)
    measured = page.evaluate(MEASURE, None)
    page.screenshot(path=str(ARTIFACTS / "projector-1024x768-en-de-cross.png"))
    assert not overlapping(measured["x"]) and not overlapping(measured["y"])
    assert min(t["x"] for t in measured["y"]) >= 0
    page.close()


# The shipped en-zh model is sure of this one (我昨天给弟弟买了一本新书。, eleven pieces: twelve rows).
TEN_WORDS = "I bought a new book for my little brother yesterday."
# Every text box of the visible map: its title, both axis titles (a Chinese query title sits under the map as an
# annotation), the tick labels.
MEASURE_TEXT = r"""() => {
    const panel = [...document.querySelectorAll('[role="tabpanel"]')].filter(p => p.offsetParent !== null).pop();
    const plot = panel.querySelector('.js-plotly-plot');
    const boxes = (sel, group) => [...plot.querySelectorAll(sel)].map(t => {
        const r = t.getBoundingClientRect();
        return {group, x: r.left, y: r.top, w: r.width, h: r.height, text: t.textContent};
    }).filter(b => b.w > 0 && b.h > 0);
    const r = plot.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, texts: [
        ...boxes('.gtitle', 'title'), ...boxes('.xtitle', 'key axis'), ...boxes('.ytitle', 'query axis'),
        ...boxes('.annotation-text', 'query axis'), ...boxes('.xtick text', 'key'), ...boxes('.ytick text', 'query')]};
}"""


def intersecting(boxes: list[dict]) -> list[tuple[str, str]]:
    """Pairs of boxes from different groups (title, axis titles, key labels, query labels) that overlap."""
    return [
        (a["text"], b["text"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["group"] != b["group"]
        and a["x"] < b["x"] + b["w"] - 1
        and b["x"] < a["x"] + a["w"] - 1
        and a["y"] < b["y"] + b["h"] - 1
        and b["y"] < a["y"] + a["h"] - 1
    ]


# The shipped en-zh model is unsure of its translation of this one: a note stands above the map (issue 36); it
# writes 她上周买了一辆红色的汽车。 (eleven rows), "for her brother" left out. A new checkpoint may be sure of it:
# the presentation test below checks the note is there, so the sentence is changed rather than the check lost.
# Ten words the shipped en-zh model is unsure of (stage 10: -1.28 per piece, below its -0.58, less sure than any
# judged translation; 农夫的女儿悄悄地将被授为冬天的蜜蜂飞来。 in sixteen pieces, seventeen rows; stage 9: -0.95,
# 农夫的女儿悄悄地跟着冬天来。, "the farmer's daughter quietly follows the winter"): under the threshold chosen for
# 95 % precision on the judged validation translations (issue 59) "The old man gave the boy a small red ball."
# (-0.53, "red" dropped) no longer carries a note.
UNSURE_TEN_WORDS = "The farmer's daughter quietly stitched a quilt for the winter."
# The unsure note's verdict, Probably or Possibly, in either interface language (words/words.toml, unsure_probably,
# unsure_possibly, and unsure, unsure_short)
UNSURE_NOTE = {"en": "wrong:", "zh": "可能译错了"}


@pytest.mark.parametrize("sentence", [TEN_WORDS, UNSURE_TEN_WORDS])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presentation_mode_fits_the_whole_map_of_ten_words_without_overlapping_text(
    streamlit_server, browser, lang, sentence
):
    """Issues 21 and 36: at 1024×768 in presentation mode the whole cross-attention map of a ten-word sentence is
    on the first screen, also below a note that the model is unsure, and its title, axis titles and labels do not
    run into each other; the translation's heading is not hidden under Streamlit's header."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    query = urllib.parse.urlencode(
        {"s": sentence, "lang": lang, "present": "1", "view": "tab_cross", "layer": "5", "head": "mean"}
    )
    page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
    page.wait_for_selector("[role='tabpanel'] .js-plotly-plot .ytick text", state="attached", timeout=120_000)
    wait_until_idle(page)
    assert_no_exception(page)
    unsure = "-unsure" if sentence == UNSURE_TEN_WORDS else ""
    notes = page.locator("[data-testid='stAlert']").filter(has_text=UNSURE_NOTE[lang])
    assert notes.count() == (1 if unsure else 0), f"the model's unsure note for {sentence!r}: {notes.count()}"
    page.screenshot(path=str(ARTIFACTS / f"presentation-1024x768-{lang}-cross{unsure}.png"))
    measured = page.evaluate(MEASURE_TEXT)
    assert measured["bottom"] <= 768, measured["bottom"]
    assert 0 <= measured["top"] and max(b["y"] + b["h"] for b in measured["texts"]) <= 768, measured["bottom"]
    assert len([b for b in measured["texts"] if b["group"] == "query"]) >= 6  # the rows, each labelled
    assert not intersecting(measured["texts"])
    assert page.evaluate(HEADING_UNCOVERED), "the translation's heading is under an opaque header"
    page.close()


# The translation's heading (h3) lies below Streamlit's header, or the header is see-through there.
HEADING_UNCOVERED = r"""() => {
    const heading = document.querySelector("[data-testid='stMarkdownContainer'] h3").getBoundingClientRect();
    const opaque = (e) => { const c = getComputedStyle(e).backgroundColor;
        return !(c === 'transparent' || c.endsWith(', 0)')); };
    const header = document.querySelector("[data-testid='stHeader']");
    const covers = [header, ...header.querySelectorAll('*')].filter(opaque)
        .some(e => e.getBoundingClientRect().bottom > heading.top + 1);
    return heading.top >= 0 && !covers;
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_view_is_one_visible_click_away_at_1024(streamlit_server, browser, lang):
    """Issue 21: no view hides behind an overflow arrow: the group tabs and each group's view tabs fit."""
    from ui.views import view_groups
    from words import t

    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.goto(f"{streamlit_server}/?s=I+like+tea.&lang={lang}", wait_until="domcontentloaded")
    page.get_by_role("tab", name=t("group_maps", lang), exact=True).wait_for(timeout=120_000)
    wait_until_idle(page)
    main = page.locator("[data-testid='stMain']").bounding_box()

    def inside(name):
        box = page.get_by_role("tab", name=name, exact=True).bounding_box()
        return box is not None and box["x"] >= main["x"] and box["x"] + box["width"] <= main["x"] + main["width"]

    for group, views in view_groups().items():
        assert inside(t(group, lang)), group
        page.get_by_role("tab", name=t(group, lang), exact=True).click()
        page.get_by_role("tab", name=t(views[0], lang), exact=True).wait_for(state="visible", timeout=60_000)
        assert all(inside(t(view, lang)) for view in views), group
    assert_no_exception(page)
    page.close()


@pytest.mark.parametrize("scroll_bars", [False, True])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_lesson_is_one_visible_click_away_on_a_projector(streamlit_server, request, lang, scroll_bars):
    """All twelve lesson tabs lie inside the page at 1024×768 and 1280×720, sidebar open, in at most two rows: none
    behind the tab bar's scroll arrow (at 1280 px the Chinese tenth lesson was); also in a browser that shows its
    scroll bars (the English titles took three rows there), the two rows at most 80 px tall (they took 112)."""
    from ui.views import lessons
    from words import t

    LESSON_KEYS = tuple(lessons())
    browser = request.getfixturevalue("browser_with_scroll_bars" if scroll_bars else "browser")

    for width, height in ((1024, 768), (1280, 720)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{streamlit_server}/?s=I+like+tea.&lang={lang}&view={LESSON_KEYS[0]}", wait_until="domcontentloaded")
        page.get_by_role("tab", name=t(LESSON_KEYS[0], lang), exact=True).wait_for(timeout=120_000)
        wait_until_idle(page)

        def outside() -> list[str]:
            main = page.locator("[data-testid='stMain']").bounding_box()
            boxes = {key: page.get_by_role("tab", name=t(key, lang), exact=True).bounding_box() for key in LESSON_KEYS}
            return [
                k for k, b in boxes.items() if not (b and main["x"] <= b["x"] <= main["x"] + main["width"] - b["width"])
            ]

        # The tab bar takes its final layout once the page's styles apply, which on a loaded machine (the CI run
        # with a training beside it) can come after the page is idle: what counts is the layout a class then sees.
        deadline = time.time() + 30
        while outside() and time.time() < deadline:
            page.wait_for_timeout(500)
        assert not outside(), (width, outside())
        # in at most two rows (issue 59: eleven English titles took three at 1024 px)
        rows = {round(page.get_by_role("tab", name=t(k, lang), exact=True).bounding_box()["y"]) for k in LESSON_KEYS}
        assert len(rows) <= 2, (width, sorted(rows))
        assert page.locator("[class*='st-key-lesson_tab_'] [role='tablist']").bounding_box()["height"] <= 80
        page.get_by_role("tab", name=t(LESSON_KEYS[-1], lang), exact=True).click()
        wait_until_idle(page)
        assert (
            page.get_by_role("tab", name=t(LESSON_KEYS[-1], lang), exact=True).get_attribute("aria-selected") == "true"
        )
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"lessons-{width}x{height}-{lang}{'-bars' if scroll_bars else ''}.png"))
        assert_no_exception(page)
        page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_head_ablation_shows_every_head_and_whole_buttons_at_1024_with_the_sidebar_open(
    streamlit_server, browser, lang
):
    """Issue 36: heads 5-8 hid behind a scroll inside each grid, and the buttons beside it were cut ("No…"; in
    Chinese both read "全…")."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.goto(f"{streamlit_server}/?s=I+like+tea.&lang={lang}&view=tab_ablation", wait_until="domcontentloaded")
    page.locator(".dvn-scroller").first.wait_for(timeout=120_000)
    wait_until_idle(page)
    grids = page.evaluate(
        "() => [...document.querySelectorAll('.dvn-scroller')].map(s => [s.scrollWidth, s.clientWidth,"
        " s.closest('[data-testid=stVerticalBlock]').clientWidth])"
    )
    assert len(grids) == 3 and all(scroll <= client + 1 for scroll, client, _ in grids), grids
    # and within the main column less the scroll bar a browser that shows one draws beside it (headless Chromium
    # hides it: the column is 564 px here, 554 in a teacher's browser, where head 8 was cut at 562)
    assert all(scroll <= column - 10 for scroll, _, column in grids), grids
    buttons = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=stMain] button')].filter(b => b.offsetParent && b.innerText)"
        ".map(b => [b.innerText, b.scrollWidth, b.clientWidth])"
    )
    from words import t

    names = {t("ablate_all", lang), t("ablate_none", lang)}
    shown = [b for b in buttons if b[0] in names]
    assert len(shown) == 6 and all(scroll <= client for _, scroll, client in shown), shown
    assert_no_exception(page)
    page.close()


# Whether two different Chinese characters come out as the same picture in a font: they do when the font has
# neither and the browser draws its empty box for both.
SAME_GLYPH = """async (family) => {
    await document.fonts.ready;
    const draw = (text) => {
        const canvas = document.createElement('canvas');
        canvas.width = 60; canvas.height = 60;
        const context = canvas.getContext('2d');
        context.font = `40px ${family}`;
        context.fillText(text, 5, 45);
        return canvas.toDataURL();
    };
    return draw('注') === draw('意');
}"""


def test_chinese_shows_on_a_machine_without_a_chinese_font(streamlit_server, browser, tmp_path):
    """Issue 36: a Chromium whose fontconfig knows only DejaVu (no CJK font, like a fresh classroom PC) draws the
    Chinese interface and its charts in the app's own font, not as empty boxes."""
    from .conftest import CHROMIUM, CHROMIUM_ARGS

    (tmp_path / "fonts.conf").write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        "<dir>/usr/share/fonts/truetype/dejavu</dir>"
        f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>",
        encoding="utf-8",
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(tmp_path / "fonts.conf")}
    # a second Chromium from the module's Playwright (a second Playwright cannot start inside the first)
    bare = browser.browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, env=env)
    page = bare.new_page(viewport={"width": 1024, "height": 768})
    page.goto(f"{streamlit_server}/?lang=zh&view=tab_cross", wait_until="domcontentloaded")
    page.wait_for_selector("[role='tabpanel'] .js-plotly-plot .ytick text", state="attached", timeout=120_000)
    wait_until_idle(page)
    assert page.evaluate(SAME_GLYPH, "sans-serif"), "this browser has a Chinese font: the test proves nothing"
    assert not page.evaluate(SAME_GLYPH, "explorer-cjk")
    # the page's text and the charts' labels name the served font after the Latin one
    for selector in ("[data-testid='stMarkdownContainer'] p", ".js-plotly-plot .ytick text"):
        family = page.evaluate(f'() => getComputedStyle(document.querySelector("{selector}")).fontFamily')
        assert "explorer-cjk" in family, (selector, family)
    assert page.evaluate("() => document.fonts.check('16px explorer-cjk', '交叉注意力')")
    page.screenshot(path=str(ARTIFACTS / "chinese-without-a-chinese-font.png"))
    bare.close()


# Every text box of every chart on the page: titles, subplot titles (annotations), axis titles, tick labels, with
# the chart each belongs to; and every table whose content is wider than its box.
MEASURE_CHARTS = r"""() => {
    const boxes = [], panels = [];
    document.querySelectorAll('.js-plotly-plot').forEach((plot, chart) => {
        const parts = {'.gtitle': 'title', '.annotation-text': 'annotation', '.xtitle': 'axis', '.ytitle': 'axis',
                       '.xtick text': 'tick', '.ytick text': 'tick', '.textpoint text': 'point',
                       '.heatmap-label text': 'cell'};
        for (const [selector, group] of Object.entries(parts)) {
            plot.querySelectorAll(selector).forEach((t) => {
                const r = t.getBoundingClientRect();
                // the text's own box, turned as it is drawn (a slanted label's client rectangle is far wider
                // than the label: two slanted neighbours' rectangles meet though the words stand apart)
                const bb = t.getBBox(), m = t.getScreenCTM();
                const corners = [[bb.x, bb.y], [bb.x + bb.width, bb.y], [bb.x + bb.width, bb.y + bb.height],
                                 [bb.x, bb.y + bb.height]].map(([x, y]) => [m.a * x + m.c * y + m.e,
                                                                            m.b * x + m.d * y + m.f]);
                if (r.width > 0 && r.height > 0) boxes.push({chart, group, x: r.left, y: r.top, w: r.width,
                    h: r.height, text: t.textContent, plotLeft: plot.getBoundingClientRect().left,
                    plotRight: plot.getBoundingClientRect().right, size: parseFloat(getComputedStyle(t).fontSize),
                    corners});
            });
        }
        // each subplot's plot area: the rectangle Plotly clips its traces to
        [...plot.querySelectorAll('clipPath')].filter((c) => /plot$/.test(c.id)).forEach((c) => panels.push(
            {chart, w: parseFloat(c.querySelector('rect').getAttribute('width'))}));
    });
    const wide = [...document.querySelectorAll('.dvn-scroller, [data-testid="stTable"]')]
        .filter((t) => t.scrollWidth > t.clientWidth + 2)
        .map((t) => {
            const keyed = t.closest('[class*="st-key-"]');
            const key = keyed ? [...keyed.classList].find((c) => c.startsWith('st-key-')) : '';
            return `${key} ${t.scrollWidth} > ${t.clientWidth}`;
        });
    return {boxes, wide, panels};
}"""


def intersect(a: dict, b: dict) -> bool:
    """Two texts of one chart whose boxes overlap by more than a pixel."""
    return (
        a["chart"] == b["chart"]
        and a["x"] < b["x"] + b["w"] - 1
        and b["x"] < a["x"] + a["w"] - 1
        and a["y"] < b["y"] + b["h"] - 1
        and b["y"] < a["y"] + a["h"] - 1
    )


def overlapping_titles(boxes: list[dict]) -> list[tuple[str, str]]:
    """Titles and subplot titles of one chart that run into each other or into another group's text."""
    titles = [b for b in boxes if b["group"] in ("title", "annotation")]
    return [
        (a["text"], b["text"])
        for a in titles
        for b in boxes
        if a is not b
        and not (a["group"] == "annotation" and b["group"] == "annotation" and a["y"] != b["y"])  # stacked lines
        and intersect(a, b)
    ]


def measure_view(
    streamlit_server, page, view: str, lang: str, screenshot: str, sentence: str = UNSURE_TEN_WORDS, **link
) -> dict:
    """Open `view` on the ten-word sentence in `lang`, wait for its charts, and measure them (MEASURE_CHARTS)."""
    query = urllib.parse.urlencode({"s": sentence, "lang": lang, "view": view, **link})
    page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
    page.wait_for_selector(".js-plotly-plot .main-svg", state="attached", timeout=120_000)
    wait_until_idle(page)
    page.wait_for_timeout(1500)
    assert_no_exception(page)
    measured = page.evaluate(MEASURE_CHARTS)
    page.screenshot(path=str(ARTIFACTS / f"{screenshot}-{view}-{lang}.png"))
    return measured


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("view", ["lesson_residual", "lesson_masks", "tab_heads", "lesson_explanation"])
def test_lessons_and_head_tables_fit_the_main_column_at_1024_with_the_sidebar_open(
    streamlit_server, browser, lang, view
):
    """Issue 36: at 1024 px with the sidebar open, no chart title runs into another text or off its chart (lesson
    6's LayerNorm panels and its LayerNorm/BatchNorm pair), and no table is wider than the main column (lesson 6's
    LayerNorm table, lesson 4's batch table, the head statistics' tables, lesson 10's corpus table)."""
    page = browser.new_page(viewport={"width": 1024, "height": 3600})  # the whole view on one screen
    measured = measure_view(streamlit_server, page, view, lang, "fit")
    assert not overlapping_titles(measured["boxes"]), overlapping_titles(measured["boxes"])[:5]
    off = [b["text"] for b in measured["boxes"] if b["group"] == "title" and b["x"] + b["w"] > b["plotRight"] + 1]
    assert not off, off
    assert not measured["wide"], measured["wide"]
    page.close()


LONG_GERMAN = "Tom and Mary are flying to Berlin next week, and John and Anna are taking the train to Vienna."


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_logit_lens_title_stays_clear_of_twenty_turned_step_labels(streamlit_server, browser, lang):
    """Issue 36: with a German output of 20 or more pieces, the turned step labels stand higher than a fixed margin
    allowed, and the step axis's title ran into the title's second line."""
    page = browser.new_page(viewport={"width": 1024, "height": 2000})
    measured = measure_view(streamlit_server, page, "tab_lens", lang, "lens", LONG_GERMAN, ckpt="en-de")
    steps = [b for b in measured["boxes"] if b["group"] == "tick" and ": " in b["text"]]
    assert len(steps) >= 20, len(steps)
    assert not overlapping_titles(measured["boxes"]), overlapping_titles(measured["boxes"])[:5]
    page.close()


FORTY_WORDS = (
    "When the teacher opened the old wooden door of the small classroom on the first morning of the new school year, "
    "the children who had been waiting outside in the cold rain ran in at once and sat down at their desks."
)


@pytest.mark.parametrize("view", ["tab_cross", "tab_encoder", "tab_lens"])
def test_forty_words_of_column_labels_and_numbers_do_not_run_into_each_other(streamlit_server, browser, view):
    """Issue 36: with 40 and more pieces the slanted column labels lay on one another, and so did the logit
    lens's ranks in its narrow cells."""
    page = browser.new_page(viewport={"width": 1024, "height": 2000})
    measured = measure_view(streamlit_server, page, view, "en", "forty", FORTY_WORDS)
    ticks = [b for b in measured["boxes"] if b["group"] == "tick" and b["text"]]
    assert len(ticks) >= 20 and not overlapping_boxes(ticks), overlapping_boxes(ticks)[:5]
    numbers = [b for b in measured["boxes"] if b["group"] == "cell" and b["text"]]
    assert not overlapping_boxes(numbers), overlapping_boxes(numbers)[:5]
    page.close()


def turned_boxes_meet(a: dict, b: dict) -> bool:
    """Two texts of one chart whose boxes, turned as drawn (a slanted label's box is slanted), overlap by more
    than a pixel: no edge direction of either box separates them (the separating axis test)."""
    if a["chart"] != b["chart"]:
        return False
    for corners in (a["corners"], b["corners"]):
        for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1]):
            length = math.hypot(x1 - x0, y1 - y0)
            if length == 0:
                continue
            nx, ny = (y0 - y1) / length, (x1 - x0) / length  # unit normal of this edge
            pa = [x * nx + y * ny for x, y in a["corners"]]
            pb = [x * nx + y * ny for x, y in b["corners"]]
            if max(pa) <= min(pb) + 1 or max(pb) <= min(pa) + 1:
                return False
    return True


def overlapping_boxes(boxes: list[dict]) -> list[tuple[str, str]]:
    """Every pair of texts of one chart whose boxes, turned as drawn, intersect."""
    return [(a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if turned_boxes_meet(a, b)]


@pytest.mark.parametrize("view", ["tab_encoder", "tab_cross"])
def test_a_few_long_whole_words_on_top_of_a_map_do_not_run_into_each_other(streamlit_server, browser, view):
    """The stage-6 en-zh vocabulary reads "Softmax turns scores into probabilities." as eight whole pieces, and
    eight level labels ran "▁into" into "▁probabilities" at 1024 px (an independent browser check)."""
    page = browser.new_page(viewport={"width": 1024, "height": 2000})
    measured = measure_view(streamlit_server, page, view, "en", "whole", "Softmax turns scores into probabilities.")
    ticks = [b for b in measured["boxes"] if b["group"] == "tick" and "probabilities" in b["text"]]
    assert ticks, [b["text"] for b in measured["boxes"] if b["group"] == "tick"]
    ticks = [b for b in measured["boxes"] if b["group"] == "tick" and b["text"]]
    assert not overlapping_boxes(ticks), overlapping_boxes(ticks)[:5]
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_query_key_words_head_search_titles_and_softmax_panels_read_at_1024(streamlit_server, browser, lang):
    """Issue 36: the query-key plane's words lay on one another, the head search's thumbnail titles were ~9 px,
    and the softmax-saturation panels were ~110 px wide each beside their legend."""
    page = browser.new_page(viewport={"width": 1024, "height": 3000})
    measured = {
        view: measure_view(streamlit_server, page, view, lang, "read")
        for view in ("tab_qk", "tab_search", "tab_softmax")
    }
    words = [b for b in measured["tab_qk"]["boxes"] if b["group"] == "point" and b["text"]]
    assert len(words) >= 5 and not overlapping_boxes(words), overlapping_boxes(words)[:5]
    tiles = [b for b in measured["tab_search"]["boxes"] if b["group"] == "annotation" and b["text"].startswith("L")]
    assert len(tiles) == 8 and min(b["size"] for b in tiles) >= 13, [(b["text"], b["size"]) for b in tiles]
    panels = [p["w"] for p in measured["tab_softmax"]["panels"]]
    assert len([w for w in panels if w < 300]) == 3 and min(panels) >= 140, panels  # the three saturation panels
    page.close()


NINETEEN_WORDS = (
    "The children are playing football in the park today and their parents are watching them from the bench."
)


@pytest.mark.parametrize("view", ["tab_decoding", "lesson_explanation"])
def test_nineteen_words_of_labels_do_not_run_into_each_other_in_the_step_and_lesson_10_charts(
    streamlit_server, browser, view
):
    """Issue 36 (this session's walk-through): the decoding step's cross-attention bars (a third of the column)
    and lesson 10's map (beside the methods' names) wrote every one of 19 words' labels, 8-10 px apart."""
    page = browser.new_page(viewport={"width": 1024, "height": 2400})
    measured = measure_view(streamlit_server, page, view, "en", "nineteen", NINETEEN_WORDS)
    ticks = [b for b in measured["boxes"] if b["group"] == "tick" and b["text"]]
    assert len(ticks) >= 5 and not overlapping_boxes(ticks), overlapping_boxes(ticks)[:5]
    assert not overlapping_titles(measured["boxes"]), overlapping_titles(measured["boxes"])[:5]
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_short_translations_logit_lens_and_two_sentence_titles_stay_clear_and_inside(streamlit_server, browser, lang):
    """Issue 36 (this session's walk-through): for a short translation the logit lens's step axis title ran
    7-9 px into its title; the two-sentence view's Chinese title ran past the figure's right edge."""
    page = browser.new_page(viewport={"width": 1024, "height": 2400})
    lens = measure_view(streamlit_server, page, "tab_lens", lang, "short", "Tom chases Jerry.")
    assert not overlapping_titles(lens["boxes"]), overlapping_titles(lens["boxes"])[:5]
    compare = measure_view(
        streamlit_server, page, "tab_compare", lang, "short", "Tom chases Jerry.", s2="Jerry chases Tom."
    )
    off = [
        b["text"]
        for b in lens["boxes"] + compare["boxes"]
        if b["group"] == "title" and b["x"] + b["w"] > b["plotRight"] + 1
    ]
    assert not off, off
    page.close()


CUT_BUTTONS = """() => [...document.querySelectorAll('[data-testid=stMain] button')]
    .filter(b => b.offsetParent && b.innerText.trim())
    .filter(b => [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1))
    .map(b => b.innerText)"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_head_search_and_two_sentence_buttons_show_their_whole_label(streamlit_server, browser, lang):
    """Issue 36 (this session's walk-through): head search's eight "open" buttons were cut in Chinese ("打开第 4 层第
    …": which head, never shown) and the two-sentence view's four in both languages ("Open L4 H4 (+0…")."""
    page = browser.new_page(viewport={"width": 1024, "height": 2400})
    for view, extra in (("tab_search", {}), ("tab_compare", {"s2": "Jerry chases Tom."})):
        measure_view(streamlit_server, page, view, lang, "buttons", "Tom chases Jerry.", **extra)
        buttons = page.evaluate("() => document.querySelectorAll('[data-testid=stMain] button').length")
        assert buttons >= 4, view
        cut = page.evaluate(CUT_BUTTONS)
        assert cut == [], (view, cut)
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_mode_bar_shown_on_hover_leaves_chart_titles_readable(streamlit_server, browser, lang):
    """Issue 36 (this session's walk-through): with the pointer on a chart, Plotly's row of eight icons lay over
    the right end of long titles (head statistics, the logit lens); one icon, the PNG download, stays."""
    page = browser.new_page(viewport={"width": 1024, "height": 2400})
    measure_view(streamlit_server, page, "tab_heads", lang, "modebar", "Tom chases Jerry.")
    covered = []
    for plot in page.locator(".js-plotly-plot").all():
        plot.hover()
        page.wait_for_timeout(300)
        covered += plot.evaluate(
            """(plot) => {
                const bar = plot.querySelector('.modebar');
                if (!bar || getComputedStyle(bar).opacity === '0') return [];
                const b = bar.getBoundingClientRect();
                return [...plot.querySelectorAll('.gtitle')].filter((t) => {
                    const r = t.getBoundingClientRect();
                    return r.right > b.left + 1 && r.left < b.right - 1 && r.bottom > b.top + 1 && r.top < b.bottom - 1;
                }).map((t) => t.textContent);
            }"""
        )
    assert page.locator(".js-plotly-plot").count() >= 2 and not covered, covered
    page.close()


def test_head_ablation_buttons_stay_clickable_with_the_pointer_on_a_grid(streamlit_server, browser):
    """Issue 36 (this session's walk-through): hovering a head grid showed its table toolbar over the lower part of
    the "None off" button above it; a click there hit "Download as CSV"."""
    page = browser.new_page(viewport={"width": 1024, "height": 1400})
    page.goto(f"{streamlit_server}/?s=Tom+chases+Jerry.&view=tab_ablation", wait_until="domcontentloaded")
    page.locator(".dvn-scroller").first.wait_for(timeout=120_000)
    wait_until_idle(page)
    for grid, button in zip(
        page.locator(".dvn-scroller").all()[1:], page.get_by_role("button", name="None off").all()[1:]
    ):
        grid.hover()
        page.wait_for_timeout(300)
        box = button.bounding_box()
        hit = page.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('button')?.innerText ?? ''",
            [box["x"] + box["width"] * 0.8, box["y"] + box["height"] * 0.75],
        )
        assert hit == "None off", hit
    page.close()


# For the table under the pointer: its hover toolbar's box, and the boxes of the texts (text lines and chart texts)
# of the element just before the table.
UNDER_TABLE_TOOLBAR = r"""(frame) => {
    const container = frame.closest("[data-testid='stElementContainer']");
    const toolbar = container.querySelector("[data-testid='stElementToolbar']").getBoundingClientRect();
    const before = container.previousElementSibling;
    const boxes = [];
    if (before) {
        const walker = document.createTreeWalker(before, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (!node.textContent.trim()) continue;
            const range = document.createRange();
            range.selectNodeContents(node);
            for (const r of range.getClientRects()) boxes.push({x: r.left, y: r.top, w: r.width, h: r.height,
                                                                text: node.textContent.slice(0, 40), chart: 0});
        }
    }
    const box = {x: toolbar.left, y: toolbar.top, w: toolbar.width, h: toolbar.height, text: 'toolbar', chart: 0};
    return {toolbar: box, boxes};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("view", ["tab_heads", "tab_steps"])
def test_a_tables_hover_toolbar_leaves_the_heading_or_chart_above_it_readable(streamlit_server, browser, lang, view):
    """Issue 36: Streamlit's table toolbar, shown while the pointer is on a table, lies above the table; it covered
    the end of the head statistics' table headings and a "</s>" label of the step-by-step chart above its table."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    query = urllib.parse.urlencode({"s": UNSURE_TEN_WORDS, "lang": lang, "view": view})
    page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
    page.locator("[data-testid='stDataFrame']:visible").first.wait_for(timeout=180_000)
    wait_until_idle(page)
    tables = page.locator("[data-testid='stDataFrame']:visible")
    covered = []
    for i in range(tables.count()):
        tables.nth(i).scroll_into_view_if_needed()
        tables.nth(i).hover()
        page.wait_for_timeout(400)
        measured = tables.nth(i).evaluate(UNDER_TABLE_TOOLBAR)
        covered += [b["text"] for b in measured["boxes"] if intersect(b, measured["toolbar"])]
    assert tables.count() >= (4 if view == "tab_heads" else 1)
    assert not covered, covered
    page.close()


# The in-page map's frame (the instant switcher, ui.attention.show_in_browser) against the box Streamlit holds it
# in and the element after it.
FRAME_IN_ITS_BOX = r"""() => {
    const frame = [...document.querySelectorAll('iframe')].find(f => f.getBoundingClientRect().height > 100);
    const box = frame.closest("[data-testid='stElementContainer']");
    const next = box.nextElementSibling;
    return {frame: frame.getBoundingClientRect().bottom, box: box.getBoundingClientRect().bottom,
            next: next ? next.getBoundingClientRect().top : null,
            page: frame.contentDocument.body.getBoundingClientRect().height,
            frame_height: frame.getBoundingClientRect().height};
}"""


def test_in_presentation_mode_the_in_page_map_ends_above_the_text_after_it(default_server, browser):
    """The frame of the maps switched in the page takes its page's height in presentation mode's larger text; the
    box it sits in grew with it, so the caption below no longer runs over the last row of thumbnails (it did by
    69 px: the frame grew, its box kept the app's estimate)."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    query = urllib.parse.urlencode({"s": SENTENCE, "present": "1", "view": "tab_encoder"})
    page.goto(f"{default_server}/?{query}", wait_until="domcontentloaded")
    page.wait_for_selector("iframe", state="attached", timeout=120_000)
    wait_until_idle(page)
    assert_no_exception(page)
    page.wait_for_function(
        "() => { const f = [...document.querySelectorAll('iframe')].find(f => f.getBoundingClientRect().height > 100);"
        " return f && f.contentDocument && f.contentDocument.querySelector('#grid canvas'); }",
        timeout=60_000,
    )
    page.wait_for_timeout(1000)  # the frame fits itself when its page's layout changes
    measured = page.evaluate(FRAME_IN_ITS_BOX)
    page.screenshot(path=str(ARTIFACTS / "presentation-1024x768-in-page-map.png"), full_page=True)
    assert measured["frame_height"] >= measured["page"], measured  # the whole grid shows, nothing to scroll
    assert measured["frame"] <= measured["box"] + 1, measured
    assert measured["next"] is None or measured["next"] >= measured["frame"], measured
    page.close()


def test_opening_the_sidebar_in_presentation_mode_leaves_the_in_page_grid_whole(default_server, browser):
    """Presentation mode hides the sidebar; a teacher who opens it (») narrows the map's frame, and the grid of
    thumbnails, sized for the wider page, ran past it: the mean column behind a scroll bar inside the frame. The
    thumbnails take the frame's new width."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    query = urllib.parse.urlencode({"s": SENTENCE, "present": "1", "view": "tab_encoder"})
    page.goto(f"{default_server}/?{query}", wait_until="domcontentloaded")
    maps = page.frame_locator("iframe").first
    maps.locator("#grid canvas").first.wait_for(timeout=120_000)
    wait_until_idle(page)
    frame = next(f for f in page.frames if f != page.main_frame)
    widths = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    wide = frame.evaluate(widths)
    page.locator("[data-testid='stExpandSidebarButton']").click()
    page.wait_for_function("() => document.querySelector('iframe').getBoundingClientRect().width < 700", timeout=10_000)
    page.wait_for_timeout(1000)
    scroll, client = frame.evaluate(widths)
    assert client < wide[1]  # the frame is narrower
    assert scroll <= client, (scroll, client)
    page.close()

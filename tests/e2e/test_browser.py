"""The first thing a visitor does, in a real browser: type a sentence, see the translation and three heatmaps.

The screenshot lands in test-artifacts/app.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import (
    ARTIFACTS,
    assert_no_exception,
    download,
    open_app,
    open_view,
    wait_for_quiet_machine,
    wait_until_idle,
)


def test_type_a_sentence_and_see_translation_and_three_heatmaps(streamlit_server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page, box = open_app(browser, streamlit_server)

    box.fill("The dog is running in the park.")
    box.press("Enter")
    wait_until_idle(page)
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('s') === 'The dog is running in the park.'", timeout=60_000
    )

    translation = page.locator("[data-testid='stMarkdownContainer'] h3").first
    translation.wait_for(timeout=60_000)
    assert translation.inner_text().strip()

    for tab in ("Encoder self-attention", "Masked decoder self-attention", "Cross-attention"):
        open_view(page, tab)
        panel = page.locator("[role='tabpanel']:visible")
        heatmap = panel.locator(".js-plotly-plot").first
        heatmap.wait_for(state="visible", timeout=60_000)
        assert heatmap.locator(".heatmaplayer, .hm").count() > 0 or heatmap.locator("image").count() > 0
        # The query axis is named, as the app promises.
        assert "(query)" in heatmap.inner_text()
    open_view(page, "Cross-attention")
    # Streamlit scrolls inside its own container, so bring the cross-attention map into the shot.
    page.locator("[role='tabpanel']:visible .js-plotly-plot").first.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / "app.png"))
    page.close()
    assert (ARTIFACTS / "app.png").stat().st_size > 10_000


SLIDER = "[role='tabpanel']:visible [data-testid='stSlider'] input[type='range']"


def open_on_tab(browser, url: str, tab: str):
    """A new page on this link, with this tab opened once the first run has finished."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("tab", name="Cross-attention").wait_for(timeout=120_000)
    wait_until_idle(page)
    open_view(page, tab)
    wait_until_idle(page)
    return page


def test_only_the_open_tab_runs_yet_each_view_keeps_its_settings(streamlit_server, browser):
    """Lazy tabs: a view's own settings (the decoding step) survive a visit to another tab, and switching the
    interface language keeps the open tab open."""
    page = open_on_tab(browser, f"{streamlit_server}/?s=I+like+tea+very+much.", "Decoding steps")
    thumb = page.locator(SLIDER).first
    thumb.wait_for(state="attached", timeout=60_000)  # the slider's code loads the first time one is drawn
    # One step at a time: each press reruns the script, and a press that lands while the slider is redrawn
    # after the previous one is lost in the browser (seen once in CI), which is not what this test is about.
    for step in ("1", "2"):
        thumb = page.locator(SLIDER).first
        thumb.focus()
        thumb.press("ArrowRight")
        wait_until_idle(page)
        expect(thumb).to_have_value(step, timeout=30_000)
    assert page.locator(SLIDER).first.input_value() == "2"

    open_view(page, "Cross-attention")
    wait_until_idle(page)
    assert page.locator("[role='tabpanel']:visible .js-plotly-plot").count() >= 1
    open_view(page, "Decoding steps")
    wait_until_idle(page)
    thumb = page.locator(SLIDER).first
    thumb.wait_for(state="attached", timeout=60_000)
    assert thumb.input_value() == "2"

    page.get_by_text("中文", exact=True).click()
    wait_until_idle(page)
    selected = page.locator("[role='tab'][aria-selected='true']")  # the group's tab and the view's
    assert [x.strip() for x in selected.all_inner_texts()] == ["生成过程", "逐步解码"]
    page.locator(SLIDER).first.wait_for(state="attached", timeout=60_000)
    assert page.locator(SLIDER).first.input_value() == "2"
    assert_no_exception(page)
    page.close()


def test_the_downloaded_translation_loads_in_a_notebook(streamlit_server, browser, tmp_path):
    from model import export

    path = tmp_path / "translation.npz"
    page, name = download(
        browser, streamlit_server, "s=I+like+green+tea.", "Download the whole translation (.npz)", path
    )
    assert name == "en-zh-i-like-green-tea.npz"  # a lesson's files apart, not translation (1).npz, (2) ...
    translation = export.load(path)
    assert translation.source_text == "I like green tea."
    shown = page.locator("[data-testid='stMain'] [data-testid='stMarkdownContainer'] h3").first.inner_text().strip()
    assert translation.target_text.strip() == shown.replace("\\", "")
    assert translation.attention("cross").shape[-1] == len(translation.source_pieces)
    assert_no_exception(page)
    page.close()


TWENTY_WORDS = "The old man who lives next door gave my little sister a red bicycle for her birthday in early May."


# The colour painted in cells of the map against the weight the page's data holds for the thumbnail's layer and
# head (a thumbnail's index: layer * (heads + 1) + head, the last column the mean): a few pixels inside each
# sampled cell's corner, clear of its border.
CELLS_AGAINST_DATA = """(thumbnail) => {
  const k = DATA.kinds[state.kind], heads = k.weights[0].length, layer = Math.floor(thumbnail / (heads + 1));
  const h = thumbnail % (heads + 1), all = k.weights[layer];
  const weight = (i, j) => (h < heads ? all[h][i][j] : all.reduce((s, m) => s + m[i][j], 0) / heads);
  const full = document.getElementById('map')._fullLayout, canvas = document.getElementById('cells');
  const ratio = canvas.width / full._size.w, context = canvas.getContext('2d'), wrong = [];
  for (const [i, j] of [[0, 0], [3, 1], [7, 5], [12, 2], [20, 9]]) {
    if (i >= all[0].length || j >= all[0][0].length) continue;
    const x = Math.round((full.xaxis.l2p(j - 0.5) + 3) * ratio), y = Math.round((full.yaxis.l2p(i - 0.5) + 3) * ratio);
    const [r, g, b] = context.getImageData(x, y, 1, 1).data;
    const expected = k.masked && j > i ? DATA.masked_color : rgb(weight(i, j));
    const painted = k.masked && j > i ? '#' + [r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('') :
      `rgb(${r},${g},${b})`;
    if (painted !== expected) wrong.push(`${state.kind} ${thumbnail} (${i},${j}): ${painted} not ${expected}`);
  }
  return wrong;
}"""


# Row and column labels the map cut at its edge: each tick label's box against the map's, once the page's fonts
# have loaded (issue 59: laid out in a fallback font first, the longest Chinese row labels lost their first
# character until the kind was switched twice).
CUT_LABELS = """async () => {
  await document.fonts.ready;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const map = document.querySelector('#map .main-svg').getBoundingClientRect();
  return [...document.querySelectorAll('#map .ytick text, #map .xtick text')]
    .filter((t) => { const b = t.getBoundingClientRect();
                     return b.left < map.left - 0.5 || b.top < map.top - 0.5 || b.bottom > map.bottom + 0.5; })
    .map((t) => t.textContent);
}"""


def test_the_downloaded_web_page_opens_offline_and_switches_every_map_in_the_page(streamlit_server, browser, tmp_path):
    """Issue 37: "Download as a web page" saves one file that opens with the network off, draws each kind, layer
    and head in the page (a thumbnail's click opens its head), within 50 ms a switch, with no console error."""
    path = tmp_path / "attention.html"
    query = f"s={TWENTY_WORDS.replace(' ', '+')}&lang=zh"
    page, name = download(browser, streamlit_server, query, "下载为网页", path, viewport=(1024, 768))
    page.close()
    assert name.startswith("en-zh-") and name.endswith(".html"), name
    assert path.stat().st_size < 6 * 2**20

    offline = browser.new_context(viewport={"width": 1024, "height": 768}, offline=True)
    handout = offline.new_page()
    requests, errors = [], []
    handout.on("request", lambda r: requests.append(r.url))
    handout.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    handout.on("pageerror", lambda e: errors.append(str(e)))
    handout.goto(path.as_uri())
    handout.wait_for_selector("#map .main-svg")
    wait_for_quiet_machine()

    def title() -> str:
        return handout.locator("#map .gtitle").text_content()

    seen, times, wrong_cells = {title()}, [], []
    cut = handout.evaluate(CUT_LABELS)  # the first layout, the one the fonts arrived after
    for kind in range(3):
        handout.locator("button.kind").nth(kind).click()
        seen.add(title())
        cut += handout.evaluate(CUT_LABELS)
        for thumbnail in (0, 9, 20, 53, 1, 30, 44):  # L1 H1, L2 H1, L3 H3, L6 mean, L1 H2, L4 H4, L5 H9=mean
            handout.locator("#grid canvas").nth(thumbnail).click()
            seen.add(title())
            times.append(handout.evaluate("() => window.lastDrawMs"))  # a head switch: what the page computed
            wrong_cells += handout.evaluate(CELLS_AGAINST_DATA, thumbnail)
        handout.select_option("#layer", "4")
        handout.select_option("#head", "mean")
        seen.add(title())
    assert len(seen) >= 15  # every switch drew another map
    assert any("交叉注意力 · 第 6 层 · 所有头的平均" == s for s in seen)
    assert sorted(times)[int(0.9 * len(times))] <= 50, times
    assert wrong_cells == []  # the map shows the weights of the head clicked, not the one drawn before
    assert cut == []  # every row and column label whole, the first layout included
    assert [r for r in requests if not r.startswith(("file:", "data:"))] == []
    assert errors == []
    handout.screenshot(path=str(ARTIFACTS / "handout-zh.png"), full_page=True)
    offline.close()


def test_heads_switched_in_the_browser_cost_no_server_run_and_reach_the_next_view(streamlit_server, browser):
    """Issue 37: with "Switch heads in the browser" on, a thumbnail click or a layer or head choice redraws the map
    in the page (p90 under 50 ms of the page's time on a 20-word sentence) without a message to the server; the
    link follows, and the next view the server draws uses that head."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    page.goto(f"{streamlit_server}/?view=tab_cross&s={TWENTY_WORDS.replace(' ', '+')}", wait_until="domcontentloaded")
    page.get_by_text("Switch heads in the browser (instant)").wait_for(timeout=120_000)
    wait_until_idle(page)
    page.get_by_text("Switch heads in the browser (instant)").click()
    wait_until_idle(page)
    maps = page.frame_locator("iframe").first
    maps.locator("#map .main-svg").first.wait_for(timeout=60_000)
    page.wait_for_timeout(3000)  # the page has written the link
    before, times, titles = len(sent), [], set()
    for thumbnail in (1, 12, 23, 30, 44, 50, 3, 17, 5, 9, 14, 20, 26, 33, 38, 41, 47, 52, 2, 8):
        maps.locator("#grid canvas").nth(thumbnail).click()
        titles.add(maps.locator("#map .gtitle").text_content())
        times.append(maps.locator("body").evaluate("() => window.lastDrawMs"))
    maps.locator("#layer").select_option(index=3)  # layer 4
    maps.locator("#head").select_option(index=3)  # head 3 (after "mean over heads")
    page.wait_for_timeout(500)
    assert len(sent) == before  # not one message to the server: no script run
    assert len(titles) == 20
    assert sorted(times)[int(0.9 * len(times))] <= 50, times
    assert "layer=4" in page.url and "head=3" in page.url
    assert maps.locator("#map .gtitle").text_content() == "Cross-attention · layer 4 · head 3"
    # another view: the server reads the head from the link
    page.get_by_role("tab", name="What heads do").click()
    wait_until_idle(page)
    page.get_by_role("tab", name="Query–key space").click()
    wait_until_idle(page)
    assert_no_exception(page)
    assert "layer=4" in page.url and "head=3" in page.url
    expect(page.locator(".js-plotly-plot .gtitle").first).to_contain_text("Layer 4, head 3", timeout=60_000)
    page.close()


def test_head_search_opens_the_best_head_in_its_map(streamlit_server, browser):
    page = open_on_tab(browser, f"{streamlit_server}/?s=The+dog+chases+the+cat.", "Head search")
    button = page.get_by_role("button", name="Open L", exact=False).first
    button.wait_for(timeout=60_000)
    label = button.inner_text().strip()  # "Open L5 H8"
    layer, head = label.removeprefix("Open L").split(" H")
    button.click()
    wait_until_idle(page)
    selected = page.locator("[role='tab'][aria-selected='true']")
    assert [x.strip() for x in selected.all_inner_texts()] == ["Attention maps", "Encoder self-attention"]
    title = page.locator("[role='tabpanel']:visible .js-plotly-plot .gtitle").first
    title.wait_for(timeout=60_000)
    assert f"layer {layer} · head {head}" in title.text_content()
    assert_no_exception(page)
    page.close()


def test_a_minimal_pair_fills_both_sentences_and_shows_them_side_by_side(streamlit_server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(streamlit_server, wait_until="domcontentloaded")
    page.get_by_role("tab", name="Two sentences").wait_for(timeout=120_000)
    wait_until_idle(page)
    for pair, second, words in (
        ("word order: dog chases cat / cat chases dog", "The cat chases the dog.", ("chases", "dog", "cat")),
        (
            "“it”: too tired / too wide",
            "The animal didn't cross the street because it was too wide.",
            ("it", "animal", "street"),
        ),
    ):
        page.locator("[data-testid='stSelectbox']").filter(has_text="Minimal pairs").click()
        page.get_by_role("option", name=pair).click()
        # the rerun the choice starts may begin after wait_until_idle's first look (the CI once read the first
        # pair's sentence on a loaded machine): wait for the sentence itself, then for the run to end
        box = page.get_by_label("Second sentence (to compare)", exact=True).and_(page.locator("input"))
        expect(box).to_have_value(second, timeout=60_000)
        wait_until_idle(page)
        assert page.locator("[role='tab'][aria-selected='true']").last.inner_text().strip() == "Two sentences"
        panel = page.locator("[role='tabpanel']:visible")
        panel.locator(".js-plotly-plot").nth(1).wait_for(timeout=60_000)
        assert panel.locator(".js-plotly-plot").count() >= 3  # both maps and the heads' differences
        # The head search's three boxes show the new pair's own words, those its chart ranks heads by (they
        # showed the first pair's words over the second pair's chart).
        boxes = ("Query (in both sentences)", "Word that fits the first sentence", "Word that fits the second sentence")
        shown = [panel.get_by_role("combobox", name=name).input_value().split(": ", 1)[1] for name in boxes]
        pieces = [w.lstrip("\u2581").lower() for w in shown]  # a word's first piece ("▁chase" of chases)
        assert all(piece and word.startswith(piece) for piece, word in zip(pieces, words)), shown
        title = panel.locator(".gtitle").filter(has_text="How much more each head links").first
        expect(title).to_contain_text(f"links {shown[0]} to")
        assert_no_exception(page)
    page.get_by_text("中文", exact=True).click()
    wait_until_idle(page)
    assert page.locator("[role='tab'][aria-selected='true']").last.inner_text().strip() == "两句对比"
    assert_no_exception(page)
    page.close()


@pytest.mark.checkpoint
def test_the_handout_on_a_machine_without_a_chinese_font_shows_every_label_whole(browser_without_cjk, tmp_path):
    """Issue 59: opened where the system has no Chinese font, the handout's longest Chinese row labels lost their
    first character (laid out before its embedded font had loaded) until the kind was switched twice."""
    from model import decode
    from model.checkpoint import load_checkpoint
    from viz.handout import handout

    from ..conftest import SHIPPED

    loaded = load_checkpoint(SHIPPED)
    tr = decode.translate(
        loaded.model,
        loaded.source_tokenizer,
        loaded.target_tokenizer,
        "My friend Anna lives in Munich and works at a large hospital.",
    )
    path = tmp_path / "handout.html"
    path.write_text(handout(tr, "zh", "en-zh", ("en", "zh"), "cross", 6, "mean"), encoding="utf-8")
    page = browser_without_cjk.new_page(viewport={"width": 1024, "height": 768})
    page.goto(path.as_uri())
    page.wait_for_selector("#map .main-svg")
    page.screenshot(path=str(ARTIFACTS / "handout-no-cjk-font.png"))
    assert page.evaluate(CUT_LABELS) == []
    page.close()


def test_a_button_that_opens_another_view_shows_it_from_the_top(streamlit_server, browser):
    """At 1024×768 the compare view's head buttons and a lesson's way to the explorer lie 1,500–1,900 px down the
    page; a click opened the view but left the page there, the map it opened above the screen (a teacher saw the
    thumbnails or the lesson's own chart and thought nothing happened). The page now starts at its top, the
    opened map's title on screen."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    main = "[data-testid='stMain']"
    for query, button in (
        ("s=The+dog+chases+the+cat.&s2=The+cat+chases+the+dog.&view=tab_compare", "compare-open-0"),
        ("s=The+dog+chases+the+cat.&view=lesson_scaling", "open-lesson_scaling"),
    ):
        page.goto(f"{streamlit_server}/?{query}", wait_until="domcontentloaded")
        clicked = page.locator(f".st-key-{button} button").first
        clicked.wait_for(timeout=120_000)
        wait_until_idle(page)
        clicked.scroll_into_view_if_needed()
        assert page.evaluate(f'() => document.querySelector("{main}").scrollTop') > 700
        clicked.click()
        wait_until_idle(page)
        page.wait_for_timeout(1000)
        assert page.evaluate(f'() => document.querySelector("{main}").scrollTop') == 0, button
        title = page.locator("[role='tabpanel']:visible .js-plotly-plot .gtitle").first
        title.wait_for(timeout=60_000)
        assert 0 <= title.bounding_box()["y"] <= 768 - 20, (button, title.bounding_box())
        assert_no_exception(page)
    page.close()

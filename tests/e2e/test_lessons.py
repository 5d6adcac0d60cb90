"""The Lessons page in a real browser, through a run of sentences: the word-swap selectors (whose options change
with every sentence) keep a valid choice, the language switch keeps the lesson, and a lesson opens its view in
the explorer. The screenshot of the word-order lesson lands in test-artifacts/lesson-positions.png."""

from __future__ import annotations

import re

import pytest

from ..conftest import SHIPPED
from .conftest import ARTIFACTS, SIDEBAR, assert_no_exception, wait_until_idle
from .test_session import type_sentence

pytestmark = pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped en-zh checkpoint")


def swapped_line(page) -> str:
    line = page.locator("[data-testid='stMarkdownContainer']", has_text="Swapped:").last
    return line.inner_text().split("Swapped:")[1].strip()


def test_word_order_lesson_over_several_sentences(streamlit_server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(streamlit_server, wait_until="domcontentloaded")
    page.locator(SIDEBAR).get_by_label("English sentence", exact=True).wait_for(timeout=120_000)
    wait_until_idle(page)
    page.get_by_text("Lessons", exact=True).click()
    wait_until_idle(page)
    page.get_by_role("tab", name="5 · Positions", exact=True).click()
    wait_until_idle(page)

    type_sentence(page, "The dog chases the cat.")
    assert_no_exception(page)
    assert swapped_line(page) == "The cat chases the dog."
    without = page.locator("[data-testid='stMetric']", has_text="Without positional encoding")
    assert float(without.locator("[data-testid='stMetricValue']").inner_text()) < 1e-5
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lesson-positions.png"))

    # Other sentences: the word choices are new options each time, and the page must not fall over.
    for sentence in ("Tom is reading a book in the garden.", "Go.", "She bought a red car yesterday."):
        type_sentence(page, sentence)
        assert_no_exception(page)
        if sentence != "Go.":  # one word and a full stop: nothing to swap but the two
            assert swapped_line(page) != sentence
    box = page.get_by_role("combobox", name="Second word", exact=True)
    box.click()
    box.fill("car")
    page.get_by_role("option", name=re.compile(r"^\d+: car$")).click()
    wait_until_idle(page)
    assert_no_exception(page)
    assert "car" in swapped_line(page).split()[1:3]

    page.locator(SIDEBAR).get_by_text("中文", exact=True).click()
    wait_until_idle(page)
    assert page.get_by_role("tab", name="5 · 位置", exact=True).get_attribute("aria-selected") == "true"
    page.get_by_role("button", name="在探索页中打开：位置编码").click()
    wait_until_idle(page)
    assert_no_exception(page)
    assert page.get_by_role("tab", name="位置编码", exact=True).get_attribute("aria-selected") == "true"
    page.close()


def learned_map_title(page) -> str:
    return page.locator(".js-plotly-plot .gtitle", has_text="Cross-attention of the test sentence").text_content()


def slide_to(page, key: str) -> None:
    """Move the snapshot slider with the keyboard (Home: the first snapshot, End: the last, ArrowLeft: one back)."""
    page.get_by_role("slider").focus()
    page.keyboard.press(key)
    wait_until_idle(page)


def test_attention_is_learned_lesson_trains_and_its_slider_works_over_several_runs(streamlit_server, browser):
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.goto(streamlit_server + "/?view=lesson_learned", wait_until="domcontentloaded")
    # The default run was started with the server's first page: the lesson opens on it once it has finished.
    page.get_by_role("slider").wait_for(timeout=120_000)
    wait_until_idle(page)
    assert_no_exception(page)
    assert "step 400" in learned_map_title(page)
    assert "This run learnt the task" in page.locator("[data-testid='stMarkdownContainer']").all_inner_texts().__str__()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lesson-learned.png"))

    # Three runs in a row, each a switch away from the one before: train it, then move the slider over it.
    for change in ("no positions", "one head", "seed 3"):
        if change == "no positions":
            page.get_by_text("Positional encoding in the encoder", exact=True).click()
        elif change == "one head":
            page.get_by_role("radiogroup", name="Heads").get_by_text("1", exact=True).click()
        else:
            box = page.get_by_role("combobox", name="Seed")
            box.click()
            box.fill("3")
            page.get_by_role("option", name="3").click()
        wait_until_idle(page)
        page.get_by_role("button", name=re.compile(r"^Train this model")).click()
        page.get_by_role("slider").wait_for(timeout=120_000)
        wait_until_idle(page)
        assert_no_exception(page)
        text = " ".join(page.locator("[data-testid='stMarkdownContainer']").all_inner_texts())
        if change == "no positions":
            assert "did not learn the task" in text and "no positional encoding" in text
        assert "step 400" in learned_map_title(page)
        slide_to(page, "Home")
        assert "step 0:" in learned_map_title(page)
        slide_to(page, "ArrowRight")
        assert "step 20:" in learned_map_title(page)
        # the run before it, dashed, for comparison
        assert page.locator(".js-plotly-plot .legendtext", has_text="dashed: before").count() > 0
    page.close()


def plot_titles(page) -> list[str]:
    return [e.text_content() for e in page.locator("[role='tabpanel']:visible .js-plotly-plot .gtitle").all()]


def fits_the_width(page) -> bool:
    """Nothing wider than the window (a map or a table cut at the right edge of a 1024 px projector)."""
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_decoder_only_lesson_trains_both_models_task_after_task_at_1024(streamlit_server, browser):
    """Issue 61, in Chromium at 1024×768: one press trains the encoder-decoder and the decoder alone; their maps and
    table come up; another task trains again, the first comes back from the cache at once, and the Chinese
    interface draws the same runs."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.goto(streamlit_server + "/?view=lesson_decoder_only", wait_until="domcontentloaded")
    train = page.get_by_role("button", name=re.compile(r"^Train both"))
    train.wait_for(timeout=120_000)
    for task in ("reorder", "copy", "reorder"):
        page.get_by_role("radiogroup", name="Task").get_by_text(task, exact=True).click()
        wait_until_idle(page)
        if task == "copy" or not page.locator(".js-plotly-plot").count():  # the second reorder: already trained
            page.get_by_role("button", name=re.compile(r"^Train both")).click()
        page.locator(".js-plotly-plot .gtitle", has_text="Decoder only").wait_for(timeout=180_000)
        wait_until_idle(page)
        assert_no_exception(page)
        titles = plot_titles(page)
        assert any(x.startswith("Encoder–decoder: cross-attention") for x in titles), titles
        assert any(x.startswith("Decoder only: masked self-attention") for x in titles), titles
        table = page.locator("[data-testid='stTable']").last.inner_text()
        assert "encoder–decoder" in table and "decoder only" in table and "100%" in table
        assert page.locator(".js-plotly-plot .legendtext", has_text="source").count() > 0  # the outlined block
        assert fits_the_width(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".js-plotly-plot", has_text="Decoder only").last.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "lesson-decoder-only.png"))
    page.locator(SIDEBAR).get_by_text("中文", exact=True).click()
    wait_until_idle(page)
    assert_no_exception(page)
    titles = plot_titles(page)
    assert any(x.startswith("仅解码器") for x in titles) and any(x.startswith("编码器–解码器") for x in titles), titles
    page.close()


def test_post_norm_against_pre_norm_trains_setting_after_setting_at_1024(streamlit_server, browser):
    """Issue 61, in Chromium at 1024×768: lesson 6's section trains both placements of LayerNorm on one setting,
    draws their curves and first-step gradient norms, then does the same on the deep setting."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.goto(streamlit_server + "/?view=lesson_residual", wait_until="domcontentloaded")
    page.get_by_text("Post-norm or pre-norm, trained here", exact=True).wait_for(timeout=120_000)
    wait_until_idle(page)
    for setting in ("lesson 11's default", "deep and fast"):
        page.get_by_text(setting, exact=False).first.click()
        wait_until_idle(page)
        page.get_by_role("button", name=re.compile(r"^Train post-norm and pre-norm")).click()
        legend = page.locator(".js-plotly-plot .legendtext", has_text="post-norm (the paper)")
        legend.first.wait_for(timeout=300_000)
        wait_until_idle(page)
        assert_no_exception(page)
        assert page.locator(".js-plotly-plot .legendtext", has_text="pre-norm (the shipped models)").count() > 0
        assert fits_the_width(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".js-plotly-plot", has_text="post-norm (the paper)").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "lesson-norm-placement.png"))
    page.close()


TITLE_INSIDE_ITS_FIGURE = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.offsetParent)
    .map(p => [p.querySelector('.gtitle'), p.querySelector('.main-svg')])
    .filter(([title]) => title)
    .map(([title, svg]) => [title.textContent, title.getBoundingClientRect().top - svg.getBoundingClientRect().top])"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_lessons_chart_titles_start_inside_their_figure(streamlit_server, browser, lang):
    """The masks lesson's two-line title ("The batch as the model reads it / (grey: padding …)") began 5 px above
    its figure, the first line's upper half cut: every chart title of the lessons a sentence draws at once starts
    inside its figure."""
    from ui.views import lessons

    page = browser.new_page(viewport={"width": 1024, "height": 768})
    for lesson in lessons():
        page.goto(f"{streamlit_server}/?s=I+like+tea.&lang={lang}&view={lesson}", wait_until="domcontentloaded")
        page.locator("[data-testid='stMain'] [role='tab'][aria-selected='true']").first.wait_for(timeout=120_000)
        wait_until_idle(page)
        for title, top in page.evaluate(TITLE_INSIDE_ITS_FIGURE):
            assert top >= 0, (lesson, title, top)
    page.close()

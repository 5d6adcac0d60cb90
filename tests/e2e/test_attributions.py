"""Attribution methods beside the weights, in a browser: switching the account a map shows on a 20-word sentence,
over several sentences in a row, and lesson 10 in Chinese. Timings land in test-artifacts/attribution-timings.txt."""

from __future__ import annotations

from words import t

from .conftest import ARTIFACTS, assert_no_exception, choose, open_app, open_view, wait_until_idle

SENTENCES = [
    "The old man who lives next to the station walked his small dog in the park every morning before work.",
    "Tom chases Jerry.",
    "My sister bought three red apples at the market yesterday because she wanted to bake a cake for us.",
]
METHODS = ("norm", "value-zeroing", "rollout", "gradient-x-input", "attention")


def map_title(page) -> str:
    return page.evaluate("""() => {
        const panel = [...document.querySelectorAll('[role="tabpanel"]')].find(p => p.offsetParent !== null);
        const title = panel && panel.querySelector('.js-plotly-plot .gtitle');
        return title ? title.textContent : '';
    }""")


def test_switching_the_account_redraws_the_map_for_sentence_after_sentence(streamlit_server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page, box = open_app(browser, streamlit_server, 1280, 900)
    open_view(page, "Cross-attention")
    wait_until_idle(page)
    # The user's wait starts when they press the option (a capturing listener, the browser's own clock), not when
    # Playwright starts opening the list and typing into it.
    page.evaluate("""() => document.addEventListener('pointerdown', () => { window.__pressed = performance.now(); },
                                                    true)""")
    labels = [t(f"attribution_{m}", "en") for m in METHODS if m != "attention"]
    timings = []
    for sentence in SENTENCES:
        box.fill(sentence)
        box.press("Enter")
        wait_until_idle(page)
        for method in METHODS:
            label = t(f"attribution_{method}", "en")
            choose(page, t("attribution", "en"), label, typed=label.split(" ")[0], wait=False)
            # when the visible map's title names the method (or, back on the weights, names none of them)
            drawn = page.wait_for_function(
                """([label, others]) => {
                    const titles = [...document.querySelectorAll('[role="tabpanel"]')]  // each visible view's map
                        .filter(p => p.offsetParent !== null)
                        .map(p => p.querySelector('.js-plotly-plot .gtitle'))
                        .filter(e => e).map(e => e.textContent);
                    const shown = label === null ? titles.some(x => x && !others.some(o => x.includes(o)))
                                                 : titles.some(x => x.includes(label));
                    return shown ? performance.now() : false;
                }""",
                arg=[None if method == "attention" else label, labels],
                timeout=60_000,
                polling="raf",
            )
            timings.append(
                (len(sentence.split()), method, (drawn.json_value() - page.evaluate("() => window.__pressed")) / 1000)
            )
            wait_until_idle(page)
            assert_no_exception(page)
            if method != "attention":
                assert label in map_title(page)
        assert "Cross-attention" in map_title(page) and "layer" in map_title(page)
    # Integrated gradients: computed when asked for, on this sentence, with its completeness said under the map. On
    # the short sentence: on the 20-word one it takes 94 s on one core beside a training run (3,712 gradients,
    # measured 2026-12-06), which says nothing about the page and outlasted the wait on a loaded machine.
    box.fill(SENTENCES[1])
    box.press("Enter")
    wait_until_idle(page)
    choose(page, t("attribution", "en"), t("attribution_integrated-gradients", "en"))
    name = t("attribution_integrated-gradients", "en")
    page.get_by_role("button", name=t("attribution_compute", "en", method=name)).click()
    page.get_by_text("Completeness:", exact=False).first.wait_for(timeout=240_000)
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "attribution-integrated-gradients.png"))
    (ARTIFACTS / "attribution-timings.txt").write_text(
        "".join(f"{words} words\t{method}\t{seconds:.2f} s\n" for words, method, seconds in timings)
    )
    page.close()
    # Loose bound for a shared two-core machine; the measured times are in the artifact and benchmarks/README.md.
    assert max(s for _, _, s in timings) < 10


def test_lesson_ten_in_chinese_puts_every_method_beside_occlusion(streamlit_server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{streamlit_server}/?lang=zh&view=lesson_explanation&s=Tom+chases+Jerry.", wait_until="domcontentloaded")
    page.get_by_text("注意力是解释吗", exact=False).first.wait_for(timeout=120_000)
    wait_until_idle(page)
    assert_no_exception(page)
    plot = page.locator("[role='tabpanel']:visible .js-plotly-plot").first
    plot.wait_for(state="visible", timeout=60_000)
    text = plot.inner_text()
    assert "遮挡" in text and "值向量置零" in text
    page.screenshot(path=str(ARTIFACTS / "lesson-explanation-zh.png"), full_page=True)
    page.close()


def open_view_tab(page) -> str:
    """The label of the explorer view tab shown now."""
    return page.evaluate("""() => {
        const open = [...document.querySelectorAll('[role="tab"][aria-selected="true"]')]
            .filter(t => t.offsetParent !== null).map(t => t.textContent.trim());
        return open[open.length - 1] || '';
    }""")


def test_tabs_and_a_new_sentence_stay_the_users_while_integrated_gradients_computes(streamlit_server, browser):
    """Issue 59: integrated gradients asked for on a 19-word sentence; while it computed, another head chosen, then
    Encoder self-attention and back to Cross-attention. The view tabs flipped by themselves every few seconds for
    minutes, then Cross-attention stayed blank and typed sentences were ignored until a reload."""
    page, box = open_app(browser, streamlit_server, 1024, 768)
    box.fill("Last summer my cousin and her husband travelled by train from Berlin to a small town near the sea.")
    box.press("Enter")
    wait_until_idle(page)
    open_view(page, "Cross-attention")
    wait_until_idle(page)
    choose(page, t("attribution", "en"), t("attribution_integrated-gradients", "en"))
    name = t("attribution_integrated-gradients", "en")
    page.get_by_role("button", name=t("attribution_compute", "en", method=name)).click()
    page.wait_for_timeout(1500)
    choose(page, t("head", "en"), t("head_n", "en", n=3), wait=False)
    page.wait_for_timeout(800)
    open_view(page, "Encoder self-attention")
    page.wait_for_timeout(800)
    open_view(page, "Cross-attention")
    page.wait_for_function(
        """() => [...document.querySelectorAll('[role="tab"][aria-selected="true"]')]
            .some(t => t.offsetParent !== null && t.textContent.trim() === 'Cross-attention')""",
        timeout=30_000,
    )
    shown = []
    for _ in range(40):  # twenty seconds, while the computation goes on: the tab the user chose stays open
        page.wait_for_timeout(500)
        shown.append(open_view_tab(page))
    assert set(shown) == {"Cross-attention"}, shown
    box.fill("Tom chases Jerry.")
    box.press("Enter")
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('s') === 'Tom chases Jerry.'", timeout=60_000
    )
    wait_until_idle(page, timeout=60_000)
    assert open_view_tab(page) == "Cross-attention"
    assert "Cross-attention" in map_title(page)
    assert_no_exception(page)
    page.close()

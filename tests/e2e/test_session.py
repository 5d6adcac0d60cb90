"""A teacher's lesson in a real browser: one page, many sentences typed one after another, with the view
changed between them, and several pages on one server at once.

AppTest does not reproduce how a browser keeps widget state (a select widget whose options change kept its old
label as its value and crashed the page on the second sentence), so these run in Chromium.
"""

from __future__ import annotations

import pytest

from model.checkpoint import load_checkpoint
from model.decode import encode_source, translate

from ..conftest import SHIPPED
from .conftest import SIDEBAR, assert_no_exception, choose, open_view, visible_heatmap_ticks, wait_until_idle

pytestmark = pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped en-zh checkpoint")


@pytest.fixture(scope="module")
def en_zh():
    return load_checkpoint(SHIPPED)


def source_pieces(loaded, sentence: str) -> list[str]:
    _, pieces, _ = encode_source(loaded.source_tokenizer, sentence, loaded.model.cfg.max_len)
    return pieces


def type_sentence(page, sentence: str) -> None:
    box = page.locator(SIDEBAR).get_by_role("textbox", name="English sentence", exact=True)
    box.fill(sentence)
    box.press("Enter")
    wait_until_idle(page)


def open_tab(page, name: str) -> None:
    open_view(page, name)
    page.wait_for_timeout(300)


def check_encoder_map_shows(page, loaded, sentence: str) -> None:
    """After every step: no exception anywhere, and the encoder map's axes carry this sentence's pieces."""
    assert_no_exception(page)
    open_tab(page, "Encoder self-attention")
    expected = [p.lstrip("\u2581") for p in source_pieces(loaded, sentence) if p.lstrip("\u2581")]
    page.wait_for_function(
        "(expected) => { const panel = [...document.querySelectorAll('[role=tabpanel]')]"
        ".find(p => p.offsetParent !== null); const plot = panel && panel.querySelector('.js-plotly-plot');"
        " if (!plot) return false; const ticks = [...plot.querySelectorAll('.xtick text, .ytick text')]"
        ".map(t => t.textContent); return expected.every(e => ticks.some(t => t.includes(e))); }",
        arg=expected,
        timeout=60_000,
    )
    ticks = visible_heatmap_ticks(page)
    missing = [e for e in expected if not any(e in t for t in ticks)]
    assert not missing, f"{sentence!r}: pieces {missing} not on the encoder map's axes {ticks}"
    assert_no_exception(page)


def test_a_lesson_of_many_sentences_on_one_page(streamlit_server, browser, en_zh):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(streamlit_server, wait_until="domcontentloaded")
    page.locator(SIDEBAR).get_by_label("English sentence", exact=True).wait_for(timeout=120_000)
    wait_until_idle(page)

    # Each step: a sentence, then changes of the view before the next one. The softmax tab holds the query
    # selector whose stale label crashed the page on the second sentence.
    steps = [
        ("The dog is running in the park.", lambda: open_tab(page, "Softmax and √d_k")),
        ("Mary went home.", lambda: choose(page, "Layer", "3")),
        (
            "I bought a new computer yesterday because the old one was much too slow and very noisy.",
            lambda: choose(page, "Head", "head 5"),
        ),
        ("Tom said ☃ and Ω to me.", lambda: open_tab(page, "Decoding steps")),
        (
            "Where is the station?",
            lambda: (page.locator(SIDEBAR).get_by_text("Beam search", exact=True).click(), wait_until_idle(page)),
        ),
        (
            "Can you help me with my homework?",
            lambda: (page.locator(SIDEBAR).get_by_text("Word level").click(), wait_until_idle(page)),
        ),
        (
            "She bought a red car yesterday.",
            lambda: (
                page.locator(SIDEBAR)
                .get_by_role("textbox", name="Reference translation (optional, for teacher forcing)")
                .fill("她昨天买了一辆红色的车。"),
                page.keyboard.press("Enter"),
                wait_until_idle(page),
            ),
        ),
        ("Good morning.", lambda: (open_tab(page, "Step by step"), choose(page, "Head", "mean over heads"))),
        (
            "Attention is all you need.",
            lambda: (
                page.locator(SIDEBAR).get_by_text("Greedy", exact=True).click(),
                wait_until_idle(page),
                open_tab(page, "Cross-attention"),
            ),
        ),
        ("Tom chased Jerry.", lambda: choose(page, "Layer", "6")),
    ]
    for sentence, change_view in steps:
        type_sentence(page, sentence)
        check_encoder_map_shows(page, en_zh, sentence)
        change_view()
        assert_no_exception(page)
        # every tab renders after the change, the softmax and step-by-step views among them
        for tab in ("Softmax and √d_k", "Step by step", "Head statistics", "Decoding steps"):
            open_tab(page, tab)
            assert_no_exception(page)
    page.close()


def test_several_pages_on_one_server_each_get_their_own_translation(streamlit_server, browser, en_zh):
    sentences = ["I am a student.", "The cat is sleeping on the sofa.", "It is raining today."]
    expected = {
        s: translate(en_zh.model, en_zh.source_tokenizer, en_zh.target_tokenizer, s, need_qkv=False).target_text
        for s in sentences
    }
    contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in sentences]
    pages = [c.new_page() for c in contexts]
    for page in pages:
        page.goto(streamlit_server, wait_until="domcontentloaded")
    for page in pages:
        page.locator(SIDEBAR).get_by_label("English sentence", exact=True).wait_for(timeout=120_000)
    # Type into every page before waiting on any: the server handles the runs together.
    for page, sentence in zip(pages, sentences):
        box = page.locator(SIDEBAR).get_by_role("textbox", name="English sentence", exact=True)
        box.fill(sentence)
        box.press("Enter")
    for page, sentence in zip(pages, sentences):
        wait_until_idle(page)
        page.wait_for_function(
            "(want) => [...document.querySelectorAll('[data-testid=stMarkdownContainer] h3')]"
            ".some(h => h.textContent.trim() === want)",
            arg=expected[sentence],
            timeout=60_000,
        )
        headings = [h.strip() for h in page.locator("[data-testid='stMarkdownContainer'] h3").all_inner_texts()]
        others = [expected[s] for s in sentences if s != sentence]
        assert not set(others) & set(headings), f"another page's translation shows on the page of {sentence!r}"
        check_encoder_map_shows(page, en_zh, sentence)
    for c in contexts:
        c.close()

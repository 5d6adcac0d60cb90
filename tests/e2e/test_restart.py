"""A server killed and started again while pages are open: each page's first action afterwards takes effect
(a typed sentence, a layer, a tab, the first tab again, the word-level tick), not only the second."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from serve import start_streamlit, wait_healthy

from .conftest import SIDEBAR, assert_no_exception, free_port, open_view, wait_until_idle


def start(port: int, env: dict) -> subprocess.Popen:
    server = start_streamlit(port, env)
    wait_healthy(f"http://127.0.0.1:{port}", timeout=90, poll=0.3)
    return server


def translation(page) -> str:
    return page.locator("[data-testid='stMain'] [data-testid='stMarkdownContainer'] h3").first.inner_text()


def test_the_first_action_after_a_restart_takes_effect(tiny_checkpoint, browser):
    port = free_port()
    # the server's own maps: the pages' layer choice is the sidebar's, a script run a restart must not lose
    env = dict(
        os.environ, ATTENTION_EXPLORER_CHECKPOINTS=str(tiny_checkpoint.parent), ATTENTION_EXPLORER_SWITCH_IN_BROWSER="0"
    )
    server = start(port, env)
    url = f"http://127.0.0.1:{port}"
    pages = []
    try:
        for query in ("s=I+like+tea.", "s=Tom+drinks+tea.", "s=We+drink+water.", "s=You+like+tea.", "view=tab_cross"):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
            page.locator("[data-testid='stMarkdownContainer'] h3").first.wait_for(timeout=120_000)
            wait_until_idle(page)
            # fully drawn, as a student's page is: the browser loads each kind of element's script when it is
            # first drawn, and a fetch cut off by the kill below would stay failed in that page
            page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
            page.locator(SIDEBAR).get_by_text("Word level", exact=False).first.wait_for(timeout=120_000)
            pages.append(page)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=20)
        server = start(port, env)
        time.sleep(3)  # the pages reconnect on their own

        typing, layering, tabbing, ticking, returning = pages
        box = typing.get_by_label("English sentence", exact=True).and_(typing.locator("input"))
        before = translation(typing)
        box.fill("Good morning.")
        box.press("Enter")
        typing.wait_for_function(
            "() => new URLSearchParams(location.search).get('s') === 'Good morning.'", timeout=60_000
        )
        wait_until_idle(typing)
        assert translation(typing) != before  # the new sentence's translation, not the old one

        combo = layering.locator(SIDEBAR).get_by_role("combobox", name="Layer", exact=True)
        combo.click()
        combo.fill("2")
        layering.get_by_role("option", name="2", exact=True).click()
        layering.wait_for_function("() => new URLSearchParams(location.search).get('layer') === '2'", timeout=60_000)
        wait_until_idle(layering)
        assert "layer 2" in layering.locator(".js-plotly-plot .gtitle").first.text_content()

        open_view(tabbing, "Cross-attention")
        tabbing.wait_for_function(
            "() => new URLSearchParams(location.search).get('view') === 'tab_cross'", timeout=60_000
        )
        wait_until_idle(tabbing)

        # the first tab, where the page shows another: its click is told apart from a page that sent no tab
        open_view(returning, "Encoder self-attention")
        returning.wait_for_function("() => !new URLSearchParams(location.search).has('view')", timeout=60_000)
        wait_until_idle(returning)

        ticking.locator(SIDEBAR).get_by_text("Word level", exact=False).first.click()
        ticking.wait_for_function("() => new URLSearchParams(location.search).get('words') === '1'", timeout=60_000)
        wait_until_idle(ticking)
        for page in pages:
            assert_no_exception(page)
        # and the actions stay: a second look a moment later shows the same state
        time.sleep(1)
        assert "s=Good+morning." in typing.url or "s=Good%20morning." in typing.url
        assert "layer=2" in layering.url and "view=tab_cross" in tabbing.url and "words=1" in ticking.url
        assert "view=" not in returning.url
    finally:
        for page in pages:
            page.close()
        server.terminate()
        server.wait(timeout=20)


def test_a_server_told_to_stop_stops_within_two_seconds_while_its_background_sample_is_computing(browser):
    """Issue 36: after one page had opened, SIGTERM took 5-30 s (the query-key sample's thread was waited for),
    so `serve` had to kill loaded replicas."""
    port = free_port()
    server = start(port, dict(os.environ))  # the shipped checkpoints: their held-out sample takes seconds
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/?s=I+like+tea.", wait_until="domcontentloaded")
        page.locator("[data-testid='stMarkdownContainer'] h3").first.wait_for(timeout=120_000)
        page.close()
        stopping = time.monotonic()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        assert time.monotonic() - stopping < 2.0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=20)


def test_after_a_restart_the_default_pages_head_switch_and_the_next_sentence_take_effect(tiny_checkpoint, browser):
    """Issue 59: with heads switched in the page (the default), a server restart must not lose them either: the
    first thumbnail click afterwards paints its head and reaches the link, and the next sentence typed is
    translated and opens on that head."""
    port = free_port()
    env = dict(os.environ, ATTENTION_EXPLORER_CHECKPOINTS=str(tiny_checkpoint.parent))
    env.pop("ATTENTION_EXPLORER_SWITCH_IN_BROWSER", None)
    server = start(port, env)
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        page.goto(f"http://127.0.0.1:{port}/?s=I+like+tea.", wait_until="domcontentloaded")
        maps = page.frame_locator("iframe").first
        maps.locator("#map .main-svg").first.wait_for(timeout=120_000)
        wait_until_idle(page)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=20)
        server = start(port, env)
        time.sleep(3)  # the page reconnects on its own

        maps.locator("#grid canvas").nth(1).click()  # layer 1, head 2
        clicked = maps.locator("#map .gtitle").text_content()
        assert "head 2" in clicked and "layer 1" in clicked
        page.wait_for_function("() => new URLSearchParams(location.search).get('head') === '2'", timeout=60_000)

        before = translation(page)
        box = page.get_by_label("English sentence", exact=True).and_(page.locator("input"))
        box.fill("Good morning.")
        box.press("Enter")
        page.wait_for_function(
            "() => new URLSearchParams(location.search).get('s') === 'Good morning.'", timeout=60_000
        )
        wait_until_idle(page)
        assert translation(page) != before
        maps = page.frame_locator("iframe").first
        maps.locator("#map .main-svg").first.wait_for(timeout=60_000)
        assert "layer 1 · head 2" in maps.locator("#map .gtitle").text_content()
        assert_no_exception(page)
    finally:
        page.close()
        server.terminate()
        server.wait(timeout=20)

"""One real-browser test: `streamlit run app.py` headless, driven by Playwright in Debian's Chromium.

The screenshot lands in test-artifacts/app.png. Set REQUIRE_BROWSER=1 (CI does) to fail rather than skip
when Chromium is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from ..conftest import ROOT, SHIPPED

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = ROOT / "test-artifacts"

if not os.path.exists(CHROMIUM):
    if os.environ.get("REQUIRE_BROWSER"):
        raise RuntimeError(f"REQUIRE_BROWSER is set but Chromium is not installed at {CHROMIUM}")
    pytest.skip("Chromium is not installed (apt-get install -y chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def streamlit_server(tiny_checkpoint):
    port = free_port()
    env = dict(os.environ)
    if not SHIPPED.exists():  # before the trained checkpoint ships, run the app on the tiny one
        env["ATTENTION_EXPLORER_CHECKPOINTS"] = str(tiny_checkpoint.parent)
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        raise RuntimeError("streamlit did not start:\n" + server.stdout.read().decode(errors="replace")[-3000:])
    yield url
    server.terminate()
    server.wait(timeout=20)


def wait_until_idle(page) -> None:
    """Wait for Streamlit's "Running..." indicator to appear and go away."""
    page.wait_for_timeout(500)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=120_000,
    )
    page.wait_for_timeout(500)


def test_type_a_sentence_and_see_translation_and_three_heatmaps(streamlit_server):
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(streamlit_server, wait_until="domcontentloaded")
        box = page.get_by_label("English sentence", exact=True).and_(page.locator("input"))
        box.wait_for(timeout=120_000)
        wait_until_idle(page)

        box.fill("The dog is running in the park.")
        box.press("Enter")
        wait_until_idle(page)
        page.wait_for_function("() => new URLSearchParams(location.search).get('s') === 'The dog is running in the park.'",
                               timeout=60_000)

        translation = page.locator("[data-testid='stMarkdownContainer'] h3").first
        translation.wait_for(timeout=60_000)
        assert translation.inner_text().strip()

        for tab in ("Encoder self-attention", "Masked decoder self-attention", "Cross-attention"):
            page.get_by_role("tab", name=tab).click()
            panel = page.locator("[role='tabpanel']:visible")
            heatmap = panel.locator(".js-plotly-plot").first
            heatmap.wait_for(state="visible", timeout=60_000)
            assert heatmap.locator(".heatmaplayer, .hm").count() > 0 or heatmap.locator("image").count() > 0
            # The query axis is named, as the app promises.
            assert "(query)" in heatmap.inner_text()
        page.get_by_role("tab", name="Cross-attention").click()
        # Streamlit scrolls inside its own container, so bring the cross-attention map into the shot.
        page.locator("[role='tabpanel']:visible .js-plotly-plot").first.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        page.screenshot(path=str(ARTIFACTS / "app.png"))
        browser.close()
    assert (ARTIFACTS / "app.png").stat().st_size > 10_000

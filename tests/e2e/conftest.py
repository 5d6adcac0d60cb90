"""Real-browser fixtures: `streamlit run app.py` headless, driven by Playwright in Debian's Chromium.

Set REQUIRE_BROWSER=1 (CI does) to fail rather than skip when Chromium is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from contextlib import contextmanager

import pytest

from serve import start_streamlit, wait_healthy
from ui.views import view_groups
from words import LANGUAGES, t

from ..conftest import ROOT, SHIPPED

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
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


@contextmanager
def run_streamlit(env_overrides: dict[str, str] | None = None, script: str = "app.py"):
    port = free_port()
    env = dict(os.environ, **(env_overrides or {}))
    server = start_streamlit(port, env, script=script, stdout=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, timeout=90)
    except RuntimeError:
        server.kill()
        raise RuntimeError("streamlit did not start:\n" + server.stdout.read().decode(errors="replace")[-3000:])
    try:
        yield url, server
    finally:
        server.terminate()
        server.wait(timeout=20)


def server_output(server: subprocess.Popen) -> str:
    """What a run_streamlit server has written so far (its log), read without waiting for more."""
    os.set_blocking(server.stdout.fileno(), False)
    return (server.stdout.read() or b"").decode(errors="replace")


@pytest.fixture(scope="module")
def streamlit_server(tiny_checkpoint):
    """The app on the shipped checkpoints (the tiny one without them), its attention views on the server's maps,
    whose figures these tests measure (the page switches them in the browser by default: tests/e2e/test_instant.py
    and the tests that ask for default_server)."""
    overrides = {} if SHIPPED.exists() else {"ATTENTION_EXPLORER_CHECKPOINTS": str(tiny_checkpoint.parent)}
    with run_streamlit({**overrides, "ATTENTION_EXPLORER_SWITCH_IN_BROWSER": "0"}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def default_server(tiny_checkpoint):
    """The app as `streamlit run app.py` starts it: the attention maps switched in the browser."""
    overrides = {} if SHIPPED.exists() else {"ATTENTION_EXPLORER_CHECKPOINTS": str(tiny_checkpoint.parent)}
    with run_streamlit({**overrides, "ATTENTION_EXPLORER_SWITCH_IN_BROWSER": "1"}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def browser_with_scroll_bars(browser):
    """Chromium that draws its scroll bars, as a classroom PC's browser does (headless Chromium hides them, and
    the app's main column is 10 px wider there than beside a bar)."""
    shown = browser.browser_type.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, ignore_default_args=["--hide-scrollbars"]
    )
    yield shown
    shown.close()


@pytest.fixture(scope="module")
def browser_without_cjk(browser, tmp_path_factory):
    """Chromium on a machine without a Chinese font: fontconfig told of the Latin fonts only (a second Chromium of
    the module's Playwright: a second Playwright cannot start inside the first)."""
    conf = tmp_path_factory.mktemp("fonts") / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        "<dir>/usr/share/fonts/truetype/dejavu</dir><dir>/usr/share/fonts/truetype/liberation</dir>"
        f"<cachedir>{conf.parent}/cache</cachedir></fontconfig>"
    )
    bare = browser.browser_type.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, env={**os.environ, "FONTCONFIG_FILE": str(conf)}
    )
    yield bare
    bare.close()


def wait_until_idle(page, timeout: int = 120_000) -> None:
    """Wait until the script has finished its run (Streamlit marks the app root with the script state)."""
    page.wait_for_timeout(400)
    page.wait_for_function(
        "() => { const app = document.querySelector('[data-testid=\"stApp\"]');"
        " return app && app.getAttribute('data-test-script-state') === 'notRunning'; }",
        timeout=timeout,
    )


def wait_for_quiet_machine(timeout: float = 60.0, busy_cores: float = 0.5) -> None:
    """Wait (at most `timeout` s) until the machine's processes use less than `busy_cores` cores over half a second:
    a server that computes a sentence's other views ahead, or a previous test's, shares this machine's two cores
    with Chromium, and a browser timing would measure that work rather than the page's."""
    import time

    def ticks() -> tuple[int, int]:
        fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
        return sum(fields) - fields[3] - fields[4], sum(fields)  # busy (all but idle and iowait), total

    cores = os.cpu_count() or 1
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy0, total0 = ticks()
        time.sleep(0.5)
        busy1, total1 = ticks()
        if total1 > total0 and (busy1 - busy0) / (total1 - total0) * cores < busy_cores:
            return


def download(browser, url: str, query: str, button_name: str, path, viewport=(1400, 1000)):
    """Open the app at `?query`, wait for its run to end, press the download button `button_name` and save what
    it sends to path. -> the page (still open: the caller may read what it shows) and the file name the browser
    was given"""
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
    button = page.get_by_role("button", name=button_name)
    button.wait_for(timeout=120_000)
    wait_until_idle(page)
    with page.expect_download(timeout=60_000) as sent:
        button.click()
    sent.value.save_as(path)
    return page, sent.value.suggested_filename


def assert_no_exception(page) -> None:
    errors = page.locator("[data-testid='stException']")
    if errors.count():
        raise AssertionError("the page shows an exception:\n" + errors.first.inner_text()[:2000])


def visible_heatmap_ticks(page) -> list[str]:
    """Tick labels (both axes) of the first Plotly chart in the visible tab."""
    return page.evaluate(
        """() => {
            const panel = [...document.querySelectorAll('[role="tabpanel"]')].find(p => p.offsetParent !== null);
            const plot = panel && panel.querySelector('.js-plotly-plot');
            if (!plot) return [];
            return [...plot.querySelectorAll('.xtick text, .ytick text')].map(t => t.textContent);
        }"""
    )


SIDEBAR = "[data-testid='stSidebar']"


def open_app(browser, url: str, width: int = 1400, height: int = 1000):
    """A new page on the app, once its first run has finished. -> (page, the sentence box)"""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url, wait_until="domcontentloaded")
    box = page.get_by_label("English sentence", exact=True).and_(page.locator("input"))
    box.wait_for(timeout=120_000)
    wait_until_idle(page)
    return page, box


def choose(page, label: str, option: str, typed: str | None = None, wait: bool = True) -> None:
    """Pick an option of a sidebar selectbox, as a user does: open it, type to narrow the list (a long sidebar
    can leave the open list partly off screen), click the option. typed: what to type (default: the option);
    wait=False returns as soon as the option is clicked (for timing what follows)."""
    box = page.locator(SIDEBAR).get_by_role("combobox", name=label, exact=True)
    box.click()
    box.fill(option if typed is None else typed)
    page.get_by_role("option", name=option, exact=True).click()
    if wait:
        wait_until_idle(page)


def open_view(page, name: str) -> None:
    """Open an explorer view by its tab label (either language), as a user does: its group's tab first, when
    the view's own tab is not showing."""
    for group, views in view_groups().items():
        for lang in LANGUAGES:
            if name in [t(v, lang) for v in views]:
                view_tab = page.get_by_role("tab", name=name, exact=True)
                if not view_tab.is_visible():
                    page.get_by_role("tab", name=t(group, lang), exact=True).click()
                    view_tab.wait_for(state="visible", timeout=60_000)
                view_tab.click()
                return
    page.get_by_role("tab", name=name, exact=True).click()  # a lesson's tab

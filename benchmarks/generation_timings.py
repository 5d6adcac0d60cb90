"""First-use times of the generation lab's controls on a 20-word sentence, in Chromium against one server:
what-if (write an alternative, undo), opening the logit lens and the query-key space.

    python benchmarks/generation_timings.py

Each time runs from the click until the page is idle again, minus Streamlit's fixed settling wait (0.4 s in
tests/e2e/conftest.wait_until_idle, and 0.05 s here).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, open_view, run_streamlit, wait_until_idle  # noqa: E402

SENTENCE = "The old man who lives next to the station walked his small dog in the park every morning before work."
SETTLING = 0.45  # seconds of fixed waiting inside idle_after


def idle_after(page, action) -> float:
    started = time.perf_counter()
    action()
    page.wait_for_timeout(50)
    wait_until_idle(page)
    return time.perf_counter() - started - SETTLING


def main() -> None:
    with run_streamlit() as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/?s={SENTENCE.replace(' ', '+')}&view=tab_decoding", wait_until="domcontentloaded")
        page.get_by_role("tab", name="Decoding steps").wait_for(timeout=120_000)
        wait_until_idle(page)
        panel = page.locator("[role='tabpanel']:visible")
        times = {
            "what-if: write the alternative": idle_after(
                page, lambda: panel.get_by_role("button", name="Write", exact=False).first.click()),
            "what-if: undo": idle_after(page, lambda: page.get_by_role("button", name="Undo", exact=False).first.click()),
            "open logit lens": idle_after(page, lambda: open_view(page, "Logit lens")),
            "open query-key space": idle_after(page, lambda: open_view(page, "Query–key space")),
        }
        for name, seconds in times.items():
            print(f"{name}\t{seconds:.2f} s")
        browser.close()


if __name__ == "__main__":
    main()

"""First-use times of the generation lab's controls on a 20-word sentence, in Chromium against one server:
what-if (write an alternative, undo), opening the logit lens and the query-key space (the latter from its group's
first view, once that is drawn: a press right after the group's would wait for the browser to draw that view).

    python benchmarks/generation_timings.py

Each time runs in the browser's own clock, from the user's pointer press (a capturing listener) until the last
script run it caused has finished (a MutationObserver on Streamlit's script-state attribute), so Playwright's
own waits (finding the button, scrolling to it) are not counted: an earlier version timed from before
Playwright's click, which added 1.2 s of locator waits to the what-if.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, open_view, run_streamlit, wait_until_idle  # noqa: E402

# 20-word sentences, one fresh page each, so every control is timed on its first use on a sentence.
SENTENCES = [
    "The old man who lives next to the station walked his small dog in the park every morning before work.",
    "My younger sister wants to learn how to swim this summer because all of her good friends can already swim.",
    "We waited for the last bus in the cold rain for almost an hour, but it never came that night.",
    "The teacher asked every student to bring one old photo of their family to school on Monday of next week.",
    "After dinner my father likes to read the newspaper in the garden while my mother plays the old piano inside.",
]
# The time of the last pointer or key press, and of the end of the last script run that started after it.
INIT = r"""
window.__input = null; window.__ran = false; window.__done = null;
for (const type of ['pointerdown', 'keydown']) {
    document.addEventListener(type, () => {
        window.__input = performance.now(); window.__ran = false; window.__done = null;
    }, true);
}
new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || window.__input === null) return;
    if (app.getAttribute('data-test-script-state') === 'running') { window.__ran = true; window.__done = null; }
    else if (window.__ran && window.__done === null) window.__done = performance.now();
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
"""


def idle_after(page, action) -> float:
    """Seconds from the pointer press to the end of the last run it caused (a follow-up run counts too)."""
    action()
    page.wait_for_function("() => window.__done !== null", timeout=300_000)
    page.wait_for_timeout(600)  # a second run started by the first (a rerun) would reset __done
    page.wait_for_function("() => window.__done !== null", timeout=300_000)
    wait_until_idle(page)
    started, done = page.evaluate("() => [window.__input, window.__done]")
    return (done - started) / 1000


def time_controls(page, url: str, sentence: str) -> dict[str, float]:
    """One fresh page on a new 20-word sentence: each control used for the first time on it."""
    page.goto(f"{url}/?s={sentence.replace(' ', '+')}&view=tab_decoding", wait_until="domcontentloaded")
    page.get_by_role("tab", name="Decoding steps").wait_for(timeout=120_000)
    wait_until_idle(page)
    page.wait_for_timeout(1000)
    panel = page.locator("[role='tabpanel']:visible")
    times = {
        "what-if: write the alternative": idle_after(
            page, lambda: panel.get_by_role("button", name="Write", exact=False).first.click()
        ),
        "what-if: undo": idle_after(page, lambda: page.get_by_role("button", name="Undo", exact=False).first.click()),
        "open logit lens": idle_after(page, lambda: open_view(page, "Logit lens")),
        # The query-key space is in another group: a click on the group's tab draws its first view (head
        # statistics: a dozen maps), timed on its own; then, once that page is drawn, the view's own tab.
        "open the group 'What heads do' (head statistics)": idle_after(
            page, lambda: page.get_by_role("tab", name="What heads do", exact=True).click()
        ),
    }
    page.wait_for_timeout(2000)  # the browser draws the head statistics' maps after the run has ended
    times["open query-key space (from head statistics)"] = idle_after(page, lambda: open_view(page, "Query–key space"))
    return times


def main() -> None:
    with run_streamlit() as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.add_init_script(INIT)
        runs = [time_controls(page, url, sentence) for sentence in SENTENCES]
        print("control\t" + "\t".join(f"sentence {i + 1}" for i in range(len(runs))) + "\tmedian")
        for name in runs[0]:
            values = [run[name] for run in runs]
            print(f"{name}\t" + "\t".join(f"{v:.2f}" for v in values) + f"\t{statistics.median(values):.2f} s")
        browser.close()


if __name__ == "__main__":
    main()

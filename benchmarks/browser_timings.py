"""What a teacher waits for, in a real browser: `streamlit run app.py` driven by Playwright + Chromium.

    python benchmarks/browser_timings.py --repeats 7 --json benchmarks/results/browser.json

Measured in the browser's own clock, from the user's input event (key or pointer press) until the visible
heatmap shows the result ("drawn": its tick labels or title changed) and until the script run has also
finished ("settled": the rest of the view, below the map, is there too):
- first page: from starting the server process to the first heatmap drawn;
- new sentence: typing a not-yet-seen sentence (<= 20 words) and pressing Enter, greedy;
- layer change / head change: picking another value in the sidebar's selector;
- tab change: clicking another attention tab;
- beam 4: a not-yet-seen 20-word sentence with beam search (beam 4) selected.
Medians (and the slowest) of --repeats; the shipped en-zh checkpoint. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, run_streamlit, wait_until_idle  # noqa: E402

SENTENCES = [
    "My sister is learning to play the piano this year.",
    "We had rice and fish for dinner last night.",
    "Could you tell me where the nearest train station is?",
    "The weather was so cold that the lake froze.",
    "He forgot his umbrella at the office again today.",
    "Our teacher explained the lesson very clearly this morning.",
    "I would like a cup of green tea, please.",
    "They are going to visit their grandparents next weekend.",
    "The children played football in the park after school.",
    "She wrote a long letter to her best friend.",
    "Please close the window because it is getting cold.",
    "My father reads the newspaper every morning before work.",
]
LONG_SENTENCES = [  # 20 words each
    "When I was a child my grandmother told me stories about her village every evening before I went to sleep.",
    "The students who finished their homework early were allowed to go outside and play in the garden until dinner.",
    "If it rains tomorrow morning we will stay at home and watch a movie instead of going to the beach.",
    "My brother bought a new computer last week because his old one was too slow for his work at school.",
    "Although the museum was very crowded on Sunday we saw many beautiful paintings and learned a lot about history.",
    "The doctor told him to drink more water, sleep eight hours every night and walk for thirty minutes daily.",
    "Before the meeting started the manager asked everyone to turn off their phones and listen to the new plan.",
    "Our neighbours are moving to another city next month, so they are selling most of their furniture this week.",
]

# Browser-side clock: the time of the user's last pointer or key press, taken by a capturing listener (so
# Playwright's own latency is not counted).
INIT = """
window.__input = null;
for (const type of ['pointerdown', 'keydown']) {
    document.addEventListener(type, () => { window.__input = performance.now(); }, true);
}
"""

# The first visible heatmap's tick labels and title, and whether the script is still running.
STATE = r"""
function heatmapState() {
    const app = document.querySelector('[data-testid="stApp"]');
    const panel = [...document.querySelectorAll('[role="tabpanel"]')].find(p => p.offsetParent !== null);
    const plot = panel && panel.querySelector('.js-plotly-plot');
    const ticks = plot ? [...plot.querySelectorAll('.xtick text, .ytick text')].map(t => t.textContent).join('|') : '';
    const title = plot ? (plot.querySelector('.gtitle') || {textContent: ''}).textContent : '';
    return {running: app.getAttribute('data-test-script-state') !== 'notRunning', ticks, title};
}
"""

# Polled every animation frame: records when the heatmap first shows the change (drawn), and when the script
# run has also finished (settled); true once settled.
WATCH = (
    r"""(want) => {
"""
    + STATE
    + r"""
    const s = heatmapState();
    const changed = s.ticks && (want.ticks_not === undefined || s.ticks !== want.ticks_not)
        && (want.title_has === undefined || s.title.includes(want.title_has))
        && (want.title_starts === undefined || s.title.startsWith(want.title_starts));
    if (changed && window.__drawn === null) window.__drawn = performance.now();
    if (changed && !s.running) { window.__settled = performance.now(); return true; }
    return false;
}
"""
)


def ticks(page) -> str:
    return page.evaluate("() => { " + STATE + " return heatmapState().ticks; }")


def measure(page, action, want: dict) -> tuple[float, float]:
    """(drawn, settled) seconds from the user's input event to the heatmap showing the change / the run done."""
    page.evaluate("() => { window.__input = null; window.__drawn = null; window.__settled = null; }")
    action()
    page.wait_for_function(WATCH, arg=want, polling="raf", timeout=300_000)
    t = page.evaluate("() => [window.__input, window.__drawn, window.__settled]")
    settle(page)
    return (t[1] - t[0]) / 1000, (t[2] - t[0]) / 1000


def settle(page) -> None:
    wait_until_idle(page)
    page.wait_for_timeout(300)


def sentence_box(page):
    return page.get_by_label("English sentence", exact=True).and_(page.locator("input"))


def type_sentence(page, sentence: str) -> tuple[float, float]:
    before = ticks(page)
    box = sentence_box(page)
    box.fill(sentence)
    return measure(page, lambda: box.press("Enter"), {"ticks_not": before})


def choose(page, label: str, option: str, expect_in_title: str) -> tuple[float, float]:
    """Types the option into the selectbox (as a keyboard user does) and times from the Enter key."""
    box = page.locator("[data-testid='stSelectbox']").filter(has_text=label).first.locator("input")
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option, exact=True).wait_for()
    return measure(page, lambda: box.press("Enter"), {"title_has": expect_in_title})


def click_tab(page, name: str) -> tuple[float, float]:
    return measure(page, lambda: page.get_by_role("tab", name=name, exact=True).click(), {"title_starts": name})


def open_first_page(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(WATCH, arg={}, polling=100, timeout=300_000)
    settle(page)


def open_link(browser, url: str) -> float:
    """Seconds from asking for the page, in a new browser context, to its first heatmap drawn."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function("() => document.querySelector('.js-plotly-plot .heatmaplayer')", polling=50)
    elapsed = time.perf_counter() - start
    context.close()
    return elapsed


def summary(values: list) -> dict:
    """Medians of (drawn, settled) pairs, or of plain times."""
    if isinstance(values[0], tuple):
        drawn, settled = zip(*values)
        return {
            "drawn_median_s": round(statistics.median(drawn), 3),
            "drawn_max_s": round(max(drawn), 3),
            "settled_median_s": round(statistics.median(settled), 3),
            "n": len(values),
        }
    return {"median_s": round(statistics.median(values), 3), "max_s": round(max(values), 3), "n": len(values)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    n = args.repeats
    timings: dict[str, list] = {
        k: []
        for k in (
            "first_page",
            "new_sentence",
            "layer_change",
            "head_change",
            "tab_change",
            "beam4_20_words",
            "link_open",
            "streamlit_floor",
        )
    }
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(min(n, 3)):  # a fresh server each time: imports, model loading, first translation
            start = time.perf_counter()
            with run_streamlit() as (url, _):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                open_first_page(page, url)
                timings["first_page"].append(time.perf_counter() - start)
                page.close()

        with run_streamlit() as (url, _):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(INIT)
            open_first_page(page, url)
            for sentence in SENTENCES[:n]:
                timings["new_sentence"].append(type_sentence(page, sentence))
            for i in range(n):
                layer = 2 + i % 5
                timings["layer_change"].append(choose(page, "Layer", str(layer), f"layer {layer} ·"))
            for i in range(n):
                head = 2 + i % 7
                timings["head_change"].append(choose(page, "Head", f"head {head}", f"head {head}"))
            tabs = ["Cross-attention", "Masked decoder self-attention", "Encoder self-attention"]
            for i in range(n):
                timings["tab_change"].append(click_tab(page, tabs[i % 3]))
            page.get_by_text("Beam search", exact=True).click()
            settle(page)
            for sentence in LONG_SENTENCES[:n]:
                timings["beam4_20_words"].append(type_sentence(page, sentence))
            page.close()
            # A shared link opened by someone who has not opened the app before (a new browser context: nothing
            # cached), on a server that is already running: from the request to the drawn map.
            for sentence in SENTENCES[:n]:
                timings["link_open"].append(open_link(browser, f"{url}/?s={quote(sentence)}&view=tab_cross"))
        with run_streamlit(script="benchmarks/minimal_plotly_page.py") as (url, _):
            for _ in range(n):
                timings["streamlit_floor"].append(open_link(browser, url))
        browser.close()

    result = {name: summary(values) for name, values in timings.items() if values}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

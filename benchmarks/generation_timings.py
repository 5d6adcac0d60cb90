"""First-use times of the generation lab's controls on a 20-word sentence, in Chromium against one server:
what-if (write an alternative, undo), opening the logit lens and the query-key space.

    python benchmarks/generation_timings.py

Each time runs from the click until the page is idle again, minus Streamlit's fixed 0.4 s settling wait.
"""
import sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from playwright.sync_api import sync_playwright
from tests.e2e.conftest import run_streamlit, open_view, wait_until_idle
S = "The old man who lives next to the station walked his small dog in the park every morning before work."
def idle_after(page, action):
    t = time.perf_counter(); action(); page.wait_for_timeout(50); wait_until_idle(page); return time.perf_counter() - t - 0.45
with run_streamlit() as (url, _), sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
    page = b.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{url}/?s={S.replace(' ', '+')}&view=tab_decoding", wait_until="domcontentloaded")
    page.get_by_role("tab", name="Decoding steps").wait_for(timeout=120000); wait_until_idle(page)
    res = {}
    go = page.locator("[role='tabpanel']:visible").get_by_role("button", name="Write", exact=False).first
    res["what-if: write the alternative"] = idle_after(page, lambda: go.click())
    undo = page.get_by_role("button", name="Undo", exact=False).first
    res["what-if: undo"] = idle_after(page, lambda: undo.click())
    res["open logit lens"] = idle_after(page, lambda: open_view(page, "Logit lens"))
    res["open query-key space"] = idle_after(page, lambda: open_view(page, "Query–key space"))
    for k, v in res.items(): print(f"{k}\t{v:.2f} s")
    b.close()

"""What a teacher waits for over a whole lesson on one page: every view and every lesson, sentence after sentence,
in Chromium at 1024×768, both interface languages, every shipped checkpoint, presentation mode off and on, as
the app starts by default (heads switched in the page; issue 36: "no wait over 2 s"; issue 59's walk).

    python benchmarks/walk_timings.py --json benchmarks/results/walk.json
    python benchmarks/walk_timings.py --checkpoints en-zh --langs zh --present 1     # one page

One page per (checkpoint, interface language, presentation mode), never reloaded: type a sentence, then click
every group tab and every view tab of the explorer, then every lesson tab, then the next sentence. A wait is
timed in the browser's own clock from the click (or the Enter key) until Streamlit's script run that it caused
has finished (the app root's `data-test-script-state` back at "notRunning" after it had left it); a click that
starts no run is 0. After each sentence it reads whether the page shows the unsure note, and after every click
whether an error or exception is on the page. Prints every wait over --limit seconds, every error, every unsure
note and the slowest of each view; --json writes every row.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect  # noqa: E402

from benchmarks.browser_timings import INIT as INPUT_TIME  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, run_streamlit, wait_until_idle  # noqa: E402

SENTENCES = {  # what a teacher types: a seed sentence, one about the lesson, a longer everyday one (16 words)
    "en-zh": [
        "The animal didn't cross the street because it was too tired.",
        "Each head learns a different pattern.",
        "My sister and I walked to the old market near the river to buy fresh fish yesterday.",
    ],
    "en-de": [
        "Two young men are playing football in the park.",
        "Tom chases Jerry.",
        "My sister and I walked to the old market near the river to buy fresh fish yesterday.",
    ],
    "zh-en": [  # the seeds' sentence, one about the lesson, a longer everyday one
        "汤姆追逐杰瑞。",
        "每个注意力头学习不同的模式。",
        "昨天我和妹妹走到河边的老市场去买新鲜的鱼。",
    ],
}
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'

# The browser-clock time of the user's last press is window.__input (browser_timings.INIT); this records every
# change of the script state beside it.
SCRIPT_STATES = """
window.__states = [];
new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app) window.__states.push([performance.now(), app.getAttribute('data-test-script-state')]);
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
"""

# {s: seconds from the last press until the run it started ended} (s 0 when none started within 1.5 s of the
# press); null while it runs (wait_for_function waits for a truthy value).
WAITED = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const after = window.__states.filter(([t]) => t >= window.__input);
    const started = after.some(([, s]) => s === 'running');
    const now = performance.now();
    if (!started) return now - window.__input > 1500 ? {s: 0} : null;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return null;
    const end = after.filter(([, s]) => s === 'notRunning').pop();
    return end ? {s: (end[0] - window.__input) / 1000} : null;
}"""


def waited(page) -> float:
    handle = page.wait_for_function(WAITED, timeout=300_000, polling=50)
    return float(handle.json_value()["s"])


def click_tab(page, name: str) -> float:
    page.get_by_role("tab", name=name, exact=True).first.click()
    return waited(page)


def errors_on(page) -> list[str]:
    """The text of every error notice and exception the page shows."""
    return [e.inner_text()[:200] for e in page.locator(ERRORS).all()]


def unsure_note(page, lang: str) -> str | None:
    """The unsure note's verdict ("Probably wrong", "Possibly wrong") if the page shows one."""
    from words import t

    for key in ("unsure_probably", "unsure_possibly"):
        if page.get_by_text(t(key, lang), exact=False).count():
            return t(key, lang)
    return None


def choose_page(page, name: str) -> None:
    """Explorer or lessons, as a teacher switches: in presentation mode the switch is in the sidebar, folded away
    at 1024 px, so open the sidebar, choose, and fold it again (opening and folding start no script run)."""
    radio = page.get_by_role("radio", name=name, exact=True)
    box = page.get_by_test_id("stSidebar").bounding_box()
    folded = box is None or box["x"] + box["width"] <= 0
    if folded:
        page.get_by_test_id("stExpandSidebarButton").click()
        radio.wait_for(state="visible")
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stSidebar]').getBoundingClientRect().left >= 0"
        )
    if not radio.is_checked():
        # its label, as a hand clicks it (a forced check on the input itself can land while the sidebar still
        # moves and leave the choice as it was)
        page.locator("label", has=radio).click()
        expect(radio).to_be_checked()
    if folded:
        page.get_by_test_id("stSidebarCollapseButton").click(force=True)


def walk(url: str, checkpoint: str, lang: str, present: str, browser, limit: float) -> list[dict]:
    from ui.views import lessons, view_groups
    from words import t

    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.add_init_script(INPUT_TIME)
    page.add_init_script(SCRIPT_STATES)
    page.goto(f"{url}/?ckpt={checkpoint}&lang={lang}&present={present}", wait_until="domcontentloaded")
    page.get_by_role("tab", name=t("group_maps", lang), exact=True).wait_for(timeout=180_000)
    wait_until_idle(page)
    rows = []

    def record(what: str, seconds: float, sentence: int) -> None:
        errors = errors_on(page)
        rows.append(
            {
                "checkpoint": checkpoint,
                "lang": lang,
                "present": present,
                "sentence": sentence,
                "what": what,
                "s": seconds,
                "errors": errors,
            }
        )
        flag = ("  <-- over" if seconds > limit else "") + (f"  <-- ERROR {errors}" if errors else "")
        print(f"{checkpoint} {lang} present={present} #{sentence} {what}: {seconds:.2f} s{flag}", flush=True)

    for n, sentence in enumerate(SENTENCES[checkpoint], 1):
        choose_page(page, t("page_explore", lang))
        wait_until_idle(page)
        box = page.locator(".st-key-sentence input")
        box.fill(sentence)
        box.press("Enter")
        record("new sentence", waited(page), n)
        rows[-1]["unsure"] = unsure_note(page, lang)
        print(f"  {sentence!r}: unsure note {rows[-1]['unsure']}", flush=True)
        for group, views in view_groups().items():
            record(group, click_tab(page, t(group, lang)), n)
            for view in views:
                record(view, click_tab(page, t(view, lang)), n)
        choose_page(page, t("page_lessons", lang))
        record("page_lessons", waited(page), n)
        for lesson in lessons():
            record(lesson, click_tab(page, t(lesson, lang)), n)
    page.close()
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoints", nargs="+", default=[c for c in SENTENCES if (ROOT / "checkpoints" / c).exists()])
    p.add_argument("--langs", nargs="+", default=["en", "zh"])
    p.add_argument("--present", nargs="+", default=["0", "1"], choices=["0", "1"], help="presentation mode off, on")
    p.add_argument("--limit", type=float, default=2.0)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with run_streamlit() as (url, _server), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for checkpoint in args.checkpoints:
            for lang in args.langs:
                for present in args.present:
                    rows += walk(url, checkpoint, lang, present, browser, args.limit)
        browser.close()
    slowest: dict[str, dict] = {}
    for row in rows:
        if row["what"] not in slowest or row["s"] > slowest[row["what"]]["s"]:
            slowest[row["what"]] = row
    print("\nslowest of each:")
    for what, row in sorted(slowest.items(), key=lambda kv: -kv[1]["s"]):
        print(f"  {what}: {row['s']:.2f} s ({row['checkpoint']}, {row['lang']}, sentence {row['sentence']})")
    over = [r for r in rows if r["s"] > args.limit]
    print(f"{len(over)} of {len(rows)} waits over {args.limit} s")
    print(f"{sum(bool(r['errors']) for r in rows)} of {len(rows)} steps with an error on the page")
    for r in rows:
        if r.get("unsure"):
            print(f"unsure note: {r['checkpoint']} {r['lang']} present={r['present']} sentence {r['sentence']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

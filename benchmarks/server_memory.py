"""Peak memory of one app server while browser sessions open many different long sentences with beam 8.

    python benchmarks/server_memory.py --sentences 50 --beam 8 --checkpoints en-zh en-de

Starts `streamlit run app.py`, opens each sentence as a shared link (?s=...&beam=8) in a new page of headless
Chromium (alternating between the checkpoints, so both are loaded), waits for its maps, and reads the server's
peak resident memory (VmHWM) from /proc. Prints one JSON line. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, run_streamlit, wait_until_idle  # noqa: E402

WORDS = (
    "teacher student book city river mountain computer garden window kitchen friend brother sister morning "
    "evening winter summer train station market coffee letter music picture doctor village"
).split()


def long_sentence(rng: random.Random, n_words: int) -> str:
    """A different, grammatical-looking long sentence each time (clauses of everyday words)."""
    clauses = []
    while sum(len(c.split()) for c in clauses) < n_words:
        a, b, c = rng.sample(WORDS, 3)
        clauses.append(f"the {a} near the {b} said that the {c} was {rng.choice(['old', 'new', 'far', 'quiet'])}")
    return " and ".join(clauses).capitalize() + "."


def server_memory_mib(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    values = {
        line.split(":")[0]: int(line.split()[1]) / 1024
        for line in status.splitlines()
        if line.startswith(("VmHWM", "VmRSS"))
    }
    return values["VmRSS"], values["VmHWM"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sentences", type=int, default=50)
    p.add_argument("--beam", type=int, default=8)
    p.add_argument("--words", type=int, default=40, help="words per sentence")
    p.add_argument("--checkpoints", nargs="+", default=["en-zh", "en-de"])
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    rng = random.Random(0)
    sentences = [long_sentence(rng, args.words) for _ in range(args.sentences)]
    start = time.time()
    with run_streamlit() as (url, server), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(url)
        wait_until_idle(page)
        before = server_memory_mib(server.pid)
        for i, sentence in enumerate(sentences):
            checkpoint = args.checkpoints[i % len(args.checkpoints)]
            query = urllib.parse.urlencode({"s": sentence, "beam": args.beam, "ckpt": checkpoint})
            page.goto(f"{url}/?{query}")
            page.wait_for_selector(".js-plotly-plot", timeout=300_000)
            wait_until_idle(page, timeout=300_000)
        after = server_memory_mib(server.pid)
        browser.close()
    print(
        json.dumps(
            {
                "sentences": args.sentences,
                "beam": args.beam,
                "words": args.words,
                "checkpoints": args.checkpoints,
                "rss_after_first_page_mib": round(before[0]),
                "rss_end_mib": round(after[0]),
                "peak_rss_mib": round(after[1]),
                "seconds": round(time.time() - start, 1),
            }
        )
    )


if __name__ == "__main__":
    main()

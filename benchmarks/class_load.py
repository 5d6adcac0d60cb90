"""A class of simulated students against one app server, or the replicas behind the load balancer.

    python benchmarks/class_load.py --students 30 --json benchmarks/results/class_load-30.json
    python benchmarks/class_load.py --students 30 --workers 2             # python -m serve --workers 2
    python benchmarks/class_load.py --students 30 --url http://host:8501  # a server already running
    python benchmarks/class_load.py --students 30 --throughput 60 --workers 2
    python benchmarks/class_load.py --heavy 4 --heavy-words 300 --beam 8   # memory under long beam searches

Each student is one Streamlit session spoken to over Streamlit's own protocol (the protobuf BackMsg/ForwardMsg
frames of /_stcore/stream, as the browser sends them), so a class of 100 costs this script little CPU. A
student opens the page, then for each of `--sentences` sentences of their own: thinks, types it; thinks,
changes the layer; thinks, clicks another attention tab. Then two bursts, every student at the same moment:
each a different new sentence, then all the same new sentence (the teacher's sentence on the board); `--bursts N`
repeats the pair N times and reports each and their median (one burst is one sample: on two cores the same code
gave 1.4 s and 2.6 s).
`--throughput S` instead has every student type new sentences back to back for S seconds (no thinking) and
counts sentences served per minute: the server at saturation. `--heavy K` opens one link with a long pasted
text and beam search alone, then K at once, and reads the server's memory before, at the peak and after.

Per action it reports p50 / p90 / max of *served* (the request sent until the script run finished: the page
complete) and *drawn* (until the first attention map of the run arrived). Errors: an exception or error notice
on the page, a run that did not finish within --timeout, a closed connection, or a page that shows another
sentence than the student's own (cross-talk). Server CPU (% of one core, summed over the server's processes)
and resident memory are sampled from /proc every half second. When this script starts the server it also
counts the model computations the bursts caused (ATTENTION_EXPLORER_COMPUTE_LOG): a burst of one sentence should
cost one.

Linux only (reads /proc). Prints one JSON object; --json also writes it to a file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
sys.path.insert(0, str(ROOT))

from serve import start_streamlit, wait_healthy  # noqa: E402

NOUNS = (
    "teacher student doctor farmer child girl boy woman man friend neighbour cook driver singer painter "
    "brother sister mother father grandmother"
).split()
THINGS = (
    "book letter apple cake picture song car bicycle window door garden house river ticket newspaper "
    "coffee umbrella computer phone map"
).split()
VERBS = ("reads writes buys sells opens closes finds sees likes washes paints carries wants needs brings keeps").split()
PLACES = (
    "at home, in the morning, after school, on Sunday, every day, in the park, at night, in the kitchen, "
    "near the station, before dinner"
).split(", ")


def student_sentence(rng: random.Random) -> str:
    """A short everyday sentence (7–9 words); students rarely type the same one."""
    return f"The {rng.choice(NOUNS)} {rng.choice(VERBS)} the {rng.choice(THINGS)} {rng.choice(PLACES)}."


def quantiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"n": len(values), "p50": round(at(0.5), 3), "p90": round(at(0.9), 3), "max": round(ordered[-1], 3)}


# ---------------------------------------------------------------- one student: a Streamlit session


@dataclass
class Run:
    """What one script run sent back."""

    served: float | None = None  # seconds until script_finished
    drawn: float | None = None  # seconds until the first plotly chart
    errors: list[str] = field(default_factory=list)
    source_pieces: str = ""
    translation: str = ""


class Student:
    """One browser tab's Streamlit session: sends reruns with the widget values a browser would, reads the
    ForwardMsgs, and remembers each widget it has seen by its key (the id ends with "-key")."""

    def __init__(self, url: str, timeout: float, forgets_redrawn_tabs: bool = True):
        """forgets_redrawn_tabs: as a browser does, stop sending a tabs widget's value once the tabs are drawn
        anew; False sends every value ever set, as a load tester that tracks only what it changed does."""
        self.url = url.rstrip("/")
        self.forgets_redrawn_tabs = forgets_redrawn_tabs
        self.timeout = timeout
        self.widgets: dict[str, tuple[str, object]] = {}  # key -> (widget id, the element proto)
        self.values: dict[str, object] = {}  # widget id -> value we set (sent on every rerun, as the browser does)
        self.tab_labels: dict[str, list[str]] = {}  # a tab group's key -> its tabs' labels
        self.query_string = ""
        self.ws = None

    async def connect(self) -> None:
        cookie = await asyncio.to_thread(self._affinity_cookie)
        headers = {"Cookie": cookie} if cookie else {}
        ws_url = self.url.replace("http", "ws", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(
            ws_url, subprotocols=["streamlit"], max_size=None, additional_headers=headers, open_timeout=self.timeout
        )

    def _affinity_cookie(self) -> str:
        """GET the page as a browser does first: behind the balancer that response sets the replica cookie."""
        with urllib.request.urlopen(self.url + "/", timeout=self.timeout) as response:
            cookies = response.headers.get_all("Set-Cookie") or []
        return "; ".join(c.split(";")[0] for c in cookies)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    def widget_id(self, key: str) -> str:
        return self.widgets[key][0]

    async def rerun(self, press: str | None = None, **changes) -> Run:
        """Set widgets by key (text, option label, tab label, bool), press the button keyed `press` (a trigger:
        sent this once), and run the script once."""
        for key, value in changes.items():
            self.values[self.widget_id(key)] = value
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = ""
        for widget_id, value in self.values.items():
            widget = state.widget_states.widgets.add()
            widget.id = widget_id
            if isinstance(value, bool):
                widget.bool_value = value
            else:
                widget.string_value = str(value)
        if press is not None:
            button = state.widget_states.widgets.add()
            button.id = self.widget_id(press)
            button.trigger_value = True
        start = time.perf_counter()
        await self.ws.send(message.SerializeToString())
        run = Run()
        try:
            await asyncio.wait_for(self._read_run(run, start), self.timeout)
        except asyncio.TimeoutError:
            run.errors.append(f"no answer within {self.timeout:.0f} s")
        except websockets.ConnectionClosed as closed:
            run.errors.append(f"connection closed: {closed}")
        return run

    def _read_element(self, element, run: Run, start: float, expect_code: str | None) -> str | None:
        """One element the run drew: a widget remembered, an error, the first chart's time, the translation, the
        source pieces. -> what the next code block holds ("source" after its label)."""
        element_kind = element.WhichOneof("type")
        proto = getattr(element, element_kind)
        widget_id = getattr(proto, "id", "")
        if widget_id.count("-") >= 2:
            self.widgets[widget_key(widget_id)] = (widget_id, proto)
        if element_kind == "exception":
            run.errors.append(f"exception: {proto.type}: {proto.message[:200]}")
        elif element_kind == "alert" and proto.format == proto.ERROR:
            run.errors.append(f"error notice: {proto.body[:200]}")
        elif element_kind == "plotly_chart" and run.drawn is None:
            run.drawn = time.perf_counter() - start
        elif element_kind == "markdown":
            if proto.body.startswith("### ") and not run.translation:
                run.translation = proto.body[4:].strip()
            elif proto.body == "Source pieces (SentencePiece)":  # the English page's label
                return "source"
        elif element_kind == "code" and expect_code == "source":
            run.source_pieces = proto.code_text
            return None
        return expect_code

    async def _read_run(self, run: Run, start: float) -> None:
        expect_code = tabs_key = None
        while True:
            frame = await self.ws.recv()
            message = ForwardMsg()
            message.ParseFromString(frame)
            kind = message.WhichOneof("type")
            if kind == "page_info_changed":
                self.query_string = message.page_info_changed.query_string
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                expect_code = self._read_element(message.delta.new_element, run, start, expect_code)
            elif kind == "delta" and message.delta.WhichOneof("type") == "add_block":
                block = message.delta.add_block
                if block.WhichOneof("type") == "tab_container" and block.tab_container.id:
                    tabs_key = tabs_widget_key(block.tab_container.id)
                    drawn_before = self.widgets.get(tabs_key, (block.tab_container.id,))[0]
                    # tabs drawn anew (another open tab): as a browser does, forget the value the tabs drawn before held
                    if drawn_before != block.tab_container.id and self.forgets_redrawn_tabs:
                        self.values.pop(drawn_before, None)
                    self.widgets[tabs_key] = (block.tab_container.id, block)
                    self.tab_labels[tabs_key] = []
                elif block.WhichOneof("type") == "tab" and tabs_key:
                    self.tab_labels[tabs_key].append(block.tab.label)
            elif kind == "script_finished":
                run.served = time.perf_counter() - start
                if message.script_finished not in (
                    ForwardMsg.FINISHED_SUCCESSFULLY,
                    ForwardMsg.FINISHED_EARLY_FOR_RERUN,
                ):
                    run.errors.append(f"script finished with status {message.script_finished}")
                return


def widget_key(widget_id: str) -> str:
    """The key the app gave a widget: Streamlit's ids are "$$ID-<hash>-<key>" (keys may hold hyphens)."""
    return widget_id.split("-", 2)[-1]


def tabs_widget_key(widget_id: str) -> str:
    """A tabs widget's key without the count of its drawings (ui.navigation.tabs_opening keys the tabs drawn anew
    "view_tab_group_maps_0", "view_tab_group_maps_1" ...): "view_tab_group_maps"."""
    return re.sub(r"_\d+$", "", widget_key(widget_id))


def shows_sentence(run: Run, sentence: str) -> bool:
    """The page's source pieces spell the student's own sentence (no cross-talk)."""
    pieces = run.source_pieces.replace("</s>", "").replace("▁", "").replace(" ", "").replace("\n", "")
    return bool(pieces) and pieces.lower() == sentence.replace(" ", "").lower()


# ---------------------------------------------------------------- the class


@dataclass
class Results:
    served: dict[str, list[float]] = field(default_factory=dict)
    drawn: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def record(self, action: str, run: Run, sentence: str | None = None) -> None:
        if run.served is not None:
            self.served.setdefault(action, []).append(run.served)
        if run.drawn is not None:
            self.drawn.setdefault(action, []).append(run.drawn)
        self.errors += [f"{action}: {e}" for e in run.errors]
        if sentence is not None and run.served is not None and not shows_sentence(run, sentence):
            self.errors.append(f"{action}: the page shows {run.source_pieces!r}, not {sentence!r}")


async def think(rng: random.Random, seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(rng.uniform(0.5 * seconds, 1.5 * seconds))


async def open_page(student: Student, results: Results) -> None:
    await student.connect()
    results.record("open", await student.rerun())


async def lesson(student: Student, rng: random.Random, n_sentences: int, think_s: float, results: Results) -> None:
    """Type n sentences of one's own, changing the layer and the tab after each."""
    for _ in range(n_sentences):
        await think(rng, think_s)
        sentence = student_sentence(rng)
        results.record("sentence", await student.rerun(sentence=sentence), sentence)
        await think(rng, think_s)
        layer = student.widgets["layer"][1]
        results.record(
            "layer",
            await student.rerun(layer=rng.choice([o for o in layer.options if o != layer.options[layer.default]])),
        )
        await think(rng, think_s)
        labels = student.tab_labels["view_tab_group_maps"][:3]  # the encoder, decoder and cross-attention views
        # the open tab as the server last drew it (the tabs' id changes with it: ui.navigation.tabs_opening)
        current = student.tab_labels["view_tab_group_maps"][
            student.widgets["view_tab_group_maps"][1].tab_container.default_tab_index
        ]
        results.record("tab", await student.rerun(view_tab_group_maps=rng.choice([x for x in labels if x != current])))


async def burst(students: list[Student], sentences: list[str], action: str, results: Results) -> float:
    """Every student sends their sentence at the same moment; returns when the last one was served."""
    start = time.perf_counter()
    runs = await asyncio.gather(*(s.rerun(sentence=x) for s, x in zip(students, sentences)))
    for run, sentence in zip(runs, sentences):
        results.record(action, run, sentence)
    if action == "burst-identical" and len({r.translation for r in runs}) > 1:
        results.errors.append(f"{action}: students got different translations of one sentence")
    return time.perf_counter() - start


async def browser_student(url: str, rng: random.Random, n_sentences: int, think_s: float, drawn: list[float]) -> None:
    """One real Chromium tab (1024x768) in the class: it types n new sentences while the simulated students work,
    and records for each the seconds from Enter until the encoder map's axes show the new sentence, painted."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM)
        page = await browser.new_page(viewport={"width": 1024, "height": 768})
        await page.goto(url, wait_until="domcontentloaded")
        ticks = "() => [...document.querySelectorAll('.js-plotly-plot .xtick text')].map(t => t.textContent).join(' ')"
        await page.wait_for_function(f"({ticks})().length > 0", timeout=120_000)
        box = page.get_by_role("textbox", name="English sentence", exact=True)
        for _ in range(n_sentences):
            await think(rng, think_s)
            before = await page.evaluate(ticks)
            await box.fill(student_sentence(rng))
            start = time.perf_counter()
            await box.press("Enter")
            await page.wait_for_function(
                f"() => {{ const app = document.querySelector('[data-testid=\"stApp\"]');"
                f" const now = ({ticks})(); return now.length > 0 && now !== {json.dumps(before)}"
                f" && app.getAttribute('data-test-script-state') === 'notRunning'; }}",
                timeout=120_000,
            )
            await page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            drawn.append(time.perf_counter() - start)
        await browser.close()


def long_sentence(rng: random.Random, n_words: int) -> str:
    """A long pasted text: everyday clauses joined, about n_words words."""
    clauses: list[str] = []
    while sum(len(c.split()) for c in clauses) < n_words:
        clauses.append(student_sentence(rng).rstrip(".").lower())
    return " and ".join(clauses).capitalize() + "."


async def heavy(students: list[Student], rng: random.Random, words: int, beam: int, results: Results) -> float:
    """Each student opens a link with a long sentence of their own and beam search, all at once."""
    sentences = [long_sentence(rng, words) for _ in students]
    start = time.perf_counter()

    async def one(student: Student, sentence: str) -> None:
        await student.connect()
        student.query_string = urllib.parse.urlencode({"s": sentence, "beam": beam})
        results.record("heavy", await student.rerun())

    await asyncio.gather(*(one(s, x) for s, x in zip(students, sentences)))
    return time.perf_counter() - start


def drawing_counts(log: Path | None) -> tuple[int | None, int | None]:
    """(long pages drawn, the most drawn at the same moment), from the draw-start / draw-end lines of the
    server's log."""
    if log is None or not log.exists():
        return None, None
    now = most = drawn = 0
    for line in log.read_text().splitlines():
        kind = line.split("\t")[0]
        drawn += kind == "draw-start"
        now += (kind == "draw-start") - (kind == "draw-end")
        most = max(most, now)
    return drawn, most


async def run_heavy(args, url: str, pids_of, log: Path | None = None) -> dict:
    """One heavy request alone, then --heavy of them at once; resident memory before each, at its peak (the
    kernel's VmHWM, reset at the start) and after the sessions closed."""
    rng = random.Random(args.seed)
    results = Results()
    samples: list[tuple[float, float, float]] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_server(pids_of, samples, stop))
    report: dict = {"heavy_words": args.heavy_words, "beam": args.beam}

    async def phase(n: int, name: str) -> None:
        students = [Student(url, args.timeout) for _ in range(n)]
        first = len(samples)
        report[f"{name}_rss_start_mib"] = round(cpu_seconds_and_rss(pids_of())[1])
        exact = reset_peak_memory(pids_of())  # the kernel's own peak, not the half-second samples
        report[f"{name}_s"] = round(await heavy(students, rng, args.heavy_words, args.beam, results), 2)
        await asyncio.gather(*(s.close() for s in students), return_exceptions=True)
        sampled = max(x[2] for x in samples[first:])
        report[f"{name}_rss_peak_mib"] = round(max(sampled, peak_memory_mib(pids_of())) if exact else sampled)
        await asyncio.sleep(args.settle)
        report[f"{name}_rss_after_mib"] = round(samples[-1][2])

    try:
        await asyncio.sleep(1)
        warm = Student(url, args.timeout)  # load the model: the baseline is a server that has served a page
        await open_page(warm, results)
        await warm.close()
        await asyncio.sleep(5)  # the first page also starts the query-key view's sample in the background
        report["rss_before_mib"] = round(samples[-1][2])
        await phase(1, "one")
        await phase(args.heavy, "together")
    finally:
        stop.set()
        await sampler
    # growth over each phase's start: long pages drawn side by side grow the server far more than one alone
    growth = {name: report[f"{name}_rss_peak_mib"] - report[f"{name}_rss_start_mib"] for name in ("one", "together")}
    report["together_over_one"] = round(growth["together"] / max(1, growth["one"]), 2)
    report["long_pages_drawn"], report["most_drawn_at_once"] = drawing_counts(log)
    report["served_s"] = {action: quantiles(v) for action, v in results.served.items()}
    report["errors"] = len(results.errors)
    report["first_errors"] = results.errors[:10]
    return report


async def saturate(student: Student, rng: random.Random, until: float, results: Results) -> int:
    served = 0
    while time.perf_counter() < until:
        sentence = student_sentence(rng)
        run = await student.rerun(sentence=sentence)
        results.record("sentence", run, sentence)
        served += run.served is not None and time.perf_counter() <= until
    return served


# ---------------------------------------------------------------- the server and /proc


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def start_server(workers: int, env: dict[str, str]):
    """`streamlit run app.py` (workers 0) or `python -m serve --workers N`; yields (url, process)."""
    port = free_port()
    if workers:
        command = [
            sys.executable,
            "-m",
            "serve",
            "--workers",
            str(workers),
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            "--first-replica-port",
            str(free_port()),
        ]
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    else:
        process = start_streamlit(port, env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, timeout=180)
        if workers:  # every replica up, not only the first that HAProxy found
            for _ in range(60):
                if len(replica_pids(process.pid)) >= workers:
                    break
                time.sleep(1)
            time.sleep(3)
        yield url, process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo += children(current)
    return out


def replica_pids(pid: int) -> list[int]:
    pids = []
    for p in descendants(pid):
        with contextlib.suppress(OSError):
            if b"streamlit" in Path(f"/proc/{p}/cmdline").read_bytes():
                pids.append(p)
    return pids


def cpu_seconds_and_rss(pids: list[int]) -> tuple[float, float]:
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = rss = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return cpu, rss


async def sample_server(pids_of, samples: list[tuple[float, float, float]], stop: asyncio.Event) -> None:
    """(time, CPU seconds, RSS MiB) every half second, over the server's processes (the replicas)."""
    while not stop.is_set():
        cpu, rss = cpu_seconds_and_rss(pids_of())
        samples.append((time.perf_counter(), cpu, rss))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


def reset_peak_memory(pids: list[int]) -> bool:
    """Reset each process's peak resident memory (VmHWM) to its current size; False where Linux refuses."""
    try:
        for pid in pids:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_memory_mib(pids: list[int]) -> float:
    """Sum over the processes of their peak resident memory since the last reset (VmHWM)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
    return total


def cpu_summary(samples: list[tuple[float, float, float]]) -> dict:
    rates = [100 * (c2 - c1) / (t2 - t1) for (t1, c1, _), (t2, c2, _) in zip(samples, samples[1:]) if t2 > t1]
    if not rates:
        return {}
    total = 100 * (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])
    return {
        "cpu_mean_percent": round(total),
        "cpu_max_percent": round(max(rates)),
        "rss_peak_mib": round(max(s[2] for s in samples)),
        "rss_end_mib": round(samples[-1][2]),
    }


def computations(log: Path | None, since: int) -> tuple[int, dict[str, int]]:
    """Lines of the server's computation log after line `since`: (line count, {kind: count})."""
    if log is None or not log.exists():
        return since, {}
    lines = log.read_text().splitlines()
    kinds: dict[str, int] = {}
    for line in lines[since:]:
        kinds[line.split("\t")[0]] = kinds.get(line.split("\t")[0], 0) + 1
    return len(lines), kinds


# ---------------------------------------------------------------- main


async def run_class(args, url: str, pids_of, log: Path | None) -> dict:
    rng = random.Random(args.seed)
    results = Results()
    students = [Student(url, args.timeout) for _ in range(args.students)]
    samples: list[tuple[float, float, float]] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_server(pids_of, samples, stop))
    report: dict = {"students": args.students, "think_s": args.think, "sentences_each": args.sentences}
    try:
        # the class arrives over a few seconds, as a class does
        async def arrive(student: Student) -> None:
            await asyncio.sleep(rng.uniform(0, args.arrival))
            await open_page(student, results)

        await asyncio.gather(*(arrive(s) for s in students))
        if args.throughput:
            until = time.perf_counter() + args.throughput
            served = await asyncio.gather(
                *(saturate(s, random.Random(args.seed + i), until, results) for i, s in enumerate(students))
            )
            report["throughput_sentences_per_minute"] = round(sum(served) * 60 / args.throughput, 1)
        else:
            in_browser: list[float] = []
            await asyncio.gather(
                *(
                    lesson(s, random.Random(args.seed + i), args.sentences, args.think, results)
                    for i, s in enumerate(students)
                ),
                *(
                    [browser_student(url, random.Random(-1), args.browser, args.think, in_browser)]
                    if args.browser
                    else []
                ),
            )
            if args.browser:
                report["browser_new_sentence_s"] = [round(x, 3) for x in in_browser]
            each: dict[str, list] = {"burst_different": [], "burst_identical": []}
            computed: dict[str, list] = {"burst_different": [], "burst_identical": []}
            line, _ = computations(log, 0)
            for repeat in range(args.bursts):
                if repeat:
                    await asyncio.sleep(args.think)  # the class reads the page before the next burst
                tag = f"{rng.randrange(10**6):06d}"  # new sentences, not cached by an earlier run of this script
                different = [f"Student {i} of class {tag} reads a book." for i in range(len(students))]
                identical = [f"The whole class {tag} reads the sentence on the board."] * len(students)
                for name, sentences in (("burst_different", different), ("burst_identical", identical)):
                    each[name].append(round(await burst(students, sentences, name.replace("_", "-"), results), 3))
                    line, kinds = computations(log, line)
                    computed[name].append(kinds.get("hypotheses") if log else None)
            for name in each:
                report[f"{name}_last_s"] = each[name][0]  # the first burst (one burst: as before --bursts)
                report[f"{name}_computed"] = computed[name][0]
                if args.bursts > 1:
                    report[f"{name}_each_s"] = each[name]
                    report[f"{name}_median_s"] = round(float(sorted(each[name])[len(each[name]) // 2]), 3)
                    report[f"{name}_computed_each"] = computed[name]
    finally:
        stop.set()
        await sampler
        await asyncio.gather(*(s.close() for s in students), return_exceptions=True)
    report["served_s"] = {action: quantiles(v) for action, v in results.served.items()}
    report["drawn_s"] = {action: quantiles(v) for action, v in results.drawn.items()}
    report["errors"] = len(results.errors)
    report["first_errors"] = results.errors[:10]
    report |= cpu_summary(samples)
    return report


def measure(argv=None) -> dict:
    """Parse the command line, run the class (starting the server unless --url), return the report."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--sentences", type=int, default=3, help="own sentences per student")
    p.add_argument("--think", type=float, default=5.0, help="mean seconds between a student's actions")
    p.add_argument("--arrival", type=float, default=10.0, help="students open the page over this many seconds")
    p.add_argument(
        "--throughput",
        type=float,
        default=0,
        help="instead of the lesson: sentences back to back for this many seconds",
    )
    p.add_argument(
        "--heavy",
        type=int,
        default=0,
        help="instead of the lesson: one long beam-search request alone, then this many at once",
    )
    p.add_argument("--heavy-words", type=int, default=300)
    p.add_argument("--beam", type=int, default=8)
    p.add_argument("--settle", type=float, default=10, help="seconds after heavy requests before memory is read")
    p.add_argument("--workers", type=int, default=0, help="start python -m serve --workers N (0: streamlit run)")
    p.add_argument(
        "--browser",
        type=int,
        default=0,
        help="also type this many new sentences in one Chromium tab while the class works (needs playwright)",
    )
    p.add_argument("--url", help="a server already running (then CPU and memory are not measured)")
    p.add_argument("--checkpoints", help="ATTENTION_EXPLORER_CHECKPOINTS for the server this script starts")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--bursts", type=int, default=1, help="repeat the two bursts (--think s apart), report each")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)

    run = (
        (lambda url, pids_of, log: run_heavy(args, url, pids_of, log))
        if args.heavy
        else (lambda url, pids_of, log: run_class(args, url, pids_of, log))
    )
    if args.url:
        report = asyncio.run(run(args.url, lambda: [], None))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "computations.log"
            # The server draws every map itself, as with another method or word level: a layer change is then a
            # script run, the load measured here (by default the page switches raw maps itself, with no run).
            env = dict(os.environ, ATTENTION_EXPLORER_COMPUTE_LOG=str(log), ATTENTION_EXPLORER_SWITCH_IN_BROWSER="0")
            if args.checkpoints:
                env["ATTENTION_EXPLORER_CHECKPOINTS"] = args.checkpoints
            with start_server(args.workers, env) as (url, process):
                report = asyncio.run(run(url, lambda: replica_pids(process.pid), log))
        report["workers"] = args.workers
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


def main(argv=None) -> int:
    report = measure(argv)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m serve`: replicas behind HAProxy, in a real browser. Each browser sticks to one replica (cookie),
pages render through the balancer's websockets, text is served gzipped, and a killed replica is restarted."""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from serve import healthy, wait_healthy

from ..conftest import ROOT
from .conftest import assert_no_exception, free_port, wait_until_idle

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
if not os.path.exists(HAPROXY):
    if os.environ.get("REQUIRE_BROWSER"):
        raise RuntimeError("REQUIRE_BROWSER is set but HAProxy is not installed")
    pytest.skip("HAProxy is not installed (apt-get install -y haproxy)", allow_module_level=True)


def get(url: str, gzip: bool = False):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip else {})
    return urllib.request.urlopen(request, timeout=10)


def wait_in_rotation(url: str, servers: int = 2, timeout: float = 60) -> None:
    """Until the balancer sends a request carrying each replica's cookie (r0, r1 …) to that replica, so none is out
    of HAProxy's rotation. A replica answering its own port is not yet back in the rotation: HAProxy puts it back
    at its next health check. With `cookie … insert indirect` a request that reached its cookie's replica gets no
    new cookie; one redispatched elsewhere gets the other replica's. (A clean-clone CI run killed r0 while r1 was
    still out after the test before: no server was left, and the requests of that moment got 503.) A replica
    that answered its own health check can also be marked down by HAProxy's checks of the seconds it was starting
    (a clean-clone CI run got a 503 on the page): this waits for that too."""
    deadline = time.time() + timeout
    for server in (f"r{i}" for i in range(servers)):
        while True:
            request = urllib.request.Request(url + "/_stcore/health", headers={"Cookie": f"SERVERID={server}"})
            try:
                response = urllib.request.urlopen(request, timeout=10)
                given = " ".join(response.headers.get_all("Set-Cookie") or [])  # Streamlit sets its own too
                if response.status == 200 and ("SERVERID=" not in given or f"SERVERID={server};" in given):
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise TimeoutError(f"{server} is not in the balancer's rotation after {timeout} s")
            time.sleep(0.2)


def replica_pid(port: int) -> int:
    """The Streamlit process serving this port (found by its command line in /proc)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                args = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if b"streamlit" in b" ".join(args) and str(port).encode() in args:
                return int(entry)
    raise LookupError(f"no replica on port {port}")


@pytest.fixture(scope="module")
def served(tiny_checkpoint):
    port, first = free_port(), free_port()
    env = dict(os.environ, ATTENTION_EXPLORER_CHECKPOINTS=str(tiny_checkpoint.parent))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "serve",
            "--workers",
            "2",
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            "--first-replica-port",
            str(first),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        said = iter(process.stdout.readline, "")
        announced = next((line for line in said if line.startswith("serving on")), None)
        # A teacher opens the address the moment serve gives it: the balancer must route by then, not answer
        # "no server is available" until its next health check.
        assert announced and healthy(url), announced
        threading.Thread(target=collections.deque, args=(said, 0), daemon=True).start()  # read the rest, unheld
        wait_in_rotation(url)  # each replica answers through the balancer
        yield url, (first, first + 1)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def test_the_balancer_compresses_text_and_sets_a_replica_cookie(served):
    url, _ = served
    page = get(url + "/", gzip=True)
    assert page.headers.get("Content-Encoding") == "gzip"
    assert "SERVERID=" in (page.headers.get("Set-Cookie") or "")
    html = __import__("gzip").decompress(page.read()).decode()
    script = html.split('src="')[1].split('"')[0]  # the app's main script bundle
    plain = len(get(f"{url}/{script.lstrip('./')}").read())
    compressed = get(f"{url}/{script.lstrip('./')}", gzip=True)
    assert compressed.headers.get("Content-Encoding") == "gzip" and len(compressed.read()) < plain / 2


def test_pages_render_through_the_balancer_and_survive_a_killed_replica(served, browser):
    url, replica_ports = served
    pages = []
    for sentence in ("I like tea.", "Tom drinks tea."):
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # its own cookies: its own session
        page = context.new_page()
        page.goto(f"{url}/?s={sentence.replace(' ', '+')}", wait_until="domcontentloaded")
        page.locator("[data-testid='stMarkdownContainer'] h3").first.wait_for(timeout=120_000)
        wait_until_idle(page)
        assert_no_exception(page)
        pages.append((context, page))
    cookie = next(c["value"] for c in pages[0][0].cookies() if c["name"] == "SERVERID")
    victim = replica_ports[int(cookie[1:])]
    os.kill(replica_pid(victim), signal.SIGKILL)
    # The page's replica is gone: reloading reaches the other replica (redispatch) with the link's state.
    page = pages[0][1]
    page.reload(wait_until="domcontentloaded")
    page.locator("[data-testid='stMarkdownContainer'] h3").first.wait_for(timeout=120_000)
    wait_until_idle(page)
    assert_no_exception(page)
    wait_healthy(f"http://127.0.0.1:{victim}", timeout=120)  # and serve started the killed replica again
    wait_in_rotation(url)  # and HAProxy sends it requests again
    for context, _ in pages:
        context.close()


def test_requests_in_flight_when_a_replica_dies_are_answered_by_the_other(served):
    """Issue 36: twelve streams of requests pinned to one replica (its cookie), the replica killed (SIGKILL) in the
    middle: every request is answered 200, none 502 (HAProxy's retry-on resends the ones in flight, elsewhere)."""
    url, replica_ports = served
    wait_in_rotation(url)  # "the other" must be there to answer
    codes, stop, killed = collections.Counter(), threading.Event(), threading.Event()
    after_kill = collections.Counter()
    failures = []  # (seconds after the kill, path, code): which requests, and when, if any fails
    kill_time = [0.0]

    def stream(path: str) -> None:
        while not stop.is_set():
            request = urllib.request.Request(url + path, headers={"Cookie": "SERVERID=r0"})
            try:
                code = urllib.request.urlopen(request, timeout=10).status
            except urllib.error.HTTPError as error:
                code = error.code
            except OSError as error:
                code = type(error).__name__
            codes[code] += 1
            if killed.is_set():
                after_kill[code] += 1
            if code != 200:
                failures.append((round(time.time() - kill_time[0], 2) if killed.is_set() else None, path, code))

    streams = [threading.Thread(target=stream, args=(p,)) for p in ("/", "/_stcore/health", "/_stcore/host-config") * 4]
    for thread in streams:
        thread.start()
    time.sleep(1.0)
    kill_time[0] = time.time()
    os.kill(replica_pid(replica_ports[0]), signal.SIGKILL)
    killed.set()
    time.sleep(3.0)
    stop.set()
    for thread in streams:
        thread.join()
    assert sum(after_kill.values()) > 50  # the streams went on through the kill
    assert set(codes) == {200}, (dict(codes), failures[:20])
    wait_healthy(f"http://127.0.0.1:{replica_ports[0]}", timeout=120)  # serve started it again
    wait_in_rotation(url)

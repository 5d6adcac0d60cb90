"""One command for a school server: N Streamlit replicas of the app behind HAProxy.

    python -m serve --workers 2 --port 8501

- Session affinity: HAProxy sets a cookie naming the replica a browser first reached, so every request of a
  session (the page, its websocket /_stcore/stream) goes to the same process, which Streamlit needs: a
  session's state lives in that process.
- Health checks: HAProxy asks each replica's /_stcore/health every 2 s and takes a replica out after two failed
  checks; this script restarts a replica whose process has died, and HAProxy puts it back once it answers.
  A student whose replica died reconnects to another one (the page reloads its link's state there).
- Compression: HAProxy gzips HTML, JavaScript, CSS and JSON for browsers that ask for it (Plotly's script is
  4.7 MB uncompressed), so a class over school Wi-Fi downloads a fraction of it.
- Each replica has its own model copy and its own translation cache (ui/cache.py): the same sentence typed by
  students on two replicas is computed twice, once per replica. Each replica runs one model computation per core
  at once (ATTENTION_EXPLORER_MODEL_SLOTS, default 1 here: the replicas share the cores).

HAProxy comes from Debian (`apt-get install -y haproxy`). Stop with Ctrl-C (or SIGTERM): every replica stops.

More than one machine (a school's lab, a course): each replica host runs its replicas and restarts them itself,
listening where the balancer can reach them; the balancer host routes and checks, and starts none of its own
unless --workers says so:

    python -m serve --replicas-only --workers 2 --replica-address 0.0.0.0          # on 10.0.0.2 and 10.0.0.3
    python -m serve --workers 0 --backend 10.0.0.2:8601 --backend 10.0.0.2:8602 \
                                --backend 10.0.0.3:8601 --backend 10.0.0.3:8602         # on the balancer

Every backend gets the same cookie stickiness, health checks and gzip as a local replica; when a host dies its
sessions move to the others (the page keeps its sentence and view from its link).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def haproxy_config(port: int, backends: list[tuple[str, int]], address: str = "0.0.0.0") -> str:
    """backends: (host, port) of every replica, on this machine (127.0.0.1) or another."""
    servers = "\n".join(
        f"    server r{i} {host}:{p} check inter 2s fall 2 rise 1 cookie r{i}" for i, (host, p) in enumerate(backends)
    )
    return f"""global
    maxconn 4096

defaults
    mode http
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    # A replica that dies mid-request: the request is sent again (an idempotent GET, still in HAProxy's buffer),
    # to another replica at every retry (redispatch 1). Without retry-on, only failed connections were retried,
    # and the requests in flight when a replica was killed got 502 (3-20 of 12 concurrent streams, killed with
    # SIGKILL). all-retryable-errors also retries on response timeouts and cut 12 streams' throughput from about
    # 1,800 to 270 requests a second here: these five kinds are the ones a dying replica gives.
    option redispatch 1
    retries 2
    retry-on conn-failure empty-response junk-response 502 503

frontend web
    bind {address}:{port}
    compression algo gzip
    compression type text/html text/plain text/css text/javascript application/javascript application/json image/svg+xml
    default_backend replicas

backend replicas
    balance leastconn
    cookie SERVERID insert indirect nocache
    option httpchk GET /_stcore/health
    http-check expect status 200
{servers}
"""


def start_streamlit(
    port: int,
    env: dict[str, str],
    address: str = "127.0.0.1",
    script: str = "app.py",
    stdout: int | None = subprocess.DEVNULL,
    compress_websocket: bool = True,
) -> subprocess.Popen:
    """`streamlit run` of a script of this repository, headless, on address:port: the one launch of the app that
    serve's replicas, the tests and the benchmarks share. stdout: where its output goes (subprocess.PIPE to read
    why it did not start). compress_websocket=False behind the balancer, which compresses already."""
    command = [sys.executable, "-m", "streamlit", "run", str(ROOT / script), "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", address, "--browser.gatherUsageStats", "false"]
    if not compress_websocket:
        command += ["--server.enableWebsocketCompression", "false"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.STDOUT)


def start_replica(port: int, env: dict[str, str], address: str = "127.0.0.1") -> subprocess.Popen:
    # the balancer compresses; a replica's own websocket compression would only cost CPU
    return start_streamlit(port, env, address, compress_websocket=False)


def healthy(where: int | str) -> bool:
    """Whether a replica (its port on this machine) or a server (its URL) answers Streamlit's health check."""
    url = f"http://127.0.0.1:{where}" if isinstance(where, int) else where
    try:
        return urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200
    except OSError:
        return False


def wait_all_healthy(urls: list[str], timeout: float, stopped=lambda: False, poll: float = 0.2) -> bool:
    """Until every server answers its health check: True; False once timeout seconds pass or stopped() says serve
    is stopping."""
    deadline = time.time() + timeout
    while not all(healthy(url) for url in urls):
        if time.time() > deadline or stopped():
            return False
        time.sleep(poll)
    return True


def wait_healthy(url: str, timeout: float, poll: float = 0.5) -> None:
    """Until the server at url answers its health check; RuntimeError after timeout seconds. (The tests and
    benchmarks that start servers use it too.)"""
    if not wait_all_healthy([url], timeout, poll=poll):
        raise RuntimeError(f"{url} never became healthy")


def loopback(address: str) -> str:
    """Where this machine reaches a server listening on address (any address: through the loopback)."""
    return "127.0.0.1" if address in ("0.0.0.0", "::") else address


def backend(text: str) -> tuple[str, int]:
    """ "10.0.0.2:8601" -> ("10.0.0.2", 8601)"""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="N replicas of the app behind HAProxy (session affinity, health checks, restarts, gzip)."
    )
    p.add_argument("--workers", type=int, default=2, help="replicas on this machine (0: only --backend ones)")
    p.add_argument("--port", type=int, default=8501, help="where browsers connect (HAProxy)")
    p.add_argument("--address", default="0.0.0.0")
    p.add_argument("--first-replica-port", type=int, default=8601)
    p.add_argument(
        "--replica-address",
        default="127.0.0.1",
        help="where this machine's replicas listen (0.0.0.0 for a balancer on another machine to reach them)",
    )
    p.add_argument(
        "--backend",
        type=backend,
        action="append",
        default=[],
        metavar="HOST:PORT",
        help="a replica on another machine, which runs and restarts it (python -m serve --replicas-only there); "
        "repeat for each",
    )
    p.add_argument("--replicas-only", action="store_true", help="run and restart the replicas, no balancer")
    p.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = p.parse_args(argv)
    if not args.replicas_only and not os.path.exists(args.haproxy):
        print("HAProxy is not installed: apt-get install -y haproxy", file=sys.stderr)
        return 2
    if args.workers < 1 and (args.replicas_only or not args.backend):
        print("nothing to serve: --workers 0 needs --backend (and no --replicas-only)", file=sys.stderr)
        return 2
    ports = [args.first_replica_port + i for i in range(args.workers)]
    env = dict(os.environ)
    env.setdefault("ATTENTION_EXPLORER_MODEL_SLOTS", str(max(1, (os.cpu_count() or 2) // max(1, args.workers))))
    replicas = {port: start_replica(port, env, args.replica_address) for port in ports}
    balancer = None
    if not args.replicas_only:
        config = Path(tempfile.mkdtemp(prefix="attention-explorer-")) / "haproxy.cfg"
        config.write_text(haproxy_config(args.port, [("127.0.0.1", p) for p in ports] + args.backend, args.address))
        balancer = subprocess.Popen([args.haproxy, "-db", "-f", str(config)])
    stopping = threading.Event()  # set by SIGTERM or SIGINT

    def stop(*_):
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # This machine's replicas are checked where they listen (any address: through the loopback).
    wait_all_healthy([f"http://{loopback(args.replica_address)}:{port}" for port in ports], 120, stopping.is_set)
    if balancer is not None:
        # HAProxy marked the replicas down while they started and puts them back at its next check (up to 2 s
        # later): until then its page says no server is available, so "serving on" waits for it to route.
        wait_all_healthy([f"http://{loopback(args.address)}:{args.port}"], 10, stopping.is_set)
    where = f"replicas on {args.replica_address}, ports {ports}"
    if balancer is None:
        print(f"serving {args.workers} replicas ({where}), no balancer", flush=True)
    else:
        remote = f" and {len(args.backend)} on other machines" if args.backend else ""
        print(f"serving on http://{args.address}:{args.port} ({where}{remote})", flush=True)
    try:
        while not stopping.is_set():
            for port, process in list(replicas.items()):
                if process.poll() is not None:  # died: start it again; HAProxy adds it back when it is healthy
                    print(f"replica on port {port} exited ({process.returncode}); restarting", flush=True)
                    replicas[port] = start_replica(port, env, args.replica_address)
            if balancer is not None and balancer.poll() is not None:
                print("HAProxy exited; stopping", file=sys.stderr)
                break
            time.sleep(1)
    finally:
        processes = [*replicas.values()] + ([balancer] if balancer is not None else [])
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def haproxy_config(port: int, replica_ports: list[int], address: str = "0.0.0.0") -> str:
    servers = "\n".join(
        f"    server r{i} 127.0.0.1:{p} check inter 2s fall 2 rise 1 cookie r{i}" for i, p in enumerate(replica_ports)
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


def start_replica(port: int, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            # the balancer compresses; a replica's own websocket compression would only cost CPU
            "--server.enableWebsocketCompression",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )


def healthy(where: int | str) -> bool:
    """Whether a replica (its port on this machine) or a server (its URL) answers Streamlit's health check."""
    url = f"http://127.0.0.1:{where}" if isinstance(where, int) else where
    try:
        return urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200
    except OSError:
        return False


def wait_healthy(url: str, timeout: float, poll: float = 0.5) -> None:
    """Until the server at url answers its health check; RuntimeError after timeout seconds. (The tests and
    benchmarks that start servers use it too.)"""
    deadline = time.time() + timeout
    while not healthy(url):
        if time.time() > deadline:
            raise RuntimeError(f"{url} never became healthy")
        time.sleep(poll)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="N replicas of the app behind HAProxy (session affinity, health checks, restarts, gzip)."
    )
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--port", type=int, default=8501, help="where browsers connect (HAProxy)")
    p.add_argument("--address", default="0.0.0.0")
    p.add_argument("--first-replica-port", type=int, default=8601)
    p.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = p.parse_args(argv)
    if not os.path.exists(args.haproxy):
        print("HAProxy is not installed: apt-get install -y haproxy", file=sys.stderr)
        return 2
    ports = [args.first_replica_port + i for i in range(args.workers)]
    env = dict(os.environ)
    env.setdefault("ATTENTION_EXPLORER_MODEL_SLOTS", str(max(1, (os.cpu_count() or 2) // args.workers)))
    replicas = {port: start_replica(port, env) for port in ports}
    config = Path(tempfile.mkdtemp(prefix="attention-explorer-")) / "haproxy.cfg"
    config.write_text(haproxy_config(args.port, ports, args.address))
    balancer = subprocess.Popen([args.haproxy, "-db", "-f", str(config)])
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deadline = time.time() + 120
    while not all(healthy(port) for port in ports) and time.time() < deadline and not stopping:
        time.sleep(0.5)
    print(f"serving {args.workers} replicas on http://{args.address}:{args.port} (replicas on {ports})", flush=True)
    try:
        while not stopping:
            for port, process in list(replicas.items()):
                if process.poll() is not None:  # died: start it again; HAProxy adds it back when it is healthy
                    print(f"replica on port {port} exited ({process.returncode}); restarting", flush=True)
                    replicas[port] = start_replica(port, env)
            if balancer.poll() is not None:
                print("HAProxy exited; stopping", file=sys.stderr)
                break
            time.sleep(1)
    finally:
        for process in [*replicas.values(), balancer]:
            if process.poll() is None:
                process.terminate()
        for process in [*replicas.values(), balancer]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())

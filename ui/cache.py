"""A least-recently-used cache of translations, bounded by the bytes their arrays hold.

Streamlit's st.cache_data bounds entries by count, not size: one beam-8 translation of a long sentence holds
tens of MiB of attention maps and Q/K/V, so 128 entries could take gigabytes. This cache evicts the least recently
used results once their arrays pass a byte budget. It hands out the stored object itself (no pickling, no copy
per rerun), which is safe because a Translation's arrays are read-only.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import dataclasses
import os
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any

import numpy as np


def array_bytes(value: Any) -> int:
    """Bytes held by the numpy arrays inside value (dataclasses, lists, tuples, dicts), each array counted once
    (hypotheses of one beam share their encoder arrays)."""
    seen: set[int] = set()

    def walk(item) -> int:
        if isinstance(item, np.ndarray):
            if id(item) in seen:
                return 0
            seen.add(id(item))
            return item.nbytes
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            return sum(walk(getattr(item, f.name)) for f in dataclasses.fields(item))
        if isinstance(item, (list, tuple)):
            return sum(walk(x) for x in item)
        if isinstance(item, dict):
            return sum(walk(x) for x in item.values())
        return 0

    return walk(value)


class ComputeSlots:
    """At most n model computations at once, the rest queued (first come, first served by the OS's lock): with one
    intra-op thread each, n = the number of cores keeps every core busy without oversubscribing them, and bounds
    the memory of heavy requests (a 300-word beam-8 sentence) that would otherwise all run side by side."""

    def __init__(self, n: int, release_memory: bool = True):
        self.n = max(1, n)
        self.release_memory = release_memory  # hand freed memory back when the last computation ends
        self._semaphore = threading.BoundedSemaphore(self.n)
        self._lock = threading.Lock()
        self.running = 0
        self.queued = 0
        self.most_running = 0  # the largest number that ever ran at once: for tests

    @property
    def idle(self) -> bool:
        """No computation runs or waits (background work may then use the cores)."""
        with self._lock:
            return self.running == 0 and self.queued == 0

    def __enter__(self):
        with self._lock:
            self.queued += 1
        self._semaphore.acquire()
        with self._lock:
            self.queued -= 1
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        return self

    def __exit__(self, *exc):
        with self._lock:
            self.running -= 1
            idle = self.running == 0
        self._semaphore.release()
        if idle and self.release_memory:
            release_free_memory()
        return False


_LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if ctypes.util.find_library("c") else None


def stopping() -> bool:
    """Whether the process is ending: the main thread has finished (Python then waits for the other threads). Long
    background work asks this between steps and gives up, so a server told to stop exits at once."""
    return not threading.main_thread().is_alive()


# Background tasks still running. At exit (after the main thread has finished, so stopping() says yes) Python does
# not wait for daemon threads, but one stopped inside torch aborts the process ("terminate called without an
# active exception"): so exit waits, at most this long, for the running tasks to notice and return.
EXIT_WAIT_SECONDS = 5.0
_running: set[threading.Event] = set()


def _server_process() -> bool:
    """Whether this process is a Streamlit server (not a test run, which imports the app too: its AppTests' runtime
    is gone by the time the tests end)."""
    from streamlit import runtime

    return runtime.exists()


@atexit.register
def _let_background_tasks_return() -> None:
    """A server ends here at once: its background work holds nothing that must be written, and _exit skips the
    interpreter's teardown, in which a thread stopped inside torch would abort the process and which took another
    0.8-1 s after the wait for the tasks (a server told to stop took 1.7-2.3 s; issue 36 item 10). Its exit
    status is 0, what a server told to stop returns. Elsewhere (tests) the running tasks are given up to
    EXIT_WAIT_SECONDS to notice and return."""
    if _server_process():
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)
    deadline = time.monotonic() + EXIT_WAIT_SECONDS
    for done in list(_running):
        done.wait(max(0.0, deadline - time.monotonic()))


class PageRuns:
    """The page runs (Streamlit script runs) in progress in this process, for background work to give way to."""

    def __init__(self):
        self._lock = threading.Lock()
        self.running = 0
        self.last_ended = float("-inf")  # time.monotonic() when the last run ended

    @contextlib.contextmanager
    def drawing(self):
        """Around a page run (app.main)."""
        with self._lock:
            self.running += 1
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
                self.last_ended = time.monotonic()

    @contextlib.contextmanager
    def waiting_on_background(self):
        """Around a page run's wait for background work: the work it waits for must not give way to it."""
        with self._lock:
            self.running -= 1
        try:
            yield
        finally:
            with self._lock:
                self.running += 1

    def busy(self, quiet: float = 0.0) -> bool:
        """A page is being drawn, or one ended less than quiet seconds ago."""
        with self._lock:
            return self.running > 0 or time.monotonic() - self.last_ended < quiet


page_runs = PageRuns()

# Background work waits between its steps while pages are being drawn. A lower CPU priority alone
# (lower_this_threads_priority) does not keep it out of the pages' way: its thread holds Python's one interpreter
# lock while it computes Python, and one preempted while holding it makes every page wait. With 30 students on
# one process (benchmarks/class_load.py, the AMD EPYC of benchmarks/README.md) the toy run and the query-key
# sample that start with the server made the burst of 30 identical sentences take 2.2 s, against 1.7-1.9 s with
# no background work at all; giving way: 1.5 and 2.6 s, and medians of five bursts 1.75 and 1.82 s. It waits at
# most GIVE_WAY_SECONDS at a time, so it still moves on under pages without end; QUIET_SECONDS after a run its
# messages are still being sent from the server's event loop.
GIVE_WAY_SECONDS = 2.0
QUIET_SECONDS = 0.05


def between_steps() -> bool:
    """Called by background work between its steps: waits while pages are being drawn (at most GIVE_WAY_SECONDS),
    then says whether the server is stopping (stopping(): then the work gives up)."""
    deadline = time.monotonic() + GIVE_WAY_SECONDS
    while page_runs.busy(QUIET_SECONDS) and time.monotonic() < deadline and not stopping():
        time.sleep(0.01)
    return stopping()


def lower_this_threads_priority() -> None:
    """Background work yields the cores to the pages being drawn: the calling thread alone at the lowest CPU
    priority (Linux gives each thread its own nice value; with one intra-op thread torch computes on the calling
    thread, so its work is lowered too). The script runs and the browser on the same two cores come first: a
    lesson switch waited up to 2.4 s while the work computed ahead for the sentence ran beside it (issue 36)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # not Linux, or not allowed: the work simply runs at the usual priority
        pass


class BackgroundWorker:
    """Work in order on one daemon thread at a time, like ThreadPoolExecutor(max_workers=1) but not joined at exit:
    its tasks call between_steps() between steps and return when it says so: a server told to stop exits within a
    step (the query-key sample took 5-30 s to let a server stop when Python joined its thread)."""

    def __init__(self, name: str):
        self.name = name
        self._one_at_a_time = threading.Lock()

    def submit(self, fn, *args) -> Future:
        future: Future = Future()

        def run():
            lower_this_threads_priority()
            with self._one_at_a_time:
                if not future.set_running_or_notify_cancel():
                    return
                done = threading.Event()
                _running.add(done)
                try:
                    future.set_result(fn(*args))
                except BaseException as e:  # handed to whoever waits on the future
                    future.set_exception(e)
                finally:
                    done.set()
                    _running.discard(done)

        threading.Thread(target=run, name=self.name, daemon=True).start()
        return future


class Batcher:
    """Requests that arrive while the model's slots are busy are computed together, in one batch, by whichever
    of them gets a slot first (a class typing at once: 30 sentences decoded in one padded batch take a third of
    the time of 30 one after another). Each call returns its own result; call(item) blocks until it is there.

    compute_batch(items) -> results in the same order. A request takes its own item and up to max_batch - 1 of
    the others waiting, oldest first; if the batch fails, each of its items is computed alone, so one bad
    request fails only itself."""

    def __init__(self, slots: ComputeSlots, compute_batch: Callable[[list], list], max_batch: int = 32):
        self.slots = slots
        self.compute_batch = compute_batch
        self.max_batch = max(1, max_batch)
        self._lock = threading.Lock()
        self._waiting: list[tuple[Any, Future]] = []
        self.batches: deque[int] = deque(maxlen=256)  # the sizes of the last batches computed: for tests

    def __call__(self, item):
        mine: Future = Future()
        with self._lock:
            self._waiting.append((item, mine))
        with self.slots:
            with self._lock:
                batch = [request for request in self._waiting if request[1] is mine]
                if batch:  # not yet taken into another request's batch
                    batch += [request for request in self._waiting if request[1] is not mine][: self.max_batch - 1]
                    taken = {id(future) for _, future in batch}
                    self._waiting = [request for request in self._waiting if id(request[1]) not in taken]
            if batch:
                self.batches.append(len(batch))
                self._compute(batch)
        return mine.result()

    def _compute(self, batch: list[tuple[Any, Future]]) -> None:
        try:
            results = self.compute_batch([item for item, _ in batch])
        except BaseException as error:
            if len(batch) == 1:
                batch[0][1].set_exception(error)
                return
            for request in batch:  # which one failed? each alone
                self._compute([request])
            return
        for (_, future), result in zip(batch, results):
            future.set_result(result)


def failed(future: Future) -> bool:
    """Whether a computation has ended without a result: it raised, or was cancelled before it started."""
    return future.done() and (future.cancelled() or future.exception() is not None)


class BackgroundResults:
    """Results computed once per key for every session of a server, in the background, one at a time and in the
    order asked (the query-key samples, the lesson's toy training runs, integrated gradients). A computation is
    handed a `report(done, total)` callback, read by `progress`, whose `report.cancelled` (a threading.Event) says
    whether cancel(key) asked it to stop; a failed or cancelled one is started again when asked again. At most
    max_results finished results are kept, the least recently asked first dropped."""

    def __init__(self, name: str, max_results: int = 1 << 16):
        self._lock = threading.Lock()
        self._worker = BackgroundWorker(name)
        self._futures: OrderedDict[Hashable, Future] = OrderedDict()
        self._progress: dict[Hashable, tuple[int, int]] = {}
        self._cancel: dict[Hashable, threading.Event] = {}
        self.max_results = max_results
        self.started = 0  # computations started: for tests and the compute log

    def future(self, key: Hashable, compute: Callable[..., Any]) -> Future:
        """The computation of key, started (compute(report)) unless it is running or done already."""
        with self._lock:
            future = self._futures.get(key)
            if future is None or failed(future):
                self.started += 1

                def report(done: int, total: int) -> None:
                    self._progress[key] = (done, total)

                report.cancelled = self._cancel[key] = threading.Event()  # set by cancel(key); compute reads it
                self._progress.pop(key, None)
                future = self._futures[key] = self._worker.submit(compute, report)
            self._futures.move_to_end(key)
            finished = [k for k, f in self._futures.items() if f.done()]
            for old in finished[: max(0, len(finished) - self.max_results)]:
                del self._futures[old]
                self._progress.pop(old, None)
                self._cancel.pop(old, None)
            return future

    def cancel(self, key: Hashable) -> None:
        """Ask key's computation to stop: its report.cancelled is set, and a computation that reads it between
        steps ends with an exception (asked again, it starts anew). One that waits for its turn never starts."""
        with self._lock:
            future, event = self._futures.get(key), self._cancel.get(key)
        if future is not None and not future.cancel() and event is not None:
            event.set()

    def peek(self, key: Hashable) -> Future | None:
        """The computation of key if one was started (running, waiting or done), without starting one."""
        with self._lock:
            return self._futures.get(key)

    def finished(self, key: Hashable) -> Any | None:
        """key's result if its computation has finished without an exception, else None (never started, running,
        waiting or failed)."""
        future = self.peek(key)
        if future is None or not future.done() or failed(future):
            return None
        return future.result()

    def progress(self, key: Hashable) -> tuple[int, int] | None:
        """(done, total) as key's computation last reported, None before its first report."""
        return self._progress.get(key)

    def wait(self, timeout: float | None = None) -> None:
        """Until every computation started so far has finished (or failed)."""
        with self._lock:
            futures = list(self._futures.values())
        for future in futures:
            if not future.cancelled():
                future.exception(timeout=timeout)


def release_free_memory() -> None:
    """Hand memory freed by finished computations back to the system (glibc keeps freed blocks in its arenas, so
    a server's RSS would stay at its peak after a burst of long sentences). A no-op where there is no glibc."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


class _InFlight:
    """One computation under way: the sessions that ask for the same key meanwhile wait for it."""

    def __init__(self):
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.waiters = 0


class ByteBudgetCache:
    """get(key, compute): the cached value, or compute() stored under key; thread-safe (the app's sessions run
    in threads of one process). The newest value is always kept, even when it alone is over the budget.

    A key is computed once however many sessions ask for it at the same moment (a class typing the sentence on
    the board): the first computes, the others wait for its result. An exception reaches every waiter and is
    not cached, so the next request tries again."""

    def __init__(
        self,
        max_bytes: int,
        slots: ComputeSlots | None = None,
        on_compute: Callable[[Hashable], None] | None = None,
        size: Callable[[Any], int] = array_bytes,
    ):
        self.max_bytes = max_bytes
        self.slots = slots or ComputeSlots(1 << 16)  # no bound unless given one
        self.size = size  # the bytes a value holds
        self.on_compute = on_compute  # called with the key after each computation (benchmarks count them)
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._in_flight: dict[Hashable, _InFlight] = {}
        self.computed = 0  # how many times compute() ran: a counter for tests and benchmarks

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        """Stored or being computed now."""
        with self._lock:
            return key in self._items or key in self._in_flight

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def discard(self, key: Hashable) -> None:
        with self._lock:
            if key in self._items:
                self._bytes -= self._items.pop(key)[1]

    def values(self) -> list[Any]:
        with self._lock:
            return [value for value, _ in self._items.values()]

    def waiting(self, key: Hashable) -> int:
        """How many requests wait for key's computation now (0 when it is not being computed)."""
        with self._lock:
            flight = self._in_flight.get(key)
            return flight.waiters if flight else 0

    def get(self, key: Hashable, compute: Callable[[], Any], takes_slot: bool = True) -> Any:
        """takes_slot=False: compute takes a slot itself (a Batcher, which computes other requests in it too)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
            flight = self._in_flight.get(key)
            owner = flight is None
            if owner:
                self._in_flight[key] = flight = _InFlight()
            else:
                flight.waiters += 1
        if not owner:  # the same key is being computed: wait for that result instead of repeating the work
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.value
        try:
            # a bounded number at once; the rest wait here (the page shows a spinner). Outside the lock: other
            # sessions keep reading while this one translates.
            with self.slots if takes_slot else contextlib.nullcontext():
                value = compute()
        except BaseException as error:
            with self._lock:
                del self._in_flight[key]
            flight.error = error
            flight.done.set()
            raise
        size = self.size(value)
        with self._lock:
            self.computed += 1
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (_, evicted) = self._items.popitem(last=False)
                self._bytes -= evicted
            del self._in_flight[key]
        flight.value = value
        flight.done.set()
        if self.on_compute is not None:
            self.on_compute(key)
        return value

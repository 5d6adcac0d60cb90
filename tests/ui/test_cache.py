"""The translation cache holds results up to a byte budget, shares them between sessions, and never lets one
session change what another reads."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import pytest

from model.decode import translate_hypotheses
from ui.cache import BackgroundWorker, Batcher, ByteBudgetCache, ComputeSlots, array_bytes


def test_least_recently_used_results_go_first_once_past_the_budget():
    cache = ByteBudgetCache(max_bytes=3 * 800)
    for key in "abc":
        cache.get(key, lambda: np.zeros(100))  # 800 bytes each
    cache.get("a", lambda: pytest.fail("a is cached"))  # a becomes the most recent
    cache.get("d", lambda: np.zeros(100))
    assert cache.bytes <= 3 * 800 and len(cache) == 3
    computed = []
    cache.get("b", lambda: computed.append("b") or np.zeros(100))
    assert computed == ["b"]  # b was the least recently used, so it was evicted
    cache.get("a", lambda: pytest.fail("a was used recently and must still be there"))


def test_a_single_result_over_the_budget_is_still_returned():
    cache = ByteBudgetCache(max_bytes=10)
    assert cache.get("big", lambda: np.zeros(1000)).shape == (1000,)


def test_beam_hypotheses_share_their_encoder_arrays(tiny_model, tiny_tokenizers):
    hypotheses = translate_hypotheses(tiny_model, *tiny_tokenizers, "I like tea.", beam_size=4)
    assert len(hypotheses) > 1
    first = hypotheses[0]
    for h in hypotheses[1:]:
        assert h.attention("encoder_self") is first.attention("encoder_self")
        assert h.record.qkv["encoder_self"] is first.record.qkv["encoder_self"]
    encoder = first.attention("encoder_self").nbytes + sum(a.nbytes for a in first.record.qkv["encoder_self"].values())
    separate = sum(array_bytes(h) for h in hypotheses)
    assert array_bytes(hypotheses) == separate - (len(hypotheses) - 1) * encoder


def test_a_shared_translation_cannot_be_changed_by_a_view(tiny_model, tiny_tokenizers):
    tr = translate_hypotheses(tiny_model, *tiny_tokenizers, "I like tea.")[0]
    for array in (
        tr.attention("encoder_self"),
        tr.attention("decoder_self"),
        tr.attention("cross"),
        tr.record.qkv["cross"]["q"],
    ):
        with pytest.raises(ValueError):
            array[0] = 0


def test_sessions_asking_at_once_all_get_the_result():
    cache, results = ByteBudgetCache(max_bytes=10**6), []

    def session():
        results.append(cache.get("same", lambda: np.arange(10)))

    threads = [threading.Thread(target=session) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 and len(cache) == 1
    assert all(np.array_equal(r, np.arange(10)) for r in results)


def test_simultaneous_requests_for_one_key_compute_it_once():
    """A class types the sentence on the board: N sessions ask at once, the translation is computed once."""
    cache = ByteBudgetCache(max_bytes=10**6)
    started, release = threading.Event(), threading.Event()
    calls = []

    def compute():
        calls.append(1)
        started.set()
        release.wait(5)
        return np.zeros(10)

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("sentence", compute))) for _ in range(8)]
    threads[0].start()
    started.wait(5)
    for thread in threads[1:]:
        thread.start()
    while cache.waiting("sentence") < 7:  # every other request is waiting, not computing
        threading.Event().wait(0.01)
    release.set()
    for thread in threads:
        thread.join(5)
    assert len(calls) == 1 and cache.computed == 1 and len(results) == 8
    assert all(r is results[0] for r in results)


def test_an_error_reaches_every_waiter_and_is_not_cached():
    cache = ByteBudgetCache(max_bytes=10**6)
    started, release = threading.Event(), threading.Event()

    def failing():
        started.set()
        release.wait(5)
        raise RuntimeError("model failed")

    errors = []

    def ask():
        try:
            cache.get("bad", failing)
        except RuntimeError as e:
            errors.append(str(e))

    first = threading.Thread(target=ask)
    first.start()
    started.wait(5)
    others = [threading.Thread(target=ask) for _ in range(3)]
    for thread in others:
        thread.start()
    while cache.waiting("bad") < 3:
        threading.Event().wait(0.01)
    release.set()
    for thread in [first, *others]:
        thread.join(5)
    assert errors == ["model failed"] * 4
    assert cache.get("bad", lambda: np.ones(3)).sum() == 3  # not cached: the next request computes again


def test_at_most_n_computations_run_at_once_and_the_rest_wait_their_turn():

    cache = ByteBudgetCache(max_bytes=1 << 20, slots=ComputeSlots(2))
    started = threading.Barrier(8)
    gate = threading.Event()

    def slow(i):
        def compute():
            gate.wait(timeout=10)
            return np.full(10, i)

        return compute

    def ask(i):
        started.wait()
        results[i] = cache.get(("sentence", i), slow(i))[0]

    results = {}
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    deadline = __import__("time").time() + 5
    while cache.slots.queued < 6 and __import__("time").time() < deadline:
        __import__("time").sleep(0.01)
    assert cache.slots.running == 2 and cache.slots.queued == 6  # eight different sentences: two at a time
    gate.set()
    for th in threads:
        th.join(timeout=10)
    assert results == {i: i for i in range(8)} and cache.slots.most_running == 2 and cache.computed == 8
    assert cache.slots.running == 0 and cache.slots.queued == 0


def test_sessions_on_the_same_translation_and_view_share_one_figure():
    import plotly.graph_objects as go

    from ui import models

    class FakeTranslation:  # shared_figure needs only identity and a weak reference
        pass

    built = []

    def build():
        built.append(1)
        return go.Figure(go.Heatmap(z=np.zeros((4, 4), dtype=np.float32)))

    first, second = FakeTranslation(), FakeTranslation()
    a = models.shared_figure(first, ("heatmap", 1, "en"), build)
    assert models.shared_figure(first, ("heatmap", 1, "en"), build) is a and len(built) == 1
    models.shared_figure(first, ("heatmap", 2, "en"), build)  # another layer: another figure
    models.shared_figure(second, ("heatmap", 1, "en"), build)  # another translation: another figure
    assert len(built) == 3
    assert models.figure_bytes(a) >= 4 * 4 * 4  # the trace's float32 array is counted


def test_a_shared_figure_gives_every_session_plotlys_own_dict_made_once():
    import plotly.graph_objects as go

    from ui import models

    class FakeTranslation:
        pass

    def build():
        return go.Figure(go.Heatmap(z=np.arange(12, dtype=np.float32).reshape(3, 4)), layout={"title": "t"}), "x"

    fig, other = models.shared_figure(FakeTranslation(), ("dict-test",), build)
    assert isinstance(fig, models.SharedFigure) and other == "x"
    assert fig.to_dict() is fig.to_dict()  # made once
    assert fig.to_dict() == build()[0].to_dict()  # and what Plotly itself makes of the figure
    assert fig.to_json() == build()[0].to_json()
    assert models.figure_bytes(fig) >= 2 * 12 * 4  # its arrays, and their encoded copy in the dict


def test_a_figure_is_not_reused_for_a_new_translation_that_reuses_an_old_id():
    from ui import models

    class FakeTranslation:
        pass

    old = FakeTranslation()
    models.shared_figure(old, ("stale-test",), lambda: "old figure")
    new = FakeTranslation()
    key = (id(new), "stale-test")
    cache = models.figure_cache()
    # what a reused id looks like: an entry under the new object's id whose owner is another object
    cache.discard(key)
    cache.get(key, lambda: (__import__("weakref").ref(old), "old figure"))
    assert models.shared_figure(new, ("stale-test",), lambda: "new figure") == "new figure"


def test_value_zeroing_and_norms_are_computed_for_the_view_only_not_for_every_head(tiny_checkpoint):
    from model.checkpoint import load_checkpoint
    from model.decode import translate
    from ui import models

    loaded = load_checkpoint(tiny_checkpoint)
    tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "the cat sees a dog")
    forced, computed = models.get_attribution(str(tiny_checkpoint), tr, "value-zeroing")
    assert computed is None  # the method's view() then zeroes one layer's keys for the one head shown
    assert models.get_attribution(str(tiny_checkpoint), tr, "norm")[1] is None  # the norm too: one layer
    _, raw = models.get_attribution(str(tiny_checkpoint), tr, "attention")
    assert raw is not None and raw.maps["cross"].shape[:2] == (
        loaded.model.cfg.n_layers("cross"),
        loaded.model.cfg.n_heads,
    )


def test_background_work_gives_up_once_the_main_thread_has_finished():
    """stopping() is what long background work asks between steps; in a live process it says no."""
    from ui.cache import stopping

    assert stopping() is False


def test_the_held_out_sample_gives_up_between_batches_when_its_process_is_ending(tiny_checkpoint):
    """A server told to stop must not wait for the whole query-key sample (it took 5-30 s)."""
    from model import qk_space
    from model.checkpoint import load_checkpoint
    from model.progress import Cancelled, Progress

    loaded = load_checkpoint(tiny_checkpoint)
    asked, reported = [], []

    def should_stop():
        asked.append(1)
        return len(asked) > 1  # the process ends after the first batch

    with pytest.raises(Cancelled):
        qk_space.sample_qk_in_batches(
            loaded,
            ["I like tea."] * 6,
            contextlib.nullcontext(),
            batch=2,
            progress=Progress(lambda done, total: reported.append((done, total)), should_stop),
        )
    assert reported == [(0, 6), (2, 6)]  # stopped after 2 of 6 sentences


def test_a_process_ends_cleanly_and_at_once_while_background_work_runs_inside_torch():
    """Daemon threads are not waited for, and one stopped inside torch aborted the process at exit; a task that
    asks stopping() between steps lets the process end within a step, with exit code 0."""
    import subprocess
    import sys
    import time

    from ..conftest import ROOT

    code = (
        "import torch, time\n"
        "from ui.cache import BackgroundWorker, stopping\n"
        "def work():\n"
        "    while not stopping():\n"
        "        torch.randn(200, 200) @ torch.randn(200, 200)\n"
        "BackgroundWorker('test').submit(work)\n"
        "time.sleep(0.5)\n"
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20  # (most of it importing torch)


def test_a_class_pressing_train_on_one_setting_trains_it_once_while_translations_keep_every_slot():
    """Thirty students ask for the same toy run at once: one run; while it trains (at the lowest priority) it
    holds none of the model's slots, and a translation asked meanwhile does not wait for it."""
    import torch

    from model import toy
    from ui import models

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the app's setting (app.TORCH_THREADS): two threads each on a busy machine crawl
    settings = toy.ToySettings(steps=150, snapshots=3, seed=7)
    runs, cache = models.toy_runs(), models.translation_cache()
    started = runs.started
    futures = []
    students = [threading.Thread(target=lambda: futures.append(models.toy_run(settings))) for _ in range(30)]
    for student in students:
        student.start()
    for student in students:
        student.join()
    assert runs.started == started + 1 and len({id(f) for f in futures}) == 1
    while runs.progress(settings) is None:  # training has begun
        threading.Event().wait(0.01)
    assert cache.slots.running == 0 and cache.slots.idle
    waited = []
    began = time.perf_counter()
    cache.get(("toy-test", "a translation"), lambda: waited.append(time.perf_counter() - began) or np.zeros(1))
    assert waited[0] < 0.5
    assert not futures[0].done()  # the translation did not wait for the training to end
    futures[0].result(timeout=120)
    assert runs.started == started + 1
    torch.set_num_threads(threads)


def test_a_background_result_is_offered_only_once_it_has_finished_without_error():
    """The lesson reads a run as finished only when it is: never while it trains, never a failed one (it then
    offers the Train button again), and a failed run asked again is trained again."""
    from ui.cache import BackgroundResults

    results = BackgroundResults("test-finished")
    go, attempts = threading.Event(), []

    def compute(report):
        attempts.append(1)
        go.wait(10)
        if len(attempts) == 1:
            raise RuntimeError("the first attempt fails")
        return "trained"

    assert results.finished("run") is None  # never asked
    results.future("run", compute)
    assert results.finished("run") is None  # running
    go.set()
    results.wait(10)
    assert results.finished("run") is None  # failed
    results.future("run", compute).result(10)
    assert results.finished("run") == "trained" and len(attempts) == 2


def test_background_work_runs_at_the_lowest_priority_and_pages_keep_theirs():
    """The work computed ahead (a toy run, the query-key sample, attributions) gives way to the script runs that
    draw pages on the same cores."""
    import os

    if not hasattr(os, "setpriority"):
        pytest.skip("no per-thread priorities here")
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    niceness = (
        BackgroundWorker("test")
        .submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        .result(timeout=10)
    )
    assert niceness == 19
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own


def test_background_work_waits_between_its_steps_while_a_page_is_drawn(monkeypatch):
    """A step of background work does not start while a page run is in progress (it would hold the interpreter
    lock the page needs), starts once the page is drawn, and does not wait for a page that waits for it."""
    from ui import cache

    runs = cache.PageRuns()
    monkeypatch.setattr(cache, "page_runs", runs)
    steps: list[float] = []

    def work():
        for _ in range(3):
            cache.between_steps()
            steps.append(time.monotonic())
        return "done"

    with runs.drawing():
        future = cache.BackgroundWorker("test-give-way").submit(work)
        time.sleep(0.5)
        assert steps == []  # the page is being drawn: no step has started
        ended = time.monotonic()
    assert future.result(timeout=10) == "done" and steps[0] >= ended
    steps.clear()
    with runs.drawing():  # a page that waits for the work (the query-key view's sample)
        future = cache.BackgroundWorker("test-waited-for").submit(work)
        with runs.waiting_on_background():
            assert future.result(timeout=1) == "done"
        assert runs.running == 1


def test_background_work_moves_on_under_pages_without_end(monkeypatch):
    from ui import cache

    runs = cache.PageRuns()
    monkeypatch.setattr(cache, "page_runs", runs)
    monkeypatch.setattr(cache, "GIVE_WAY_SECONDS", 0.2)
    with runs.drawing():
        start = time.monotonic()
        assert cache.BackgroundWorker("test-no-end").submit(cache.between_steps).result(timeout=5) is False
        assert 0.2 <= time.monotonic() - start < 2


def _call_while_the_slot_is_busy(batcher: Batcher, items: list) -> dict:
    """Start a request per item while the only model slot is held, let them queue, then free the slot."""
    results: dict = {}

    def ask(item):
        try:
            results[item] = batcher(item)
        except ValueError as error:
            results[item] = error

    with batcher.slots:
        threads = [threading.Thread(target=ask, args=(item,)) for item in items]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while batcher.slots.queued < len(items) and time.monotonic() < deadline:
            time.sleep(0.01)
    for thread in threads:
        thread.join(timeout=10)
    return results


def test_requests_waiting_for_the_model_together_are_computed_in_one_batch_each_getting_its_own_result():
    """A class typing at once: the sentences that queue while the model is busy are decoded together."""
    batcher = Batcher(ComputeSlots(1), lambda items: [item.upper() for item in items])
    results = _call_while_the_slot_is_busy(batcher, ["tom", "jerry", "cat", "dog", "tea"])
    assert results == {item: item.upper() for item in ["tom", "jerry", "cat", "dog", "tea"]}
    assert list(batcher.batches) == [5]  # the first request to get the slot took every waiting one along


def test_a_batch_is_bounded_and_a_bad_request_fails_only_itself():
    def upper(items):
        if "bad" in items:
            raise ValueError("bad")
        return [item.upper() for item in items]

    batcher = Batcher(ComputeSlots(1), upper, max_batch=3)
    items = ["a", "b", "bad", "c", "d", "e", "f"]
    results = _call_while_the_slot_is_busy(batcher, items)
    assert isinstance(results.pop("bad"), ValueError)
    assert results == {item: item.upper() for item in items if item != "bad"}
    assert max(batcher.batches) <= 3

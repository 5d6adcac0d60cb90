"""Fixtures of the app tests: a checkpoints folder of tiny models, and a counter of translation calls."""

from __future__ import annotations

import shutil

import pytest
import streamlit as st

from model import decode


@pytest.fixture(autouse=True)
def nothing_computed_ahead(monkeypatch):
    """The app's tests do not compute ahead (ui.models.computes_ahead; the tests of that turn it on), and each
    waits at its end for the background work it started: a query-key sample queued by every page of every test
    (each on its own tiny checkpoint) ran on beside the later tests, and a 4 s fixture took 124 s."""
    monkeypatch.setenv("ATTENTION_EXPLORER_COMPUTE_AHEAD", "0")
    yield
    from ui import models, qk_space

    for results in (qk_space.qk_samples(), models.toy_runs(), models.slow_attributions()):
        results.wait(timeout=120)
    models.attribution_prefetcher().submit(lambda: None).result(timeout=120)  # one worker: after what it holds


@pytest.fixture(autouse=True)
def server_maps(monkeypatch):
    """The attention views open on the server's maps, which AppTest can read (the page switches them in the
    browser by default, in a script AppTest does not run; tests of that default unset this)."""
    monkeypatch.setenv("ATTENTION_EXPLORER_SWITCH_IN_BROWSER", "0")


@pytest.fixture
def checkpoint_root(tiny_checkpoint, tmp_path, monkeypatch):
    """A checkpoints/ folder with two tiny checkpoints, so the selector has a choice."""
    root = tmp_path / "checkpoints"
    shutil.copytree(tiny_checkpoint, root / "tiny-a")
    shutil.copytree(tiny_checkpoint, root / "tiny-b")
    monkeypatch.setenv("ATTENTION_EXPLORER_CHECKPOINTS", str(root))
    st.cache_data.clear()
    st.cache_resource.clear()
    return root


@pytest.fixture
def translations(monkeypatch):
    """Counts the app's calls into the model's decoding, to show what is cached."""
    calls = []
    real, real_batch = decode.translate_hypotheses, decode.translate_batch

    def counting(*args, **kwargs):
        calls.append(args[3])
        return real(*args, **kwargs)

    def counting_batch(*args, **kwargs):  # greedy sentences that waited for the model together (ui.models)
        calls.extend(args[3])
        return real_batch(*args, **kwargs)

    monkeypatch.setattr(decode, "translate_hypotheses", counting)
    monkeypatch.setattr(decode, "translate_batch", counting_batch)
    return calls

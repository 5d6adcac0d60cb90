"""A few simulated students over Streamlit's websocket protocol (benchmarks/class_load.py, reduced): no errors
or cross-talk, the sentence a whole class types at once is computed once, and long pasted texts are drawn a
few at a time so memory does not grow with every student who pastes one."""

from __future__ import annotations

import sys

import pytest

from ..conftest import ROOT, SHIPPED

sys.path.insert(0, str(ROOT / "benchmarks"))
import class_load  # noqa: E402

pytestmark = pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped en-zh checkpoint")


def test_a_few_students_work_without_errors_and_a_shared_sentence_is_computed_once(monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_MODEL_SLOTS", "2")
    report = class_load.measure(["--students", "4", "--sentences", "1", "--think", "0.3", "--arrival", "1"])
    assert report["errors"] == 0, report["first_errors"]
    assert report["served_s"]["sentence"]["n"] == 4 and report["served_s"]["tab"]["n"] == 4
    assert report["burst_different_computed"] == 4
    assert report["burst_identical_computed"] == 1  # four students, one computation


def test_long_texts_pasted_at_once_are_drawn_a_few_at_a_time(monkeypatch):
    # Before the bound, four 300-word beam-8 pages drawn side by side grew the server 5.3-5.7 times as much as
    # one page alone; with two drawing slots, about 3 times.
    monkeypatch.setenv("ATTENTION_EXPLORER_MODEL_SLOTS", "2")
    report = class_load.measure(["--heavy", "4", "--heavy-words", "300", "--beam", "8", "--settle", "3"])
    assert report["errors"] == 0, report["first_errors"]
    assert report["together_over_one"] < 4.2, report

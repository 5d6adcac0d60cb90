"""Issue 59: a session settles after a bounded number of reruns, whatever its client sends. A client that, like a
load tester, sends every widget value it ever set (the browser forgets a tabs widget's value once the tabs are
drawn anew) had the explorer's tabs chase themselves: each run opened the other tab and ran the script again,
without end, at 100 % CPU, growing by gigabytes, after the client had gone."""

from __future__ import annotations

import asyncio
import sys

from words import t

from ..conftest import ROOT
from .conftest import run_streamlit

sys.path.insert(0, str(ROOT / "benchmarks"))
from class_load import Student  # noqa: E402

MAPS = "view_tab_group_maps"


def open_tab(student: Student) -> str:
    """The label of the view tab the server last drew open."""
    tabs = student.widgets[MAPS][1].tab_container
    return student.tab_labels[MAPS][tabs.default_tab_index]


async def walk(url: str) -> list[tuple[str, str, list[str]]]:
    student = Student(url, timeout=30, forgets_redrawn_tabs=False)
    await student.connect()
    seen = []
    try:
        run = await student.rerun()
        seen.append(("open", open_tab(student), run.errors))
        for view in ("tab_cross", "tab_encoder", "tab_cross", "tab_decoder", "tab_encoder", "tab_cross"):
            label = t(view, "en")
            run = await student.rerun(**{MAPS: label})
            seen.append((label, open_tab(student), run.errors))
    finally:
        await student.close()
    return seen


def test_a_client_that_sends_every_value_it_ever_set_gets_each_tab_it_asks_for(tiny_checkpoint):
    with run_streamlit({"ATTENTION_EXPLORER_CHECKPOINTS": str(tiny_checkpoint.parent)}) as (url, _):
        seen = asyncio.run(walk(url))
    for asked, shown, errors in seen:
        assert not errors, (asked, errors)  # a run that never finished is "no answer within 30 s"
        assert asked in ("open", shown), seen

"""Issue 60: the command line is below the interface. `python -m model.translate --html` writes a handout in the
interface's words without importing Streamlit or anything of ui/."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..conftest import ROOT, SHIPPED

PROBE = """
import runpy, sys
sys.argv = ["model.translate", "--checkpoint", sys.argv[1], "Tom chases Jerry.", "--html", sys.argv[2], "--lang", "zh"]
try:
    runpy.run_module("model.translate", run_name="__main__")
except SystemExit as stop:
    assert not stop.code, stop.code
loaded = sorted(m for m in sys.modules if m == "streamlit" or m.startswith(("streamlit.", "ui.")) or m == "ui")
print("LOADED", loaded)
"""


@pytest.mark.checkpoint
@pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped en-zh checkpoint")
def test_the_command_lines_handout_needs_neither_streamlit_nor_the_interface(tmp_path):
    page = tmp_path / "tom.html"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(SHIPPED), str(page)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LOADED []" in done.stdout
    assert "交叉注意力" in page.read_text(encoding="utf-8")  # the page's words, in the interface language asked

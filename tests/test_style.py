"""The code keeps one style: ruff's lint rules and its formatter (pyproject.toml), checked by the test command."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_lint_rules_pass():
    result = ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_formatted():
    result = ruff("format", "--check", ".")
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout + result.stderr

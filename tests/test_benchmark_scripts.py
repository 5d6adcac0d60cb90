"""Every benchmark script still imports what it names: they are run by hand, months apart, against a codebase
that moves (model/train.py's split left score_run_epochs.py calling train.LANGUAGES, found only when a session
needed it)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def project_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of each `from model… / ui… / viz… / words import …` and `import model…` in a script."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in ("model", "ui", "viz", "words"):
                found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] in ("model", "ui", "viz", "words")]
    return found


def attributes_used(path: Path, alias: str) -> set[str]:
    """The attributes a script reads from a module it imported whole (`from model import train`: train.X)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == alias
    }


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_name_a_benchmark_script_imports_from_the_project_exists(script, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    for module_name, names in project_imports(script):
        module = importlib.import_module(module_name)
        for name in names:
            found = getattr(module, name, None)
            if found is None:  # a submodule not yet imported (`from model import train`)
                found = importlib.import_module(f"{module_name}.{name}")
            if type(found) is type(sys):  # a module imported whole: what the script reads of it
                missing = {a for a in attributes_used(script, name) if not hasattr(found, a)}
                assert not missing, f"{script.name}: {module_name}.{name} has no {sorted(missing)}"

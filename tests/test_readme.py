"""The README is a map (issue 60): short, every folder of the repository on it, every file it points to there,
and the numbers it and the guide state about a checkpoint are the checkpoint's own (issue 59: it named en-zh's
best word aligner as layer 4, where alignment.json, the app and its own table said layer 3)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from .conftest import ROOT

README = ROOT / "README.md"


def best_aligner(name: str) -> tuple[int, str]:
    rows = json.loads((ROOT / "checkpoints" / name / "alignment.json").read_text())["results"]
    best = min((r for r in rows if r["method"] == "attention"), key=lambda r: r["aer"])
    return best["layer"], str(best["head"])


@pytest.mark.parametrize("document", ["README.md", "docs/guide.md"])
def test_the_best_aligners_named_are_those_of_alignment_json(document):
    text = (ROOT / document).read_text(encoding="utf-8")
    claims = re.findall(r"(en-zh|en-de|zh-en): layer (\d+), (mean over heads|head \d+)", text.replace("\n  ", " "))
    assert {name for name, _, _ in claims} >= {"en-zh", "en-de"}
    for name, layer, head in claims:
        assert (int(layer), "mean" if head.startswith("mean") else head.split()[1]) == best_aligner(name), name


def test_the_readme_is_a_short_map_of_every_folder():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    if not tracked:
        pytest.skip("not a git checkout")
    folders = {path.split("/")[0] for path in tracked if "/" in path and not path.startswith(".")}
    mapped = set(re.findall(r"^\| `([\w.]+)/` \|", text, re.M))
    assert folders <= mapped, folders - mapped


def test_every_file_the_readme_points_to_exists():
    text = README.read_text(encoding="utf-8")
    linked = re.findall(r"\]\(([^)#]+)\)", text)
    named = re.findall(r"`((?:model|viz|ui|words|checkpoints|tests|benchmarks|docs|static)/[\w./-]+\.\w+)`", text)
    missing = [path for path in linked + named if not (ROOT / path).exists()]
    assert linked and named and missing == []


def test_every_link_in_the_docs_leads_to_a_file():
    """docs/ is one folder down: its links to the repository's files go up (moved from the README, they did not)."""
    docs = ROOT / "docs"
    missing = [
        (page.name, link)
        for page in docs.glob("*.md")
        for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text(encoding="utf-8"))
        if not (page.parent / link).exists()
    ]
    assert missing == []

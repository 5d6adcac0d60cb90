"""Numbers the README states about a checkpoint are the checkpoint's own (issue 59: it named en-zh's best word
aligner as layer 4, where alignment.json, the app and the README's own table said layer 3)."""

from __future__ import annotations

import json
import re

from .conftest import ROOT


def best_aligner(name: str) -> tuple[int, str]:
    rows = json.loads((ROOT / "checkpoints" / name / "alignment.json").read_text())["results"]
    best = min((r for r in rows if r["method"] == "attention"), key=lambda r: r["aer"])
    return best["layer"], str(best["head"])


def test_the_best_aligners_the_readme_names_are_those_of_alignment_json():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    claims = re.findall(r"(en-zh|en-de): layer (\d+), (mean over heads|head \d+)", readme.replace("\n  ", " "))
    assert {name for name, _, _ in claims} >= {"en-zh", "en-de"}
    for name, layer, head in claims:
        assert (int(layer), "mean" if head.startswith("mean") else head.split()[1]) == best_aligner(name), name

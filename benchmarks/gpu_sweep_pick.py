"""benchmarks/gpu_sweep.sh's last step: gather the runs' logs and scores, pick the two best weights, write each
as two float16 halves (every file under 16 MiB, what a device machine sends back).

Among weights whose Tatoeba test BLEU is at most 0.7 and everyday BLEU at most 1.5 below the shipped weights'
(the paired bootstrap is run afterwards, on the CPU: benchmarks/compare_checkpoints.py), the first pick has the
most must-translate rows right (app + lesson; ties by validation BLEU), the second the highest validation + test
BLEU of the rest: run K's rule took the two with most rows, and the weights best on every BLEU column stayed on the
GPU machine.

    python benchmarks/gpu_sweep_pick.py RUNS_DIR OUT_DIR a b c d e f

Join the halves again with `merge_halves` (one dict of weights, float16 as saved).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.training.loop import average_weights  # noqa: E402


def gather(runs: Path, variants: list[str]) -> tuple[str, list[dict]]:
    """Every run's log tail and metrics (one text), and every score line of score_run_epochs.py, tagged with its run."""
    log, lines = [], []
    for v in variants:
        for name in (f"{v}.log", f"{v}/metrics.jsonl"):
            p = runs / name
            log.append(f"==== {v}: {name}\n" + (p.read_text()[-6000:] if p.exists() else "(missing)\n"))
        p = runs / f"{v}.scores"
        if p.exists():
            lines += [{**json.loads(line), "variant": v} for line in p.read_text().splitlines() if line.startswith("{")]
    return "".join(log), lines


def rows_right(line: dict) -> int:
    return sum(int(line[k].split("/")[0]) for k in line if k.startswith("must_"))


def choose(lines: list[dict]) -> list[dict]:
    """The two score lines to send back (see the module's docstring); 'shipped' is the yardstick, never chosen."""
    shipped = next((d for d in lines if d["weights"] == "shipped"), None)
    candidates = [d for d in lines if d["weights"] != "shipped"]
    if shipped:
        near = [
            d
            for d in candidates
            if d["test_bleu"] >= shipped["test_bleu"] - 0.7 and d["everyday_bleu"] >= shipped["everyday_bleu"] - 1.5
        ]
        candidates = near or candidates
    if not candidates:
        return []
    most_rows = max(candidates, key=lambda d: (rows_right(d), d["valid_bleu"]))
    rest = [d for d in candidates if d is not most_rows]
    return [most_rows, *([max(rest, key=lambda d: d["valid_bleu"] + d["test_bleu"])] if rest else [])]


def averaged(runs: Path, line: dict) -> dict[str, torch.Tensor]:
    """The weights a score line names ("4+5": the mean of epochs 4 and 5), in float16."""
    files = [runs / line["variant"] / f"epoch{int(e):03d}.safetensors" for e in line["weights"].split("+")]
    return {k: t.half().contiguous() for k, t in average_weights(files).items()}


def write_halves(weights: dict[str, torch.Tensor], stem: Path, metadata: dict[str, str]) -> list[int]:
    """Two safetensors files of about equal size (the largest tensors first, each to the lighter half)."""
    halves: tuple[dict, dict] = ({}, {})
    sizes = [0, 0]
    for k in sorted(weights, key=lambda k: -weights[k].numel()):
        i = 0 if sizes[0] <= sizes[1] else 1
        halves[i][k] = weights[k]
        sizes[i] += weights[k].numel() * weights[k].element_size()
    for i, half in enumerate(halves):
        save_file(half, f"{stem}_{i}.safetensors", metadata=metadata)
    return sizes


def merge_halves(stem: Path) -> dict[str, torch.Tensor]:
    return {**load_file(f"{stem}_0.safetensors"), **load_file(f"{stem}_1.safetensors")}


def main(argv: list[str]) -> None:
    runs, out, variants = Path(argv[0]), Path(argv[1]), argv[2:]
    log, lines = gather(runs, variants)
    (out / "logs.txt").write_text(log)
    (out / "scores.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines))
    for rank, line in enumerate(choose(lines), start=1):
        meta = {"variant": line["variant"], "weights": line["weights"]}
        sizes = write_halves(averaged(runs, line), out / f"best{rank}", meta)
        print("picked", rank, meta, rows_right(line), line["valid_bleu"], sizes)


if __name__ == "__main__":
    main(sys.argv[1:])

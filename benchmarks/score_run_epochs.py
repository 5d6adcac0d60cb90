"""Score a training run's epoch weights, and averages of them, as the en-zh model card's lever tables do: the
must-translate rows (zh), the Tatoeba validation split (all 1,000), the everyday set and the Tatoeba
test split, greedy.

    python benchmarks/score_run_epochs.py runs/en-zh-nolex 1 2 1+2 shipped+1

Each argument is one set of weights: an epoch of the run folder (its epochNNN.safetensors), or several joined
by + (their average); "shipped" is checkpoints/en-zh's. The run must share the shipped model's tokenizers
(a run started with --init-from checkpoints/en-zh). One JSON line per argument.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from safetensors.torch import load_file  # noqa: E402

from model.checkpoint import apply_weights, load_checkpoint  # noqa: E402
from model.data import load_splits, read_everyday, read_must_translate  # noqa: E402
from model.evaluate import score, translate_corpus  # noqa: E402
from tests.model.test_must_translate import contains_in_order  # noqa: E402


def main(argv: list[str]) -> None:
    run, specs = Path(argv[0]), argv[1:]
    base = load_checkpoint(ROOT / "checkpoints" / "en-zh")
    model, source, target = base.model, base.source_tokenizer, base.target_tokenizer
    shipped = {k: v.clone() for k, v in model.state_dict().items() if k != "generator.weight"}  # tied
    rows = [r for r in read_must_translate() if r.language == "zh"]
    splits = load_splits("tatoeba-extra-en-zh")
    everyday, valid, test = read_everyday("zh"), splits.valid, splits.test
    for spec in specs:
        weights = [shipped if e == "shipped" else load_file(str(run / f"epoch{int(e):03d}.safetensors"))
                   for e in spec.split("+")]
        apply_weights(model, {k: sum(w[k].float() for w in weights) / len(weights) for k in weights[0]})
        model.eval()
        outputs = translate_corpus(model, source, target, [r.english for r in rows])
        right = [contains_in_order(o, r.words) for o, r in zip(outputs, rows)]
        v, e, t = (score(translate_corpus(model, source, target, [x.source for x in examples]), examples, "zh")
                   for examples in (valid, everyday, test))
        print(json.dumps({"weights": spec, "must": f"{sum(right)}/{len(right)}",
                          "valid_bleu": v["bleu"], "valid_chrf": v["chrf"], "everyday_bleu": e["bleu"],
                          "everyday_chrf": e["chrf"], "test_bleu": t["bleu"], "test_chrf": t["chrf"],
                          "wrong": [f"{r.english} -> {o}" for r, o, k in zip(rows, outputs, right) if not k]},
                         ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Score a training run's epoch weights, and averages of them, as the model cards' lever tables do: the
must-translate rows (of the run's languages), the validation split, the everyday set (an English source) and the
test split, greedy.

    python benchmarks/score_run_epochs.py runs/en-zh-nolex 1 2 1+2 shipped+1
    python benchmarks/score_run_epochs.py --corpus tatoeba-extra-ml-en-zh ~/runs/zh-ml-a 1 2
    python benchmarks/score_run_epochs.py --sets none ~/runs/zh-ml-a 1 2 2+3    # must-translate rows only

Each argument is one set of weights: an epoch of the run folder (its epochNNN.safetensors), or several joined
by + (their average); "shipped" is checkpoints/en-zh's. The run reads its own tokenizers (source.model,
target.model in its folder: the shipped ones, or the shipped ones extended by --extend-vocab); "shipped" can be
scored beside a run whose tokenizers are the shipped ones or extend them (the shipped weights then take the new
rows the run started with). The must-translate rows are counted by group (the sentences
the app offers, the lesson sentences); a corpus with machine-learning text is scored on its ml_valid split too.
One JSON line per argument.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from safetensors.torch import load_file  # noqa: E402

from model.checkpoint import apply_weights, load_checkpoint, weights_to_save  # noqa: E402
from model.data import load_splits, must_translate_rows, read_everyday  # noqa: E402
from model.evaluate import bleu_tokenizer_for, score, stutter_share, translate_corpus_ids, translated_right  # noqa: E402
from model.tokenizer import Tokenizer  # noqa: E402
from model.training.options import LANGUAGES  # noqa: E402
from model.training.vocabulary import extend_weights  # noqa: E402
from model.transformer import Transformer, TransformerConfig  # noqa: E402


def main(argv: list[str]) -> None:
    corpus, chosen = "tatoeba-extra-en-zh", None
    while argv[0].startswith("--"):
        if argv[0] == "--corpus":
            corpus, argv = argv[1], argv[2:]
        elif argv[0] == "--sets":  # comma-separated, or "none": the must-translate rows only
            chosen, argv = [] if argv[1] == "none" else argv[1].split(","), argv[2:]
        else:
            raise SystemExit(f"unknown option {argv[0]}")
    run, specs = Path(argv[0]), argv[1:]
    source_language, language = LANGUAGES[corpus]
    shipped_dir = ROOT / "checkpoints" / f"{source_language}-{language}"
    base = load_checkpoint(shipped_dir) if shipped_dir.exists() else None
    if (run / "source.model").exists():
        source, target = Tokenizer.load(run / "source.model"), Tokenizer.load(run / "target.model")
    else:
        source, target = base.source_tokenizer, base.target_tokenizer
    joint = (run / "source.model").exists() and (run / "source.model").read_bytes() == (
        run / "target.model"
    ).read_bytes()
    base_cfg = base.model.cfg if base else TransformerConfig(1, 1, norm_first=True)  # a run from scratch
    cfg = replace(
        base_cfg,
        src_vocab_size=source.vocab_size,
        tgt_vocab_size=target.vocab_size,
        share_source_target_embeddings=joint or base_cfg.share_source_target_embeddings,
    )
    model = Transformer(cfg)
    shipped = None
    if base is not None:
        same_shape = (source.vocab_size, target.vocab_size) == (
            base.source_tokenizer.vocab_size,
            base.target_tokenizer.vocab_size,
        )
        shipped = {k: v.clone() for k, v in weights_to_save(base.model).items()}
        if not same_shape:  # a run that extended the shipped vocabularies: the shipped weights as the run began
            try:
                extend_weights(base, model, source, target)
                shipped = {k: v.clone() for k, v in weights_to_save(model).items()}  # not the live rows
            except ValueError:
                shipped = None
    rows = [r for r in must_translate_rows(source_language) if r.language == language]
    splits = load_splits(corpus)
    sets = {
        "valid": splits.valid,
        "everyday": read_everyday(language, source_language=source_language),
        "test": splits.test,
        **{name: examples for name, examples in splits.domains.items() if name.endswith("_valid")},
    }
    if chosen is not None:
        sets = {name: examples for name, examples in sets.items() if name in chosen}

    def translate(examples: list[str]) -> tuple[list[str], list[list[int]]]:
        ids = translate_corpus_ids(model, source, examples)
        return [target.decode(i) for i in ids], ids

    for spec in specs:
        if "shipped" in spec.split("+") and shipped is None:
            raise SystemExit(f"{run} has other tokenizers than {shipped_dir}: 'shipped' cannot be scored with it")
        weights = [
            shipped if e == "shipped" else load_file(str(run / f"epoch{int(e):03d}.safetensors"))
            for e in spec.split("+")
        ]
        apply_weights(model, {k: sum(w[k].float() for w in weights) / len(weights) for k in weights[0]})
        model.eval()
        outputs, _ = translate([r.english for r in rows])
        right = [translated_right(o, r.words, language) for o, r in zip(outputs, rows)]
        line = {"weights": spec}
        for group in dict.fromkeys(r.group for r in rows):
            line[f"must_{group}"] = (
                f"{sum(k for k, r in zip(right, rows) if r.group == group)}/{sum(r.group == group for r in rows)}"
            )
        for name, examples in sets.items():
            hyps, ids = translate([x.source for x in examples])
            scores = score(hyps, examples, bleu_tokenizer_for(language))
            line.update(
                {
                    f"{name}_bleu": scores["bleu"],
                    f"{name}_chrf": scores["chrf"],
                    f"{name}_stutter": round(stutter_share(ids), 4),
                }
            )
            if "names_kept" in scores:  # the names sets: the share of translations that keep every name
                line[f"{name}_names_kept"] = scores["names_kept"]
        line["wrong"] = [f"{r.english} -> {o}" for r, o, k in zip(rows, outputs, right) if not k]
        print(json.dumps(line, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

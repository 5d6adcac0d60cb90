#!/usr/bin/env bash
# Recompute every table that ships with a checkpoint, after its weights change, in the order they depend on
# each other (faithfulness reads alignment.json's AER; the unsure threshold needs the hand judgements first):
#
#     bash benchmarks/recompute_checkpoint_tables.sh checkpoints/en-zh
#
# About 25 minutes for en-zh on two quiet cores (its machine-learning test greedy only: beam 4 on its long
# sentences would take hours). The unsure threshold is last and stops with an error when
# confidence_labels.tsv holds translations the new weights no longer write: judge those again by hand
# (python benchmarks/stale_judgements.py CK lists them), then run `python -m model.confidence --checkpoint CK`.
set -euo pipefail
ck=${1:?usage: recompute_checkpoint_tables.sh CHECKPOINT_DIR}
# eval.json: every set it holds, scored again with the same decodings (greedy, beamN) and length penalty; the
# sidebar shows the greedy and beam-4 scores. A set is read from the corpus its name says (en-de's Multi30k and
# Tatoeba test sets are not its training corpus's own interleaved test split).
python - "$ck" <<'PY'
import json, subprocess, sys, tempfile
from pathlib import Path
ck = Path(sys.argv[1])
SETS = {  # eval.json's name of a set -> model.evaluate's options that read it
    "tatoeba_en_zh_test": ["--split", "test"],
    "tatoeba_zh_en_test": ["--split", "test"],  # the same held-out pairs, Chinese into English
    "multi30k_test2016": ["--corpus", "multi30k-en-de", "--split", "test"],
    "tatoeba_en_de_test": ["--corpus", "tatoeba-en-de", "--split", "test"],
    "everyday": ["--split", "everyday"],
    "ml_test": ["--split", "ml_test"],  # en-zh: the held-out machine-learning pages
}
# a new checkpoint (no eval.json yet) is scored on its language pair's sets, greedy and beam 4
FIRST = {
    "zh-en": {"tatoeba_zh_en_test": ["greedy", "beam4"], "everyday": ["greedy", "beam4"], "ml_test": ["greedy"]},
}
if (ck / "eval.json").exists():
    old = json.loads((ck / "eval.json").read_text())
else:
    meta = json.loads((ck / "config.json").read_text())["metadata"]
    pair = f"{meta['source_language']}-{meta['target_language']}"
    if pair not in FIRST:
        sys.exit(f"{ck} has no eval.json and this script knows no sets for {pair}")
    old = {name: {d: {"length_penalty": 0.6} for d in decodings} for name, decodings in FIRST[pair].items()}
unknown = set(old) - set(SETS)
if unknown:
    sys.exit(f"eval.json names sets this script cannot read: {sorted(unknown)}")
new = {}
with tempfile.TemporaryDirectory() as tmp:
    for name, decodings in old.items():
        beams = [1 if d == "greedy" else int(d.removeprefix("beam")) for d in decodings]
        penalty = str(next(iter(decodings.values())).get("length_penalty", 0.6))
        lowercase = ["--lowercase"] if any("bleu_lowercase" in r for r in decodings.values()) else []
        out = Path(tmp) / f"{name}.json"
        subprocess.run(
            [sys.executable, "-m", "model.evaluate", "--checkpoint", str(ck), *SETS[name], "--beam", *map(str, beams),
             "--length-penalty", penalty, *lowercase, "--output", str(out)],
            check=True,
        )
        new[name] = json.loads(out.read_text())
(ck / "eval.json").write_text(json.dumps(new, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
PY
python -m model.probe --checkpoint "$ck" --split test --n 500
if [ -f "$ck/head_ablation.csv" ]; then python -m model.probe --checkpoint "$ck" --split test --ablate --n 200; fi
python -m model.align --checkpoint "$ck" --json "$ck/alignment.json"
python -m model.roles --checkpoint "$ck" --n 300
python -m model.faithfulness --checkpoint "$ck" --n 300 --ig-sentences 30
if [ -f "$ck/confidence_labels.tsv" ]; then python -m model.confidence --checkpoint "$ck"; fi
# The served Chinese font covers the vocabulary's characters (ui/cjk_font.py; needs Debian's fonts-noto-cjk).
noto=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
if grep -q '_language": "zh' "$ck/config.json"; then
  if [ -f "$noto" ]; then python -m ui.cjk_font --source "$noto"; else echo "apt-get install fonts-noto-cjk, then: python -m ui.cjk_font --source $noto"; fi
fi

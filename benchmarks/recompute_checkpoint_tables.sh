#!/usr/bin/env bash
# Recompute every table that ships with a checkpoint, after its weights change, in the order they depend on
# each other (faithfulness reads alignment.json's AER; the unsure threshold needs the hand judgements first):
#
#     bash benchmarks/recompute_checkpoint_tables.sh checkpoints/en-zh
#
# About 20 minutes for en-zh on two quiet cores. The unsure threshold is last and stops with an error when
# confidence_labels.tsv holds translations the new weights no longer write: judge those again by hand
# (python benchmarks/stale_judgements.py CK lists them), then run `python -m model.confidence --checkpoint CK`.
set -euo pipefail
ck=${1:?usage: recompute_checkpoint_tables.sh CHECKPOINT_DIR}
tmp=$(mktemp -d)
python -m model.evaluate --checkpoint "$ck" --split test --beam 1 4 --output "$tmp/test.json"
python -m model.evaluate --checkpoint "$ck" --split everyday --beam 1 4 --output "$tmp/everyday.json"
python - "$ck" "$tmp" <<'PY'
import json, sys
from pathlib import Path
ck, tmp = Path(sys.argv[1]), Path(sys.argv[2])
test_key = next(k for k in json.loads((ck / "eval.json").read_text()) if k != "everyday")  # e.g. tatoeba_en_zh_test
scores = {test_key: json.loads((tmp / "test.json").read_text()), "everyday": json.loads((tmp / "everyday.json").read_text())}
(ck / "eval.json").write_text(json.dumps(scores, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
PY
python -m model.probe --checkpoint "$ck" --split test --n 500
if [ -f "$ck/head_ablation.csv" ]; then python -m model.probe --checkpoint "$ck" --split test --ablate --n 200; fi
python -m model.align --checkpoint "$ck" --json "$ck/alignment.json"
python -m model.roles --checkpoint "$ck" --n 300
python -m model.faithfulness --checkpoint "$ck" --n 300 --ig-sentences 30
if [ -f "$ck/confidence_labels.tsv" ]; then python -m model.confidence --checkpoint "$ck"; fi
rm -r "$tmp"
# The served Chinese font covers the vocabulary's characters (ui/cjk_font.py; needs Debian's fonts-noto-cjk).
noto=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
if grep -q '"target_language": "zh' "$ck/config.json"; then
  if [ -f "$noto" ]; then python -m ui.cjk_font --source "$noto"; else echo "apt-get install fonts-noto-cjk, then: python -m ui.cjk_font --source $noto"; fi
fi

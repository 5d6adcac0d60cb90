#!/bin/bash
# The en-zh continuation sweep that made stage 7 (run K, the model card): six runs from checkpoints/en-zh at
# once on one GPU, each for MAX_MINUTES (its epoch passing them finished), every run's epochs and averages then
# scored as the model card's tables (benchmarks/score_run_epochs.py: must-translate rows, Tatoeba validation,
# everyday set, Tatoeba test, machine-learning validation), and the best two weights written to $OUT as float16
# halves (benchmarks/gpu_sweep_pick.py: each file under 16 MiB, what a device machine sends back).
#
#     bash benchmarks/gpu_sweep.sh cuda 4.3                        # reads ../shared/data (ATTENTION_EXPLORER_DATA)
#     DATA_TAR=data.tar.xz bash benchmarks/gpu_sweep.sh cuda 4.3   # a machine without it: tatoeba-en-zh,
#                                                                  # en-zh-extra, en-zh-ml packed with tar cJf
# On an H200 the six runs shared the GPU at about 50 s an epoch each (their validation decodes on the CPU), and the
# whole sweep took 441 s. Extra arguments go to every run (a test: cpu 0.05 --limit-train 300 --epochs 2).
set -u
cd "$(dirname "$0")/.."  # the repository: checkpoints/en-zh, benchmarks/
DEVICE=${1:-cuda}
MAXMIN=${2:-4.5}
shift 2 || true
EXTRA=("$@")
OUT=${OUT:-/tmp/gpu-sweep}
mkdir -p "$OUT" /tmp/data /tmp/runs
export PYTHONUNBUFFERED=1
if [ -n "${DATA_TAR:-}" ]; then
  export ATTENTION_EXPLORER_DATA=/tmp/data
  tar xJf "$DATA_TAR" -C /tmp/data
fi
DATA=${ATTENTION_EXPLORER_DATA:-$(cd .. && pwd)/shared/data}
export ATTENTION_EXPLORER_DATA=$DATA
PY=$(command -v python3 || command -v python)
T0=$(date +%s)
TRAIN_END=${TRAIN_END:-390}  # seconds after the start: training killed (the epochs written so far are kept)
SCORE_END=${SCORE_END:-530}  # scoring killed (its lines so far are kept), then the pick
{ nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv 2>/dev/null; "$PY" -c "import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())"; nproc; } >"$OUT/env.txt" 2>&1

BASE=(--corpus tatoeba-extra-ml-en-zh --data-dir "$DATA" --init-from checkpoints/en-zh --terms-every-epoch
  --capitalised-terms --names-every-epoch --name-copies 3 --lexicon-per-epoch 0 --sentences-per-city 10
  --warmup 200 --dropout 0.1 --bf16 --threads 2 --average-last 40 --epochs 40 --no-progress
  --save-every-minutes 1000 --device "$DEVICE" --max-minutes "$MAXMIN")
declare -A VARIANTS=(
  [a]="--lr-factor 0.1 --max-tokens 3000"
  [b]="--lr-factor 0.2 --max-tokens 3000"
  [c]="--lr-factor 0.1 --max-tokens 3000 --ml-repeat 2 --short-ml-repeat 2"
  [d]="--lr-factor 0.1 --max-tokens 3000 --subword-alpha 0.1"
  [e]="--lr-factor 0.3 --max-tokens 9000"
  [f]="--lr-factor 0.1 --max-tokens 3000 --lexicon-per-epoch 10000"
)
LIST=${VARIANT_LIST:-a b c d e f}
for v in $LIST; do
  (
    # shellcheck disable=SC2086
    timeout $((T0 + TRAIN_END - $(date +%s))) "$PY" -m model.train "${BASE[@]}" ${VARIANTS[$v]} "${EXTRA[@]}" --run-dir /tmp/runs/$v >/tmp/runs/$v.log 2>&1
    echo "train exit $? at $(( $(date +%s) - T0 )) s" >>/tmp/runs/$v.log
    # a run killed while writing an epoch's weights leaves that file unreadable: drop it
    "$PY" -c "import sys,glob,os
from safetensors.torch import load_file
for p in sorted(glob.glob('/tmp/runs/$v/epoch*.safetensors'))[-1:]:
    try: load_file(p)
    except Exception as e: print('dropping', p, e); os.remove(p)" >>/tmp/runs/$v.log 2>&1
    n=$(ls /tmp/runs/$v/epoch*.safetensors 2>/dev/null | wc -l)
    specs=()
    if [ "$n" -ge 1 ]; then
      last=$(ls /tmp/runs/$v/epoch*.safetensors | tail -1 | sed 's/.*epoch0*\([0-9]*\).safetensors/\1/')
      [ "$v" = a ] && specs+=(shipped)
      specs+=("$last")
      for k in 3 2 4; do
        if [ "$n" -ge "$k" ]; then
          s=$(seq $((last - k + 1)) "$last" | paste -sd+)
          specs+=("$s")
        fi
      done
      [ "$last" -ge 4 ] && specs+=("$((last / 2))")
      # two threads each (torch takes OMP_NUM_THREADS): six scorers share the machine's cores
      OMP_NUM_THREADS=2 timeout $((T0 + SCORE_END - $(date +%s))) "$PY" benchmarks/score_run_epochs.py \
        --corpus tatoeba-extra-ml-en-zh /tmp/runs/$v "${specs[@]}" >/tmp/runs/$v.scores 2>>/tmp/runs/$v.log
      echo "score exit $? at $(( $(date +%s) - T0 )) s" >>/tmp/runs/$v.log
    fi
  ) &
done
wait
"$PY" benchmarks/gpu_sweep_pick.py /tmp/runs "$OUT" $LIST
echo "all done at $(( $(date +%s) - T0 )) s"

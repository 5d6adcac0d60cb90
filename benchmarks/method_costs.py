"""What each probing method costs on one sentence, one thread: its whole result (compute) and one view's map
(view, layer 1 head 1 of cross-attention), beside the seconds it declares (model.attribute), which callers use
to decide what to compute ahead, on demand, or only when asked.

    python benchmarks/method_costs.py [--checkpoint checkpoints/en-zh] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from model import attribute  # noqa: E402
from model.checkpoint import load_checkpoint  # noqa: E402
from model.decode import translate  # noqa: E402

# 20 words, the length the declarations are stated for
SENTENCE = (
    "My teacher says that the children were playing football in the park near the old church all afternoon long today."
)


def seconds(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", default=str(Path(__file__).resolve().parents[1] / "checkpoints" / "en-zh"))
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    loaded = load_checkpoint(args.checkpoint)
    tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, SENTENCE)
    record = tr.record  # decoded with its Q/K/V: what every method reads
    print(f"{len(SENTENCE.split())} words, {len(tr.source_ids)} source and {len(tr.target_ids)} target pieces")
    print(f"{'method':22} {'declared':>9} {'compute':>9} {'one view':>9}")
    for name, method in attribute.METHODS.items():
        repeat = 1 if method.seconds > 5 else args.repeat
        whole = seconds(lambda: method.compute(loaded.model, record), repeat)
        view = seconds(
            lambda: method.view(loaded.model, record, "cross", 0, 0 if method.granularity == "head" else None), repeat
        )
        print(f"{name:22} {method.seconds:8.3f}s {whole:8.3f}s {view:8.3f}s")


if __name__ == "__main__":
    main()

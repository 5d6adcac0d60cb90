"""Train a translation Transformer.

    python -m model.train --corpus tatoeba-en-zh --run-dir runs/en-zh --export checkpoints/en-zh
    torchrun --nproc_per_node=2 -m model.train ...      # the same, DistributedDataParallel (gloo on CPU)

A run folder holds the tokenizers, ``state.pt`` (model + optimizer + schedule, written after every epoch, so a
killed run started again with the same command continues where it stopped), the weights of recent epochs for
checkpoint averaging, and ``metrics.jsonl`` (one line per epoch: losses, validation BLEU, timing). The code is in
model/training/, one module per concern.
"""

from __future__ import annotations

from .training.loop import main as _main


def main(argv=None) -> None:
    _main(argv, description=__doc__)


if __name__ == "__main__":
    main()

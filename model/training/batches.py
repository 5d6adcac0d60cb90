"""Batches: pairs of similar length packed up to a number of tokens, and one batch as the tensors a training
step reads (the decoder's input is the target shifted right behind <s>: teacher forcing)."""

from __future__ import annotations

import random

import torch

from ..teacher_forcing import pad_batch, teacher_forced_input
from ..tokenizer import EOS_ID


def make_batches(lengths: list[tuple[int, int]], max_tokens: int, seed: int) -> list[list[int]]:
    """Group example indices into batches of at most max_tokens padded tokens (on the longer side).

    Sorting by length keeps padding small; a little noise in the sort key and a shuffle of the batches,
    both seeded by epoch, vary the batches from epoch to epoch."""
    rng = random.Random(seed)
    order = sorted(range(len(lengths)), key=lambda i: (max(lengths[i]) + rng.random(), lengths[i]))
    batches, current, width = [], [], 0
    for i in order:
        new_width = max(width, *lengths[i])
        if current and new_width * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, new_width = [], max(lengths[i])
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(pairs: list[tuple[list[int], list[int]]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> src (batch, S) ending in </s>; tgt_in (batch, T) = <s> y; tgt_out (batch, T) = y </s>."""
    src = [s + [EOS_ID] for s, _ in pairs]
    outputs = [t + [EOS_ID] for _, t in pairs]
    return pad_batch(src), pad_batch([teacher_forced_input(o) for o in outputs]), pad_batch(outputs)

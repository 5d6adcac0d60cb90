"""The losses of a training step: the paper's label-smoothed cross-entropy, and the extra terms a run may add
(target-word dropout of the decoder's input, the omission contrast, repeat unlikelihood), each a function of
tensors that its own test checks on numbers worked by hand."""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from ..tokenizer import BOS_ID, PAD_ID, UNK_ID, Tokenizer
from ..transformer import DecoderOutput, EncoderOutput, Transformer
from .batches import collate


def drop_target_words(tgt_in: torch.Tensor, p: float, generator: torch.Generator) -> torch.Tensor:
    """The decoder's input with each piece but <s> and padding replaced by <unk> with probability p (word
    dropout on the target side, as in Sennrich et al. 2016's WMT systems). The targets it is scored on stay
    whole; only what the decoder may lean on is thinned."""
    drop = torch.rand(tgt_in.shape, generator=generator) < p
    drop &= (tgt_in != PAD_ID) & (tgt_in != BOS_ID)
    return tgt_in.masked_fill(drop, UNK_ID)


def loss_fn(logits: torch.Tensor, target: torch.Tensor, label_smoothing: float) -> torch.Tensor:
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=PAD_ID, label_smoothing=label_smoothing
    )


def omit_a_span(target: list[int], deletable: list[bool], rng: random.Random, longest: int = 3) -> list[int] | None:
    """A copy of target with one span of 1 to `longest` pieces left out, all of them words (not punctuation):
    the negative of the omission contrast (Yang et al. 2019, "Reducing Word Omission Errors in Neural Machine
    Translation: A Contrastive Learning Approach"). None when target has no such piece."""
    starts = [i for i, piece in enumerate(target) if deletable[piece]]
    if not starts:
        return None
    start = rng.choice(starts)
    end = start + 1
    span = rng.randint(1, longest)
    while end < len(target) and end - start < span and deletable[target[end]]:
        end += 1
    return target[:start] + target[end:]


def word_pieces(tokenizer: Tokenizer) -> list[bool]:
    """Per piece id: does it write a word (letters, digits, characters), not punctuation, a space or a control
    piece? The pieces the omission contrast may leave out."""
    processor = tokenizer.processor
    return [
        any(ch.isalnum() for ch in processor.id_to_piece(i))
        and not (processor.is_control(i) or processor.is_unknown(i))
        for i in range(tokenizer.vocab_size)
    ]


def sequence_log_probs(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """(batch,) the log-probability the model gives each whole target (the sum over its pieces, padding left
    out), without label smoothing: the score the omission contrast compares."""
    picked = torch.log_softmax(logits.float(), dim=-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return (picked * (target != PAD_ID)).sum(dim=-1)


def omission_hinge(full: torch.Tensor, omitted: torch.Tensor, margin: float) -> torch.Tensor:
    """max(0, margin - (log p(y|x) - log p(y with a word left out|x))), averaged: zero once the model prefers
    the whole translation to the one missing a word by `margin` nats, so it only pushes where it omits."""
    return torch.relu(margin - (full - omitted)).mean()


def omission_loss(
    model: Transformer,
    encoded: EncoderOutput,
    decoded: DecoderOutput | None,
    pairs: list[tuple[list[int], list[int]]],
    tgt_in: torch.Tensor,
    tgt_out: torch.Tensor,
    deletable: list[bool],
    rng: random.Random,
    margin: float,
    bf16: bool,
) -> torch.Tensor:
    """The omission contrast of one batch: its targets decoded again with a span left out (omit_a_span), on the
    batch's own encoder pass (only the decoder runs again), and omission_hinge between the two scores.

    `decoded` is the batch's decoder pass when it read the whole targets; None when it read them thinned
    (--target-word-dropout): the whole targets are then decoded again here, since a score with pieces hidden
    from the decoder is lower for that alone, and the hinge would push on every sentence."""
    rows = [r for r, (_, target) in enumerate(pairs) if any(deletable[piece] for piece in target)]
    if not rows:
        return tgt_out.new_zeros((), dtype=torch.float32)
    omitted = [(pairs[r][0], omit_a_span(pairs[r][1], deletable, rng)) for r in rows]
    _, neg_in, neg_out = (t.to(tgt_out.device) for t in collate(omitted))
    memory = EncoderOutput(encoded.memory[rows], encoded.src_mask[rows])
    with torch.autocast(device_type=tgt_out.device.type, dtype=torch.bfloat16, enabled=bf16):
        negative = model.decode(neg_in, memory)
        full_logits = model.decode(tgt_in[rows], memory).logits if decoded is None else decoded.logits[rows]
    full = sequence_log_probs(full_logits, tgt_out[rows])
    return omission_hinge(full, sequence_log_probs(negative.logits, neg_out), margin)


def repeat_unlikelihood(logits: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """-log(1 - p(the piece just written)) at every step whose true next piece is another one, averaged: token-level
    unlikelihood (Welleck et al. 2019) with one negative per step, the immediate repeat, so that a piece written
    once is not written again at once (the stutter of 方法方法方法) unless the target repeats it."""
    previous = tgt_in  # the decoder's input at step t is the piece written at step t - 1
    steps = (previous != tgt_out) & (tgt_out != PAD_ID) & (previous != BOS_ID)
    p_repeat = torch.softmax(logits.float(), dim=-1).gather(-1, previous.unsqueeze(-1)).squeeze(-1)
    penalty = -torch.log1p(-p_repeat.clamp(max=1 - 1e-6))
    return (penalty * steps).sum() / steps.sum().clamp(min=1)

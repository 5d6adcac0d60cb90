"""What-if runs of the trained model for the lessons: word order without positional encoding, and sentences of
different lengths in one padded batch. Each is an argument of the forward pass (``positional=False``) or a
different input; the shared model is never changed. (A third what-if, attention that cannot choose, is
``uniform_cross=True`` of ``decode.translate_hypotheses`` and ``decode.teacher_force``.)

Results are plain dataclasses of numpy arrays, with the measured differences that prove each point, so the app
shows what the model computed and says how exactly an identity holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .decode import encode_source, greedy_batch
from .teacher_forcing import Needs, pad_batch, run_batch
from .tokenizer import EOS_ID, PAD_ID, Tokenizer, group_pieces_into_words, is_punctuation, visible
from .transformer import AttentionOptions, Transformer

PAD_PIECE = "<pad>"


def word_units(pieces: list[str], language: str = "en") -> list[list[int]]:
    """The pieces of each word that can be swapped: words as the app groups them, with trailing punctuation
    ("cat" "." in "cat.") split off, so swapping two words leaves the punctuation where it was."""
    units = []
    for word in group_pieces_into_words(pieces, language):
        cut = len(word)
        while cut > 1 and is_punctuation(pieces[word[cut - 1]]):
            cut -= 1
        units.append(word[:cut])
        units.extend([i] for i in word[cut:])
    return units


def swap_permutation(units: list[list[int]], a: int, b: int) -> list[int]:
    """Positions of the sequence with units a and b swapped: new position i holds old position permutation[i]."""
    order = list(range(len(units)))
    order[a], order[b] = order[b], order[a]
    return [i for u in order for i in units[u]]


@dataclass
class WordOrder:
    """The encoder on a sentence and on the same pieces with two words swapped, with and without the positional
    encoding. positional (True/False) -> arrays; attention (layers, heads, src, src)."""

    pieces: list[str]
    swapped_pieces: list[str]
    swapped_text: str
    permutation: list[int]  # swapped_pieces[i] == pieces[permutation[i]]
    attention: dict[bool, np.ndarray]
    swapped_attention: dict[bool, np.ndarray]
    # Largest |swapped - original permuted| over every layer, head and cell (attention), and over every position
    # and feature of the encoder output (each word's representation).
    attention_difference: dict[bool, float]
    output_difference: dict[bool, float]
    output_size: float  # largest |encoder output| of the original, for scale


@torch.inference_mode()
def word_order(
    model: Transformer, source_tokenizer: Tokenizer, text: str, a: int, b: int, language: str = "en"
) -> WordOrder:
    """Swap word units a and b (indices into word_units of the sentence's pieces, in the source language) and run
    the encoder on both orders, with the positional encoding and without it."""
    ids, pieces, _ = encode_source(source_tokenizer, text, model.cfg.max_len)
    units = word_units(pieces, language)
    permutation = swap_permutation(units, a, b)
    swapped_ids = [ids[i] for i in permutation]
    attention, swapped_attention, attention_difference, output_difference = {}, {}, {}, {}
    output_size = 0.0
    index = torch.tensor(permutation)
    for positional in (True, False):
        options = AttentionOptions(need_weights=True)
        original = model.encode(torch.tensor([ids]), options, positional=positional)
        swapped = model.encode(torch.tensor([swapped_ids]), options, positional=positional)
        weights, swapped_weights = original.attention[0], swapped.attention[0]  # (layers, heads, src, src)
        permuted = weights[:, :, index][:, :, :, index]
        attention[positional] = weights.float().numpy()
        swapped_attention[positional] = swapped_weights.float().numpy()
        attention_difference[positional] = float((swapped_weights - permuted).abs().max())
        output_difference[positional] = float((swapped.memory[0] - original.memory[0, index]).abs().max())
        if positional:
            output_size = float(original.memory.abs().max())
    swapped_text = source_tokenizer.decode([i for i in swapped_ids if i != EOS_ID])
    return WordOrder(
        pieces,
        [pieces[i] for i in permutation],
        swapped_text,
        permutation,
        attention,
        swapped_attention,
        attention_difference,
        output_difference,
        output_size,
    )


@dataclass
class PaddedBatch:
    """Sentences of different lengths translated together in one padded batch, and each alone.

    Source rows are padded to the longest with <pad>; key_mask is True where a key is a real token. The
    attention arrays are the batch's: (sentences, layers, heads, queries, keys), queries and keys padded."""

    texts: list[str]
    source_pieces: list[list[str]]  # padded, each row as long as the longest
    source_ids: np.ndarray  # (sentences, src) with PAD_ID
    key_mask: np.ndarray  # (sentences, src) bool
    target_pieces: list[list[str]]  # decoder inputs <s> + output (padded), the decoder maps' axes
    target_key_mask: np.ndarray  # (sentences, tgt) bool
    encoder_attention: np.ndarray
    decoder_attention: np.ndarray
    cross_attention: np.ndarray
    translations: list[str]  # decoded in the batch
    alone_translations: list[str]  # each sentence decoded by itself
    padding_weight: dict[str, float]  # kind -> largest weight any query gives a padding key
    difference_from_alone: dict[str, float]  # kind -> largest |batch - alone| over each sentence's real cells


def _pad_pieces(rows: list[list[str]], width: int) -> list[list[str]]:
    return [row + [PAD_PIECE] * (width - len(row)) for row in rows]


@torch.inference_mode()
def padded_batch(
    model: Transformer, source_tokenizer: Tokenizer, target_tokenizer: Tokenizer, texts: list[str]
) -> PaddedBatch:
    """Translate texts greedily in one batch and one at a time; record the batch's attention (a teacher-forced
    pass on the batch's own outputs, the same pass that decoding ran) and compare it with each sentence alone."""
    sources = [encode_source(source_tokenizer, text, model.cfg.max_len) for text in texts]
    source_ids = [s[0] for s in sources]
    outputs = greedy_batch(model, source_ids)
    alone_outputs = [greedy_batch(model, [ids])[0] for ids in source_ids]
    written = [out + [EOS_ID] for out in outputs]  # position t predicts written piece t (its </s> after the last)

    def attention_of(src_rows, written_rows):
        passed = run_batch(model, src_rows, written_rows, Needs())
        encoded, decoded = passed.encoded, passed.decoded
        attention = {
            "encoder_self": encoded.attention,
            "decoder_self": decoded.self_attention,
            "cross": decoded.cross_attention,
        }
        return attention, passed.decoder_input

    batch, tgt = attention_of(source_ids, written)
    src = pad_batch(source_ids)
    key_mask, target_key_mask = (src != PAD_ID), (tgt != PAD_ID)
    keys = {"encoder_self": key_mask, "decoder_self": target_key_mask, "cross": key_mask}
    padding_weight = {
        kind: float(weights.masked_select(~keys[kind][:, None, None, None, :]).abs().max())
        if (~keys[kind]).any()
        else 0.0
        for kind, weights in batch.items()
    }

    difference = dict.fromkeys(batch, 0.0)
    for row, (ids, written_row) in enumerate(zip(source_ids, written)):
        alone, _ = attention_of([ids], [written_row])
        n_src, n_tgt = len(ids), len(written_row)
        shapes = {"encoder_self": (n_src, n_src), "decoder_self": (n_tgt, n_tgt), "cross": (n_tgt, n_src)}
        for kind, (q, k) in shapes.items():
            gap = (batch[kind][row, :, :, :q, :k] - alone[kind][0]).abs().max()
            difference[kind] = max(difference[kind], float(gap))

    width = src.size(1)
    target_pieces = [["<s>"] + [visible(p) for p in target_tokenizer.pieces(out)] for out in outputs]
    return PaddedBatch(
        texts=list(texts),
        source_pieces=_pad_pieces([s[1] for s in sources], width),
        source_ids=src.numpy(),
        key_mask=key_mask.numpy(),
        target_pieces=_pad_pieces(target_pieces, tgt.size(1)),
        target_key_mask=target_key_mask.numpy(),
        encoder_attention=batch["encoder_self"].float().numpy(),
        decoder_attention=batch["decoder_self"].float().numpy(),
        cross_attention=batch["cross"].float().numpy(),
        translations=[target_tokenizer.decode(out) for out in outputs],
        alone_translations=[target_tokenizer.decode(out) for out in alone_outputs],
        padding_weight=padding_weight,
        difference_from_alone=difference,
    )

"""A head's query-key space: the queries and keys one head computed, projected together into two dimensions.

Attention scores are dot products q·k / √d_k, so where a head's queries and keys lie relative to each other is
what decides its weights. The projection is principal component analysis fitted on the queries and keys of
the current sentence *and* of a held-out sample together (so the sentence is seen against what the head does
in general); it keeps only the share of the variance it reports, and distances in 2-D are not dot products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .decode import Translation, encode_source, greedy_batch_tokens, pad_batch
from .tokenizer import BOS_ID
from .transformer import AttentionOptions

POSITIONAL_SHARE = 0.9  # a head counts as positional here when this share of rows has its argmax at one offset


@dataclass
class QKSample:
    """Per kind: every head's queries and keys over all the sample's sentences, (layers, heads, points, d_k)."""

    queries: dict[str, np.ndarray]
    keys: dict[str, np.ndarray]
    sentences: int


@torch.inference_mode()
def sample_qk(loaded, sentences: list[str]) -> QKSample:
    """Greedy translations of the sample sentences; every head's queries and keys, stacked over sentences.

    Batched: one greedy run for all sentences, then one teacher-forced pass over the outputs with the queries and
    keys recorded, each sentence's padding cut off again (batching changes no number a sentence computes:
    tests/model/test_qk_space.py compares with translating each sentence alone; a model that wrote the padding
    id itself would read it as padding here, which a trained one never does)."""
    model = loaded.model
    sources = [encode_source(loaded.source_tokenizer, s.strip(), model.cfg.max_len)[0] for s in sentences]
    written = greedy_batch_tokens(model, sources)
    fed = [[BOS_ID] + tokens[:-1] for tokens in written]  # what the decoder read at each step that wrote one
    options = AttentionOptions(need_qkv=True)
    encoded = model.encode(pad_batch(sources), options)
    decoded = model.decode(pad_batch(fed), encoded, options, options)
    # (batch, layers, heads, positions, d_k) per kind and name, and the positions of each sentence that are real
    recorded = {"encoder_self": (encoded.qkv, [len(s) for s in sources], [len(s) for s in sources]),
                "decoder_self": (decoded.self_qkv, [len(f) for f in fed], [len(f) for f in fed]),
                "cross": (decoded.cross_qkv, [len(f) for f in fed], [len(s) for s in sources])}
    stacked: dict[str, dict[str, np.ndarray]] = {"q": {}, "k": {}}
    for kind, (qkv, query_lengths, key_lengths) in recorded.items():
        for name, lengths in (("q", query_lengths), ("k", key_lengths)):
            stacked[name][kind] = torch.cat([qkv[name][i, :, :, :n] for i, n in enumerate(lengths)],
                                            dim=2).float().numpy()  # (layers, heads, points, d_k)
    return QKSample(stacked["q"], stacked["k"], len(sentences))


@dataclass
class QKProjection:
    """2-D coordinates of the current sentence's queries and keys and of the sample's, from one PCA."""

    queries: np.ndarray  # (n_q, 2)
    keys: np.ndarray  # (n_k, 2)
    sample_queries: np.ndarray  # (m_q, 2)
    sample_keys: np.ndarray  # (m_k, 2)
    explained: tuple[float, float]  # share of the variance of all points each component keeps


def project(q: np.ndarray, k: np.ndarray, sample_q: np.ndarray, sample_k: np.ndarray) -> QKProjection:
    """PCA (by SVD of the centred points) fitted on the sentence's and the sample's queries and keys together."""
    points = np.concatenate([q, k, sample_q, sample_k]).astype(np.float64)
    mean = points.mean(0)
    _, singular, vt = np.linalg.svd(points - mean, full_matrices=False)
    variance = singular**2
    share = variance / variance.sum()
    basis = vt[:2].T  # (d_k, 2)
    to_2d = lambda x: ((np.asarray(x, dtype=np.float64) - mean) @ basis).astype(np.float32)  # noqa: E731
    return QKProjection(to_2d(q), to_2d(k), to_2d(sample_q), to_2d(sample_k),
                        (float(share[0]), float(share[1] if len(share) > 1 else 0.0)))


def dominant_offset(weights: np.ndarray, masked: np.ndarray | None = None) -> tuple[int, float]:
    """Over the rows of one self-attention map (queries, keys): the most common offset key − query of each row's
    strongest key, and the share of rows that have it. Rows that see a single key are left out."""
    n_q, n_k = weights.shape
    offsets = []
    for i in range(n_q):
        visible = n_k if masked is None else int((~masked[i]).sum())
        if visible > 1:
            offsets.append(int(np.argmax(weights[i])) - i)
    if not offsets:
        return 0, 0.0
    values, counts = np.unique(offsets, return_counts=True)
    best = int(np.argmax(counts))
    return int(values[best]), float(counts[best] / len(offsets))


def head_points(tr: Translation, kind: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """The current sentence's queries and keys of one head (0-based layer and head)."""
    return tr.qkv[kind]["q"][layer, head], tr.qkv[kind]["k"][layer, head]

"""A head's query-key space: the queries and keys one head computed, projected together into two dimensions.

Attention scores are dot products q·k / √d_k, so where a head's queries and keys lie relative to each other is
what decides its weights. The projection is principal component analysis fitted on the queries and keys of
the current sentence *and* of a held-out sample together (so the sentence is seen against what the head does
in general); it keeps only the share of the variance it reports, and distances in 2-D are not dot products.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .decode import Translation, encode_source, greedy_batch_tokens
from .progress import Progress
from .teacher_forcing import Needs, run_batch

SAMPLE_FILE = "qk_sample.txt"  # in a checkpoint: the English sentences of its held-out sample, one per line
SAMPLE_SENTENCES = 300  # the first sentences of the probe set (the test split head_stats.csv is computed on)
SAMPLE_POINTS = 1000  # queries and keys per head kept from them, drawn at random (all of them: ~4,000 each)


@dataclass
class QKSample:
    """Per kind: every head's queries and keys over the sample's sentences, (layers, heads, points, d_k); the
    same points for every head of a kind (a point is a position of one sentence)."""

    queries: dict[str, np.ndarray]
    keys: dict[str, np.ndarray]
    sentences: int


def read_sample_sentences(checkpoint: Path) -> list[str]:
    """The checkpoint's held-out sample sentences (empty when it ships none)."""
    path = Path(checkpoint) / SAMPLE_FILE
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def combine(parts: list[QKSample], max_points: int | None = SAMPLE_POINTS, seed: int = 0, dtype=np.float16) -> QKSample:
    """The samples of several batches as one, each kind's points drawn uniformly at random down to max_points
    (None: all of them; one draw for all heads of a kind; queries and keys drawn separately), kept in dtype: a
    whole probe set's points of 144 heads would take ~70 MB per checkpoint in float16, this ~18 MB."""
    rng = np.random.default_rng(seed)
    stacked: dict[str, dict[str, np.ndarray]] = {"q": {}, "k": {}}
    for name, attr in (("q", "queries"), ("k", "keys")):
        for kind in parts[0].queries:
            points = np.concatenate([getattr(part, attr)[kind] for part in parts], axis=2)
            n = points.shape[2]
            if max_points is not None and n > max_points:
                chosen = np.sort(rng.choice(n, size=max_points, replace=False))
            else:
                chosen = np.arange(n)
            stacked[name][kind] = np.ascontiguousarray(points[:, :, chosen]).astype(dtype)
    return QKSample(stacked["q"], stacked["k"], sum(part.sentences for part in parts))


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
    passed = run_batch(model, sources, written, Needs(attention=False, qkv=True))
    encoded, decoded = passed.encoded, passed.decoded
    fed = [len(tokens) for tokens in written]  # the decoder read one input per piece it wrote
    # (batch, layers, heads, positions, d_k) per kind and name, and the positions of each sentence that are real
    recorded = {
        "encoder_self": (encoded.qkv, [len(s) for s in sources], [len(s) for s in sources]),
        "decoder_self": (decoded.self_qkv, fed, fed),
        "cross": (decoded.cross_qkv, fed, [len(s) for s in sources]),
    }
    stacked: dict[str, dict[str, np.ndarray]] = {"q": {}, "k": {}}
    for kind, (qkv, query_lengths, key_lengths) in recorded.items():
        for name, lengths in (("q", query_lengths), ("k", key_lengths)):
            stacked[name][kind] = (
                torch.cat([qkv[name][i, :, :, :n] for i, n in enumerate(lengths)], dim=2).float().numpy()
            )  # (layers, heads, points, d_k)
    return QKSample(stacked["q"], stacked["k"], len(sentences))


def sample_qk_in_batches(
    loaded,
    sentences: list[str],
    lock,
    batch: int = 25,
    max_points: int = SAMPLE_POINTS,
    progress: Progress | None = None,
) -> QKSample:
    """sample_qk over batches, each inside `lock` (a context manager: the model's compute slots), so a server
    that serves a class meanwhile waits at most one batch (~0.4 s on one core) for a free slot. progress: told the
    sentences done, and checked before each batch (Cancelled: a stopping server does not wait for the rest)."""
    progress = progress or Progress()
    parts = []
    for start in range(0, len(sentences), batch):
        progress.report(start, len(sentences))
        progress.check()
        with lock:
            part = sample_qk(loaded, sentences[start : start + batch])
        parts.append(combine([part], max_points=None))  # float16 at once: the whole set is held until combined
    return combine(parts, max_points)


@dataclass
class QKProjection:
    """2-D coordinates of the current sentence's queries and keys and of the sample's, from one PCA."""

    queries: np.ndarray  # (n_q, 2)
    keys: np.ndarray  # (n_k, 2)
    sample_queries: np.ndarray  # (m_q, 2)
    sample_keys: np.ndarray  # (m_k, 2)
    explained: tuple[float, float]  # share of the variance of all points each component keeps


def project(q: np.ndarray, k: np.ndarray, sample_q: np.ndarray, sample_k: np.ndarray) -> QKProjection:
    """PCA fitted on the sentence's and the sample's queries and keys together: the top two eigenvectors of
    their d_k × d_k covariance. Computed with einsum and a small eigh, not an SVD of the ~2,000 × d_k points:
    NumPy's BLAS threads then stall behind torch's (0.7 s instead of 0.01 s while a model runs beside it)."""
    points = np.concatenate([q, k, sample_q, sample_k]).astype(np.float64)
    mean = points.mean(0)
    centred = points - mean
    variance, vectors = np.linalg.eigh(np.einsum("ni,nj->ij", centred, centred))  # ascending
    variance, vectors = np.clip(variance[::-1], 0.0, None), vectors[:, ::-1]
    share = variance / variance.sum()
    basis = vectors[:, :2]  # (d_k, 2)
    to_2d = lambda x: np.einsum("ni,ij->nj", np.asarray(x, dtype=np.float64) - mean, basis).astype(np.float32)  # noqa: E731
    return QKProjection(
        to_2d(q),
        to_2d(k),
        to_2d(sample_q),
        to_2d(sample_k),
        (float(share[0]), float(share[1] if len(share) > 1 else 0.0)),
    )


def head_points(tr: Translation, kind: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """The current sentence's queries and keys of one head (0-based layer and head)."""
    return tr.record.qkv[kind]["q"][layer, head], tr.record.qkv[kind]["k"][layer, head]


def main(argv=None):
    """Write a checkpoint's held-out sample: the first sentences of its probe set (the test split)."""
    from .cli import corpus_of, open_checkpoint
    from .data import DEFAULT_DATA_DIR, load_splits

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    p.add_argument("--n", type=int, default=SAMPLE_SENTENCES)
    args = p.parse_args(argv)
    loaded = open_checkpoint(args.checkpoint)
    examples = load_splits(corpus_of(loaded, None, args.data_dir), args.data_dir)["test"][: args.n]
    path = args.checkpoint / SAMPLE_FILE
    path.write_text("".join(e.source.strip() + "\n" for e in examples), encoding="utf-8")
    print(f"wrote {len(examples)} sentences to {path}")


if __name__ == "__main__":
    main()

"""Head roles measured, not eyeballed, over held-out sentences, each with its threshold stated:

- importance (Michel et al., 2019): |∂ loss / ∂ gate| of a gate multiplying each head's output, the loss being
  the references' cross-entropy under teacher forcing, summed over batches, then divided by each layer's L2
  norm as Michel et al. do; a head near 0 could be removed with little change to the loss (to first order).
- positional (Voita et al., 2019): the head's largest weight falls at one fixed offset from the query (−1, 0,
  +1) in at least POSITIONAL_SHARE of the queries (self-attention only; the decoder has no +1).
- rare word (Voita et al., 2019): the encoder head whose largest weight falls on the sentence's rarest piece
  most often, counted only if at least RARE_SHARE of the queries do so. Rarity: the source tokenizer's
  unigram log-probability of the piece (learnt from the training text, so it ranks pieces by frequency).
- alignment (model.align): the cross-attention heads of lowest AER on the gold set, at most ALIGNMENT_AER.

    python -m model.roles --checkpoint checkpoints/en-zh --n 300     # -> head_roles.csv
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .decode import translate
from .teacher_forcing import run_batch
from .tokenizer import EOS_ID
from .transformer import ATTENTION_KINDS as KINDS

# "Positional head", the one definition the app uses (the corpus table and the query-key view's caption alike):
# its largest weight at one of these offsets from the query in at least this share of the queries.
POSITIONAL_OFFSETS = (-1, 0, 1)
POSITIONAL_SHARE = 0.9
RARE_SHARE = 0.3
ALIGNMENT_AER = 0.5
ALIGNMENT_HEADS = 3
COLUMNS = [
    "kind",
    "layer",
    "head",
    "importance",
    "positional_offset",
    "positional_share",
    "rare_share",
    "aer",
    "role",
    "evidence",
]


def head_importance(model, pairs: list[tuple[list[int], list[int]]], batch_size: int = 32) -> dict[str, np.ndarray]:
    """pairs: (source ids without </s>, reference ids). -> kind -> (layers, heads) importance, each layer's
    scores divided by their L2 norm."""
    cfg = model.cfg
    gates = {kind: torch.ones(cfg.n_layers(kind), cfg.n_heads, requires_grad=True) for kind in KINDS}
    total = {kind: torch.zeros(cfg.n_layers(kind), cfg.n_heads) for kind in KINDS}
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        with torch.enable_grad():
            passed = run_batch(
                model, [s + [EOS_ID] for s, _ in batch], [r + [EOS_ID] for _, r in batch], head_mask=gates
            )
            loss = -passed.output_log_probs().sum()  # the cross-entropy of every reference piece
            grads = torch.autograd.grad(loss, [gates[k] for k in KINDS])
        for kind, g in zip(KINDS, grads):
            total[kind] += g.abs()
    out = {}
    for kind, t in total.items():
        norm = t.norm(dim=1, keepdim=True).clamp_min(1e-12)
        out[kind] = (t / norm).numpy()
    return out


def argmax_offsets(attention: np.ndarray) -> dict[int, np.ndarray]:
    """(layers, heads, n, n) self-attention -> offset -> (layers, heads): the share of queries whose largest
    weight is at key = query + offset, for each of POSITIONAL_OFFSETS."""
    n = attention.shape[-1]
    best = attention.argmax(-1)  # (layers, heads, n)
    queries = np.arange(n)
    return {k: (best == queries + k).mean(-1) for k in POSITIONAL_OFFSETS}


def positional_offset(weights: np.ndarray) -> tuple[int, float]:
    """One head's self-attention map on one sentence (queries, keys) -> (the offset of POSITIONAL_OFFSETS where
    most queries put their largest weight, the share that do); positional when the share ≥ POSITIONAL_SHARE."""
    shares = {k: float(v[0, 0]) for k, v in argmax_offsets(weights[None, None]).items()}
    offset = max(shares, key=shares.get)
    return offset, shares[offset]


def rare_piece_share(attention: np.ndarray, rarity: np.ndarray) -> np.ndarray:
    """(layers, heads, n, n) encoder self-attention and a rarity score per key (higher = rarer; -inf for keys
    that cannot be the rare word) -> (layers, heads) share of queries whose largest weight is on the rarest."""
    rarest = int(np.argmax(rarity))
    return (attention.argmax(-1) == rarest).mean(-1)


def offsets_and_rare_shares(loaded, sentences: list[str]) -> tuple[dict, list]:
    """Over the sentences' greedy translations: kind -> offset (-1, 0, +1) -> per sentence the (layers, heads)
    share of queries whose strongest key is at that offset; and per sentence each encoder head's weight on the
    rarest source word's piece."""
    model, src_tok, tgt_tok = loaded.model, loaded.source_tokenizer, loaded.target_tokenizer
    offsets = {kind: {k: [] for k in (-1, 0, 1)} for kind in ("encoder_self", "decoder_self")}
    rare = []
    piece_score = np.array([src_tok.processor.GetScore(i) for i in range(src_tok.vocab_size)])
    for sentence in sentences:
        tr = translate(model, src_tok, tgt_tok, sentence, need_qkv=False)
        for kind in offsets:
            attention = tr.attention(kind)
            if attention.shape[-1] < 3:
                continue
            for k, share in argmax_offsets(attention).items():
                offsets[kind][k].append(share)
        ids = np.array(tr.source_ids)
        rarity = -piece_score[ids]
        # not </s>, not punctuation or control pieces: the rare *word*
        rarity[[i for i, p in enumerate(tr.source_pieces) if p == "</s>" or not any(c.isalnum() for c in p)]] = -np.inf
        if np.isfinite(rarity).sum() >= 3:
            rare.append(rare_piece_share(tr.attention("encoder_self"), rarity))
    return offsets, rare


def measure_roles(loaded, sentences: list[str], references: list[str], alignment: dict | None = None) -> pd.DataFrame:
    model, src_tok, tgt_tok = loaded.model, loaded.source_tokenizer, loaded.target_tokenizer
    cfg = model.cfg
    offsets, rare = offsets_and_rare_shares(loaded, sentences)
    pairs = [
        (src_tok.encode(s)[: cfg.max_len - 1], tgt_tok.encode(r)[: cfg.max_len - 1])
        for s, r in zip(sentences, references)
    ]
    importance = head_importance(model, pairs)
    rare_mean = np.mean(rare, axis=0) if rare else np.zeros((cfg.n_encoder_layers, cfg.n_heads))
    # offset -> (layers, heads) share of queries, averaged over the sentences once (the decoder has no +1)
    offset_means = {
        kind: {k: np.mean(v, axis=0) for k, v in by_offset.items() if v and not (kind == "decoder_self" and k == 1)}
        for kind, by_offset in offsets.items()
    }
    aer = {}
    if alignment:
        for r in alignment["results"]:
            if r["method"] == "attention" and isinstance(r["head"], int):
                aer[(r["layer"], r["head"])] = r["aer"]
    best_aligners = sorted((v, k) for k, v in aer.items() if v <= ALIGNMENT_AER)[:ALIGNMENT_HEADS]
    aligners = {k for _, k in best_aligners}
    rare_head = np.unravel_index(np.argmax(rare_mean), rare_mean.shape) if rare else None
    rows = []
    for kind in KINDS:
        for layer in range(cfg.n_layers(kind)):
            for head in range(cfg.n_heads):
                row = {
                    "kind": kind,
                    "layer": layer + 1,
                    "head": head + 1,
                    "importance": float(importance[kind][layer, head]),
                    "positional_offset": None,
                    "positional_share": None,
                    "rare_share": None,
                    "aer": None,
                    "role": "",
                    "evidence": "",
                }
                roles, evidence = [], []
                if offset_means.get(kind):
                    shares = {k: float(m[layer, head]) for k, m in offset_means[kind].items()}
                    k, share = max(shares.items(), key=lambda kv: kv[1])
                    row.update(positional_offset=k, positional_share=round(share, 4))
                    if share >= POSITIONAL_SHARE:
                        roles.append("positional")
                        evidence.append(f"offset {k:+d}: {share:.0%}")
                if kind == "encoder_self" and rare:
                    share = float(rare_mean[layer, head])
                    row["rare_share"] = round(share, 4)
                    if rare_head == (layer, head) and share >= RARE_SHARE:
                        roles.append("rare-word")
                        evidence.append(f"rarest piece: {share:.0%}")
                if kind == "cross" and (layer + 1, head + 1) in aer:
                    row["aer"] = aer[(layer + 1, head + 1)]
                    if (layer + 1, head + 1) in aligners:
                        roles.append("alignment")
                        evidence.append(f"AER {row['aer']:.2f}")
                row["role"] = ", ".join(roles)
                row["evidence"] = "; ".join(evidence)
                rows.append(row)
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs["sentences"] = len(sentences)
    return frame


def main(argv=None):
    from .cli import open_checkpoint, positive_int
    from .data import load_splits

    p = argparse.ArgumentParser(description="Head importance and measured roles -> head_roles.csv")
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--n", type=positive_int, default=300)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    loaded = open_checkpoint(Path(args.checkpoint))
    examples = load_splits(loaded.metadata["corpus"]).test[: args.n]
    alignment_path = args.checkpoint / "alignment.json"
    alignment = json.loads(alignment_path.read_text()) if alignment_path.is_file() else None
    frame = measure_roles(loaded, [e.source for e in examples], [e.references[0] for e in examples], alignment)
    out = args.out or args.checkpoint / "head_roles.csv"
    frame.to_csv(out, index=False, float_format="%.4f")
    print(frame[frame["role"] != ""][["kind", "layer", "head", "role", "evidence"]].to_string(index=False))
    top = frame.sort_values("importance", ascending=False).head(8)
    print("most important heads:\n" + top[["kind", "layer", "head", "importance"]].to_string(index=False))
    print(f"{len(examples)} sentences -> {out}")


if __name__ == "__main__":
    main()

"""Training throughput: our Transformer in float32 and in bfloat16 autocast, against torch.nn.Transformer of the
same configuration, on the same batches; and whether bfloat16 trains as well on a short run.

    python benchmarks/training_speed.py --batches 12 --json benchmarks/results/training.json
    python benchmarks/training_speed.py --quality-steps 150      # + the short-run loss comparison

Speed: each model runs the same --batches training steps (forward, label-smoothed loss, backward, Adam step) on
batches of the en-zh training split built as model.train builds them (--max-tokens padded tokens); runs
alternate, fastest of --repeats; target tokens per second are reported with the ratios. torch.nn.Transformer gets
the same embeddings, positional encoding and output layer around it (pre-norm, ReLU, d_ff, dropout), so only the
encoder-decoder core differs; it returns no attention weights (the fast path), which our training path does
not return either (it uses scaled_dot_product_attention).

Quality: two copies of our model from the same initial weights train --quality-steps steps on the same batches,
one in float32, one under bfloat16 autocast; the script prints both training-loss curves (every 25 steps) and
the validation loss at the end.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import warnings
from pathlib import Path

import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.checkpoint import load_checkpoint  # noqa: E402
from model.data import load_splits, training_pairs  # noqa: E402
from model.tokenizer import PAD_ID  # noqa: E402
from model.training.batches import collate, make_batches  # noqa: E402
from model.training.loop import noam_rate  # noqa: E402
from model.training.losses import loss_fn  # noqa: E402
from model.transformer import (  # noqa: E402
    Embeddings,
    PositionalEncoding,
    Transformer,
    TransformerConfig,
    subsequent_mask,
)


class TorchTransformer(nn.Module):
    """torch.nn.Transformer with our embeddings, positional encoding and output layer around it."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.src_embed = Embeddings(cfg.src_vocab_size, cfg.d_model)
        self.tgt_embed = Embeddings(cfg.tgt_vocab_size, cfg.d_model)
        self.positional = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.dropout)
        warnings.filterwarnings("ignore", message="enable_nested_tensor is True")  # pre-norm: not used anyway
        self.core = nn.Transformer(
            cfg.d_model,
            cfg.n_heads,
            cfg.n_encoder_layers,
            cfg.n_decoder_layers,
            cfg.d_ff,
            cfg.dropout,
            batch_first=True,
            norm_first=cfg.norm_first,
        )
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        self.generator.weight = self.tgt_embed.lookup.weight

    def forward(self, src, tgt_in):
        causal = ~subsequent_mask(tgt_in.size(1))[0, 0]  # True = may NOT attend, as nn.Transformer wants
        out = self.core(
            self.positional(self.src_embed(src)),
            self.positional(self.tgt_embed(tgt_in)),
            tgt_mask=causal,
            src_key_padding_mask=src == PAD_ID,
            tgt_key_padding_mask=tgt_in == PAD_ID,
            memory_key_padding_mask=src == PAD_ID,
        )
        return self.generator(out)


def logits_of(model, src, tgt_in):
    out = model(src, tgt_in)
    return out[1].logits if isinstance(out, tuple) else out


def train_steps(model, batches, bf16: bool, losses: list | None = None) -> int:
    """Runs one training step per batch; returns the target tokens seen."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: noam_rate(s + 1, 256, 400, 0.6))
    model.train()
    tokens = 0
    for src, tgt_in, tgt_out in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = logits_of(model, src, tgt_in)
        loss = loss_fn(logits.float(), tgt_out, 0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        tokens += int((tgt_out != PAD_ID).sum())
        if losses is not None:
            losses.append(loss.item())
    return tokens


@torch.no_grad()
def validation_loss(model, batches) -> float:
    model.eval()
    total, count = 0.0, 0
    for src, tgt_in, tgt_out in batches:
        n = int((tgt_out != PAD_ID).sum())
        total += loss_fn(logits_of(model, src, tgt_in).float(), tgt_out, 0.0).item() * n
        count += n
    return total / count


def batches_of(pairs, source, target, max_tokens: int, count: int, seed: int):
    data = [(source.encode(s), target.encode(t)) for s, t in pairs]
    order = make_batches([(len(s) + 1, len(t) + 1) for s, t in data], max_tokens, seed=seed)
    return [collate([data[i] for i in batch]) for batch in order[:count]]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batches", type=int, default=12)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=2500)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quality-steps", type=int, default=0)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    torch.set_num_threads(args.threads)

    tokenizers = load_checkpoint(ROOT / "checkpoints" / "en-zh")
    source, target = tokenizers.source_tokenizer, tokenizers.target_tokenizer
    splits = load_splits("tatoeba-en-zh")
    pairs = training_pairs(splits.train)
    cfg = TransformerConfig(source.vocab_size, target.vocab_size, dropout=0.1, max_len=128, norm_first=True)
    batches = batches_of(pairs, source, target, args.max_tokens, args.batches, seed=7)

    torch.manual_seed(0)
    builders = {
        "ours_fp32": (lambda: Transformer(cfg), False),
        "ours_bf16": (lambda: Transformer(cfg), True),
        "torch_fp32": (lambda: TorchTransformer(cfg), False),
        "torch_bf16": (lambda: TorchTransformer(cfg), True),
    }
    best = {name: float("inf") for name in builders}
    tokens = 0
    for _ in range(args.repeats):
        for name, (build, bf16) in builders.items():
            model = build()
            train_steps(model, batches[:1], bf16)  # warm-up
            start = time.perf_counter()
            tokens = train_steps(model, batches, bf16)
            best[name] = min(best[name], time.perf_counter() - start)
    speed = {name: round(tokens / seconds) for name, seconds in best.items()}
    result = {
        "threads": args.threads,
        "batches": args.batches,
        "max_tokens": args.max_tokens,
        "target_tokens_per_second": speed,
        "ours_bf16_over_fp32": round(speed["ours_bf16"] / speed["ours_fp32"], 2),
        "ours_over_torch_fp32": round(speed["ours_fp32"] / speed["torch_fp32"], 2),
        "ours_over_torch_bf16": round(speed["ours_bf16"] / speed["torch_bf16"], 2),
    }
    print(json.dumps(result), flush=True)

    if args.quality_steps:
        quality_batches = batches_of(pairs, source, target, args.max_tokens, args.quality_steps, seed=11)
        valid = batches_of([(e.source, e.references[0]) for e in splits.valid], source, target, 4000, 10**6, seed=0)
        torch.manual_seed(1)
        start_model = Transformer(cfg)
        curves = {}
        for name, bf16 in (("fp32", False), ("bf16", True)):
            model = copy.deepcopy(start_model)
            losses: list[float] = []
            train_steps(model, quality_batches, bf16, losses)
            curves[name] = {
                "train_loss_every_25": [
                    round(sum(losses[i : i + 25]) / len(losses[i : i + 25]), 3) for i in range(0, len(losses), 25)
                ],
                "valid_loss": round(validation_loss(model, valid), 4),
            }
        result["quality"] = {"steps": args.quality_steps, **curves}
        print(json.dumps(result["quality"]), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

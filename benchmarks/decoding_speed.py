"""Our decoder against Hugging Face Marian, and the cost of capturing attention, at growing sentence lengths.

    pip install -r requirements-dev.txt   # with benchmarks/requirements.txt (transformers)
    python benchmarks/decoding_speed.py --lengths 5 10 20 40 80 --repeats 5 --json benchmarks/results/decoding.json

Both models are built with the same dimensions (6+6 layers, d_model 256, 8 heads, d_ff 1024, the shipped
en-zh tokenizers' vocabularies: ours 11,863 source and 9,466 target pieces, Marian one of 11,863; the tables in
benchmarks/README.md were measured with 4,000), random weights, float32, on the same number of threads, and
decode the same source ids to the same output length (the end token is never chosen: Marian gets
min_new_tokens, ours a -inf end-token bias), greedy and beam 4:
- ours: `decode.translate_hypotheses`, as the app calls it: every attention map and Q/K/V of every finished
  hypothesis, as numpy arrays;
- Marian: `MarianMTModel.generate(output_attentions=True, return_dict_in_generate=True)` (eager attention, the
  only kind that returns weights), the way a BertViz user gets a translation model's attention;
- ours without capture: `decode.beam_search(record=False)`, to price the capture itself.
Runs alternate (ours, Marian, ours-plain, ours, ...) so background load hits all alike; medians of --repeats.
Prints a table and writes JSON (per length and beam: seconds and the two ratios).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model import decode  # noqa: E402
from model.checkpoint import load_checkpoint  # noqa: E402
from model.tokenizer import EOS_ID  # noqa: E402
from model.transformer import Transformer, TransformerConfig  # noqa: E402

SHAPE = dict(d_model=256, n_heads=8, d_ff=1024, n_encoder_layers=6, n_decoder_layers=6)
WORDS = (
    "the teacher gave every student in our small village school a new book about the history of music "
    "and science before the long summer holiday began"
).split()


def our_model(source_vocab: int, target_vocab: int) -> Transformer:
    """Random weights of the shipped shape; its output layer as wide as the target tokenizer, whose pieces the
    translation's record names (the en-zh vocabularies differ: 11,863 source, 9,466 target pieces)."""
    torch.manual_seed(0)
    model = Transformer(
        TransformerConfig(source_vocab, target_vocab, dropout=0.0, max_len=128, norm_first=True, **SHAPE)
    ).eval()
    with torch.no_grad():
        model.generator.bias[EOS_ID] = float("-inf")  # never ends: decodes to the length limit
    return model


def marian_model(vocab: int):
    from transformers import MarianConfig, MarianMTModel

    torch.manual_seed(0)
    config = MarianConfig(
        vocab_size=vocab,
        d_model=SHAPE["d_model"],
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=SHAPE["d_ff"],
        decoder_ffn_dim=SHAPE["d_ff"],
        max_position_embeddings=256,
        pad_token_id=0,
        eos_token_id=EOS_ID,
        decoder_start_token_id=2,
        forced_eos_token_id=None,
        activation_function="relu",
        scale_embedding=True,
        share_encoder_decoder_embeddings=False,
        attn_implementation="eager",
        dropout=0.0,
    )
    return MarianMTModel(config).eval()


@torch.no_grad()
def marian_translate(marian, ids: list[int], beam: int, steps: int):
    """Marian's generate with every attention map, to exactly `steps` output pieces."""
    return marian.generate(
        torch.tensor([ids]),
        num_beams=beam,
        max_new_tokens=steps,
        min_new_tokens=steps,
        do_sample=False,
        output_attentions=True,
        return_dict_in_generate=True,
    )


def sentence_of(tokenizer, pieces: int) -> str:
    """Text that the tokenizer cuts into exactly `pieces` pieces (+ </s>), from everyday words."""
    words: list[str] = []
    i = 0
    while len(tokenizer.encode(" ".join(words))) < pieces - 1:
        words.append(WORDS[i % len(WORDS)])
        i += 1
    text = " ".join(words)
    while len(tokenizer.encode(text)) > pieces - 1:
        text = text[:-1]
    return text


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lengths", type=int, nargs="+", default=[5, 10, 20, 40, 80], help="source pieces, with </s>")
    p.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-marian", action="store_true", help="only ours (no transformers installed)")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    torch.set_num_threads(args.threads)

    tokenizers = load_checkpoint(ROOT / "checkpoints" / "en-zh")
    source_tok, target_tok = tokenizers.source_tokenizer, tokenizers.target_tokenizer
    ours = our_model(source_tok.vocab_size, target_tok.vocab_size)
    # Marian has one vocabulary for both sides: wide enough for every source id
    marian = None if args.no_marian else marian_model(max(source_tok.vocab_size, target_tok.vocab_size))

    results = []
    for n in args.lengths:
        text = sentence_of(source_tok, n)
        ids = decode.encode_source(source_tok, text, ours.cfg.max_len)[0]
        steps = decode.max_output_length(ours, len(ids))
        for beam in args.beams:

            def run_ours():
                decode.translate_hypotheses(ours, source_tok, target_tok, text, beam_size=beam)

            def run_plain():
                with torch.no_grad():
                    decode.beam_search(ours, ids, beam, max_len=steps)

            def run_marian():
                marian_translate(marian, ids, beam, steps)

            runs = {"ours": run_ours, "ours_no_capture": run_plain}
            if marian is not None:
                runs["marian"] = run_marian
            for fn in runs.values():
                fn()  # warm-up
            times: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(args.repeats):
                for name, fn in runs.items():
                    times[name].append(timed(fn))
            row = {
                "source_pieces": len(ids),
                "output_steps": steps,
                "beam": beam,
                **{f"{name}_s": round(statistics.median(t), 4) for name, t in times.items()},
            }
            row["capture_overhead"] = round(row["ours_s"] / row["ours_no_capture_s"] - 1, 3)
            if marian is not None:
                row["ours_over_marian"] = round(row["ours_s"] / row["marian_s"], 3)
            results.append(row)
            print(json.dumps(row), flush=True)

    print("\n| source pieces | output steps | beam | ours (s) | Marian (s) | ours / Marian | capture overhead |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['source_pieces']} | {r['output_steps']} | {r['beam']} | {r['ours_s']:.3f} | "
            f"{r.get('marian_s', float('nan')):.3f} | {r.get('ours_over_marian', float('nan')):.2f} | "
            f"{r['capture_overhead']:+.0%} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"threads": args.threads, "repeats": args.repeats, "results": results}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()

"""The training loop of `python -m model.train`: a run folder that resumes where it stopped, the paper's
learning-rate schedule, one epoch of batches (in one process or several under torchrun), validation after every
epoch, and the export of the final (averaged) checkpoint.

A run folder holds the tokenizers, ``state.pt`` (model + optimizer + schedule, written after every epoch and every
--save-every-minutes inside one, so a killed run started again with the same command continues where it stopped),
the weights of recent epochs for checkpoint averaging, and ``metrics.jsonl`` (one line per epoch: losses,
validation BLEU, timing).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
from pathlib import Path

import sentencepiece as spm
import torch
import torch.distributed as dist
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from ..checkpoint import apply_weights, load_checkpoint, save_checkpoint, weights_to_save
from ..data import load_splits, sentence_initial, training_pairs
from ..evaluate import bleu_tokenizer_for, score, translate_corpus
from ..tokenizer import PAD_ID, Tokenizer
from ..transformer import Transformer, TransformerConfig, count_parameters
from .batches import collate, make_batches
from .losses import drop_target_words, loss_fn, omission_loss, repeat_unlikelihood, word_pieces
from .options import LANGUAGES, bf16_is_native, parse_args
from .vocabulary import (
    check_vocabulary_options,
    extend_weights,
    extends_vocabulary,
    model_shape,
    prepare_tokenizers,
    starting_weights,
    transfer_weights,
)

Encoded = list[tuple[list[int], list[int]]]


def noam_rate(step: int, d_model: int, warmup: int, factor: float) -> float:
    """Section 5.3: lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), times a factor."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def average_weights(paths: list[Path | dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Checkpoint averaging (Section 6.1): the mean of the weights saved at the last few epochs (each a file, or
    weights already loaded: the --init-from weights with --average-with-init)."""
    total = None
    for path in paths:
        weights = path if isinstance(path, dict) else load_file(str(path))
        if total is None:
            total = {k: v.double() for k, v in weights.items()}
        else:
            for k, v in weights.items():
                total[k] += v.double()
    return {k: (v / len(paths)).float() for k, v in total.items()}


class Run:
    """Everything about one training run that lives in its folder."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.state = directory / "state.pt"
        self.metrics = directory / "metrics.jsonl"
        self.source_spm = directory / "source.model"
        self.target_spm = directory / "target.model"

    def epoch_weights(self, epoch: int) -> Path:
        return self.dir / f"epoch{epoch:03d}.safetensors"

    def read_metrics(self) -> list[dict]:
        if not self.metrics.exists():
            return []
        return [json.loads(line) for line in self.metrics.read_text().splitlines() if line.strip()]


def setup_distributed() -> tuple[int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group(backend="gloo")  # processes on CPU cores (--device cuda is one process)
        return dist.get_rank(), world
    return 0, 1


def barrier(world: int):
    if world > 1:
        dist.barrier()


def check_options(args: argparse.Namespace, device: torch.device, world: int) -> None:
    """Exit, saying why, on options this machine or this launch cannot run."""
    if args.average_with_init and not args.average_epochs:
        sys.exit("--average-with-init adds the --init-from weights to an --average-epochs average: name the epochs")
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: this machine has no CUDA GPU that torch can use; train with --device cpu")
    if args.bf16 and device.type == "cpu" and not bf16_is_native():
        sys.exit(
            f"--bf16: this CPU ({torch.backends.cpu.get_cpu_capability()}) has no native bfloat16, so "
            "autocast would emulate it about 20x slower than float32; train without --bf16"
        )
    if world > 1 and args.omission_margin:
        sys.exit("--omission-margin trains in one process (its second decoder pass bypasses DistributedDataParallel)")
    if world > 1 and device.type != "cpu":
        sys.exit("--device cuda trains in one process (torchrun's processes share the CPU cores)")


def load_training_data(args: argparse.Namespace):
    """-> (the corpus's splits, its training pairs, the terms a run may add every epoch)."""
    splits = load_splits(
        args.corpus,
        args.data_dir,
        name_copies=args.name_copies,
        ml_repeat=args.ml_repeat,
        city_copies=args.city_copies,
        mined_cities=args.mined_cities,
        sentences_per_city=args.sentences_per_city,
        short_ml_repeat=args.short_ml_repeat,
        machine_translated_repeat=args.machine_translated_repeat,
        added_ml_repeat=args.added_ml_repeat,
        apposed_name_copies=args.apposed_names,
        language_copies=args.language_copies,
        two_name_copies=args.two_name_copies,
        unlisted_name_sentences=args.unlisted_name_sentences,
        all_unlisted_names=args.all_unlisted_names,
        core_word_repeat=args.core_word_repeat,
    )
    pairs = training_pairs(splits.train)
    if args.limit_train:
        pairs = pairs[: args.limit_train]
    terms = splits.terms + (sentence_initial(splits.terms) if args.capitalised_terms else [])
    return splits, pairs, terms


def epoch_pairs(args, splits, pairs, terms, source_tok: Tokenizer, target_tok: Tokenizer, epoch: int) -> Encoded:
    """The pairs of one epoch as piece ids: the training pairs, a draw of the dictionary (its own seed per epoch),
    the names and terms where asked; cut by subword sampling where --subword-alpha asks (the same cuts again when a
    run resumes); pairs too long for --max-len left out."""
    if args.subword_alpha:
        spm.set_random_generator_seed(args.seed * 1000 + epoch)
        cut = lambda tok, text: tok.sample(text, args.subword_alpha)  # noqa: E731
    else:
        cut = lambda tok, text: tok.encode(text)  # noqa: E731
    chosen = pairs
    if args.lexicon_per_epoch and splits.lexicon:
        draw = random.Random(args.seed * 1000 + epoch).sample(
            splits.lexicon, min(args.lexicon_per_epoch, len(splits.lexicon))
        )
        chosen = pairs + draw
    if args.names_every_epoch:
        chosen = chosen + splits.names
    if args.terms_every_epoch:
        chosen = chosen + terms
    encoded = ((cut(source_tok, s), cut(target_tok, t)) for s, t in chosen)
    return [(s, t) for s, t in encoded if len(s) + 1 <= args.max_len and len(t) + 1 <= args.max_len]


def build_model(args: argparse.Namespace, initial, source_tok: Tokenizer, target_tok: Tokenizer, rank: int):
    """The run's Transformer: the shape the options give, or --init-from's with its weights (rows moved to new
    tokenizers, or grown for extended ones)."""
    cfg = TransformerConfig(
        src_vocab_size=source_tok.vocab_size,
        tgt_vocab_size=target_tok.vocab_size,
        d_model=args.d_model,
        n_heads=args.heads,
        d_ff=args.d_ff,
        n_encoder_layers=args.layers,
        n_decoder_layers=args.layers,
        dropout=args.dropout,
        max_len=args.max_len,
        norm_first=args.norm_first,
        share_source_target_embeddings=args.joint_vocab,
    )
    extending = extends_vocabulary(args)
    if initial:
        shape = model_shape(initial.model.cfg)
        if args.new_tokenizers or extending:
            shape.update(src_vocab_size=source_tok.vocab_size, tgt_vocab_size=target_tok.vocab_size)
        if args.new_tokenizers:
            shape.update(share_source_target_embeddings=args.joint_vocab)
        cfg = TransformerConfig(**{**shape, "dropout": args.dropout, "max_len": args.max_len})
    torch.manual_seed(args.seed)
    model = Transformer(cfg)
    if initial and args.new_tokenizers:
        shared = transfer_weights(initial, model, source_tok, target_tok)
        if rank == 0:
            print(
                f"warm start from {args.init_from}: embedding rows copied for {shared[0]} source and {shared[1]} "
                "target pieces"
            )
    elif initial and extending:
        added = extend_weights(initial, model, source_tok, target_tok)
        if rank == 0:
            print(f"warm start from {args.init_from}: {added[0]} source and {added[1]} target pieces added")
    elif initial:
        apply_weights(model, weights_to_save(initial.model))
    return model


class Training:
    """One run in progress: its model, optimizer and schedule, where it stands (epoch, batches done, time), and
    the state a save writes and a resume reads."""

    def __init__(self, args: argparse.Namespace, run: Run, model: Transformer, device: torch.device, world: int):
        self.args, self.run, self.model, self.device, self.world = args, run, model, device, world
        self.rank = dist.get_rank() if world > 1 else 0
        model.to(device)  # before the optimizer, whose state (also a resumed one) then lives beside the weights
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        self.schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: noam_rate(step + 1, model.cfg.d_model, args.warmup, args.lr_factor)
        )
        self.start_epoch, self.partial, elapsed_before = 1, None, 0.0
        if run.state.exists():
            elapsed_before = self.resume()
        self.trainable = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
        self.started = time.time() - elapsed_before
        self.steps_this_call = 0

    def resume(self) -> float:
        """Load the saved state; -> the seconds the run had trained before."""
        state = torch.load(self.run.state, map_location="cpu", weights_only=True)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.schedule.load_state_dict(state["schedule"])
        torch.set_rng_state(state["rng"])
        if self.device.type == "cuda" and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"])
        self.start_epoch, self.partial = state["epoch"] + 1, state.get("partial")
        if self.rank == 0:
            within = f", {self.partial['batches_done']} batches into epoch {self.start_epoch}" if self.partial else ""
            print(f"resuming {self.run.dir} after epoch {state['epoch']}{within}")
            # A run killed after logging an epoch but before saving its state repeats that epoch: drop its line.
            kept = [m for m in self.run.read_metrics() if m["epoch"] <= state["epoch"]]
            self.run.metrics.write_text("".join(json.dumps(m) + "\n" for m in kept))
        return state["elapsed"]

    def save_state(self, epoch_done: int, partial: dict | None = None) -> None:
        """The resumable state, written last and atomically: a run killed mid-write resumes from the previous one.
        partial: how far into the next epoch it got (batches done, their loss), for a save inside an epoch."""
        tmp = self.run.state.with_suffix(".tmp")
        torch.save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "schedule": self.schedule.state_dict(),
                "rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state() if self.device.type == "cuda" else None,  # dropout's, on a GPU
                "epoch": epoch_done,
                "elapsed": time.time() - self.started,
                "partial": partial,
                "args": {k: str(v) for k, v in vars(self.args).items()},
            },
            tmp,
        )
        tmp.replace(self.run.state)

    def step(self, data: Encoded, batch: list[int], batch_seed: int, deletable) -> tuple[torch.Tensor, float, int]:
        """One optimizer step on one batch -> (the loss it minimised, its cross-entropy summed over tokens, tokens)."""
        args = self.args
        src, tgt_in, tgt_out = collate([data[i] for i in batch])
        # what the decoder reads; tgt_in stays whole (repeat_unlikelihood asks what the previous piece was)
        decoder_in = tgt_in
        if args.target_word_dropout:
            generator = torch.Generator().manual_seed(batch_seed)
            decoder_in = drop_target_words(tgt_in, args.target_word_dropout, generator)
        src, tgt_in, tgt_out, decoder_in = (t.to(self.device) for t in (src, tgt_in, tgt_out, decoder_in))
        with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=args.bf16):
            encoded, decoded = self.trainable(src, decoder_in)
        loss = cross_entropy = loss_fn(decoded.logits.float(), tgt_out, args.label_smoothing)
        if args.repeat_unlikelihood:
            loss = loss + args.repeat_unlikelihood * repeat_unlikelihood(decoded.logits, tgt_in, tgt_out)
        if args.omission_margin:
            rng = random.Random(batch_seed)
            loss = loss + args.omission_weight * omission_loss(
                self.model,
                encoded,
                None if args.target_word_dropout else decoded,  # the contrast compares whole targets only
                [data[i] for i in batch],
                tgt_in,
                tgt_out,
                deletable,
                rng,
                args.omission_margin,
                args.bf16,
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), args.clip)
        self.optimizer.step()
        self.schedule.step()
        tokens = int((tgt_out != PAD_ID).sum())
        return loss, cross_entropy.item() * tokens, tokens  # train_loss stays the cross-entropy across runs

    def train_epoch(self, epoch: int, data: Encoded, deletable) -> dict | None:
        """One epoch's batches (the rest of it, for a run resumed inside it) -> its loss, tokens and start time;
        None when --stop-after-steps stopped it."""
        args, world, rank = self.args, self.world, self.rank
        self.model.train()
        lengths = [(len(s) + 1, len(t) + 1) for s, t in data]
        batches = make_batches(lengths, args.max_tokens, seed=args.seed * 1000 + epoch)
        batches = batches[: len(batches) // world * world][rank::world]  # equal share per process
        # A run resumed inside an epoch skips the batches it already trained on (the batches are the same: they
        # are drawn from a seed of the epoch) and carries on their loss and time.
        partial = self.partial
        done = partial["batches_done"] if partial else 0
        total_loss, total_tokens = (partial["loss"], partial["tokens"]) if partial else (0.0, 0)
        epoch_start = time.time() - (partial["seconds"] if partial else 0.0)
        self.partial, last_save = None, time.time()
        quiet = rank != 0 or args.no_progress
        bar = tqdm(desc=f"epoch {epoch}", disable=quiet, mininterval=5, initial=done, total=len(batches))
        for b, batch in enumerate(batches[done:], start=done):
            # What is drawn for a batch (pieces dropped, spans left out) comes from its own seed: a resumed run
            # draws the same.
            loss, batch_loss, tokens = self.step(data, batch, args.seed * 1_000_003 + epoch * 10_007 + b, deletable)
            total_loss, total_tokens = total_loss + batch_loss, total_tokens + tokens
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.3f}", lr=f"{self.schedule.get_last_lr()[0]:.2e}")
            self.steps_this_call += 1
            last = b + 1 == len(batches)
            stop = args.stop_after_steps is not None and self.steps_this_call >= args.stop_after_steps and not last
            if not last and (stop or time.time() - last_save >= args.save_every_minutes * 60):
                if rank == 0:
                    done_so_far = {"batches_done": b + 1, "loss": total_loss, "tokens": total_tokens}
                    self.save_state(epoch - 1, {**done_so_far, "seconds": time.time() - epoch_start})
                barrier(world)
                last_save = time.time()
            if stop:
                bar.close()
                return None
        bar.close()
        return {"loss": total_loss, "tokens": total_tokens, "started": epoch_start}

    def end_epoch(self, epoch: int, trained: dict, splits, valid_pairs, tokenizers, tgt_lang: str) -> None:
        """Validate, log the epoch's line, keep its weights (and drop those averaging no longer needs), save."""
        args, run = self.args, self.run
        source_tok, target_tok = tokenizers
        # Validation decodes with model.decode, which builds its tensors on the CPU: a CPU copy off a GPU.
        on_cpu = self.model if self.device.type == "cpu" else copy.deepcopy(self.model).to("cpu")
        record = {
            "epoch": epoch,
            "step": self.schedule.last_epoch,
            "train_loss": round(trained["loss"] / max(trained["tokens"], 1), 4),
            **validate(on_cpu, valid_pairs, splits.valid, source_tok, target_tok, tgt_lang, args),
            **{
                f"{name}_{k}": v
                for name, examples in splits.domains.items()
                if name.endswith("_valid")
                for k, v in validate_bleu(on_cpu, examples, source_tok, target_tok, tgt_lang, args).items()
            },
            "epoch_seconds": round(time.time() - trained["started"], 1),
            "elapsed_minutes": round((time.time() - self.started) / 60, 1),
        }
        print(json.dumps(record))
        with open(run.metrics, "a") as f:
            f.write(json.dumps(record) + "\n")
        save_file(weights_to_save(on_cpu), str(run.epoch_weights(epoch)))
        stale = run.epoch_weights(epoch - args.average_last)
        if stale.exists():
            stale.unlink()
        self.save_state(epoch)


def main(argv=None, description: str | None = None):
    args = parse_args(argv, description)
    device = torch.device(args.device)
    rank, world = setup_distributed()
    check_options(args, device, world)
    if args.threads:
        torch.set_num_threads(args.threads)
    run = Run(args.run_dir)
    run.dir.mkdir(parents=True, exist_ok=True)
    src_lang, tgt_lang = LANGUAGES[args.corpus]
    splits, pairs, terms = load_training_data(args)
    initial = load_checkpoint(args.init_from) if args.init_from else None
    check_vocabulary_options(args, initial, src_lang, tgt_lang)
    if rank == 0:  # tokenizers are learnt once, on the training split only, and reused when the run resumes
        prepare_tokenizers(args, run.dir, splits, pairs, terms, initial, (src_lang, tgt_lang))
    barrier(world)
    source_tok, target_tok = Tokenizer.load(run.source_spm), Tokenizer.load(run.target_spm)
    data = epoch_pairs(args, splits, pairs, terms, source_tok, target_tok, 0)
    deletable = word_pieces(target_tok) if args.omission_margin else None
    valid_pairs = [(source_tok.encode(e.source), target_tok.encode(r)) for e in splits.valid for r in e.references[:1]]
    training = Training(args, run, build_model(args, initial, source_tok, target_tok, rank), device, world)
    if rank == 0:
        print(
            f"{len(data)} training pairs, {count_parameters(training.model) / 1e6:.1f}M parameters, "
            f"{world} process(es), {torch.get_num_threads()} threads each"
        )
    for epoch in range(training.start_epoch, args.epochs + 1):
        if args.subword_alpha:
            data = epoch_pairs(args, splits, pairs, terms, source_tok, target_tok, epoch)
        trained = training.train_epoch(epoch, data, deletable)
        if trained is None:
            return
        if rank == 0:
            training.end_epoch(epoch, trained, splits, valid_pairs, (source_tok, target_tok), tgt_lang)
        barrier(world)
        if args.max_minutes and (time.time() - training.started) / 60 > args.max_minutes:
            if rank == 0:
                print(f"stopping after epoch {epoch}: past {args.max_minutes} minutes")
            break
    if rank == 0 and args.export:
        export(run, training.model.cfg, args, source_tok, target_tok, splits.valid, tgt_lang)
    if world > 1:
        dist.destroy_process_group()


@torch.no_grad()
def validate(model, valid_pairs, valid, source_tok, target_tok, tgt_lang, args) -> dict:
    model.eval()
    total_loss, total_tokens = 0.0, 0
    for i in range(0, len(valid_pairs), 128):
        src, tgt_in, tgt_out = collate(valid_pairs[i : i + 128])
        _, decoded = model(src, tgt_in)
        tokens = int((tgt_out != PAD_ID).sum())
        total_loss += loss_fn(decoded.logits, tgt_out, 0.0).item() * tokens
        total_tokens += tokens
    result = {"valid_loss": round(total_loss / total_tokens, 4)}
    result.update(
        {f"valid_{k}": v for k, v in validate_bleu(model, valid, source_tok, target_tok, tgt_lang, args).items()}
    )
    return result


@torch.no_grad()
def validate_bleu(model, examples, source_tok, target_tok, tgt_lang, args) -> dict:
    """Greedy BLEU and chrF of the first --valid-bleu-sentences examples ({} when that is 0)."""
    if not args.valid_bleu_sentences:
        return {}
    model.eval()
    subset = examples[: args.valid_bleu_sentences]
    hyps = translate_corpus(model, source_tok, target_tok, [e.source for e in subset])
    scores = score(hyps, subset, bleu_tokenizer_for(tgt_lang))
    return {k: scores[k] for k in ("bleu", "chrf", "names_kept") if k in scores}


def export(run: Run, cfg: TransformerConfig, args, source_tok, target_tok, valid, tgt_lang):
    """Average the last epochs' weights, keep whichever of averaged / last scores better on validation BLEU
    (or take the average of --average-epochs), and write the checkpoint folder."""
    metrics = run.read_metrics()
    last_epoch = metrics[-1]["epoch"]
    if args.average_epochs:
        first, last = args.average_epochs
        paths = [run.epoch_weights(e) for e in range(first, last + 1)]
        missing = [p.name for p in paths if not p.exists()]
        if missing:
            raise SystemExit(f"--average-epochs: {', '.join(missing)} not in {run.dir} (see --average-last)")
        name = f"average of epochs {first}-{last}"
        if args.average_with_init:
            starting = starting_weights(args.init_from, cfg, source_tok, target_tok)
            paths = [starting, *paths]
            name = f"average of the --init-from weights and epochs {first}-{last}"
        candidates = {name: average_weights(paths)}
    else:
        paths = [run.epoch_weights(e) for e in range(last_epoch - args.average_last + 1, last_epoch + 1)]
        paths = [p for p in paths if p.exists()]
        candidates = {"last": load_file(str(run.epoch_weights(last_epoch)))}
        if len(paths) > 1:
            candidates[f"average of last {len(paths)}"] = average_weights(paths)
    model = Transformer(cfg)
    best_name, best_bleu, best_weights = None, -1.0, None
    for name, weights in candidates.items():
        apply_weights(model, weights)
        model.eval()
        hyps = translate_corpus(model, source_tok, target_tok, [e.source for e in valid])
        bleu = score(hyps, valid, bleu_tokenizer_for(tgt_lang))["bleu"]
        print(f"export candidate {name}: valid BLEU {bleu}")
        if bleu > best_bleu:
            best_name, best_bleu, best_weights = name, bleu, weights
    apply_weights(model, best_weights)
    src_lang, _ = LANGUAGES[args.corpus]
    metadata = {
        "corpus": args.corpus,
        "source_language": src_lang,
        "target_language": tgt_lang,
        "epochs": last_epoch,
        "weights": best_name,
        "valid_bleu_greedy": best_bleu,
        "training_minutes": round(metrics[-1]["elapsed_minutes"], 1),
        "train_args": {k: str(v) for k, v in vars(args).items() if k not in ("run_dir", "export", "data_dir")},
    }
    dtype = torch.float16 if args.export_dtype == "float16" else torch.float32
    save_checkpoint(args.export, model, run.source_spm.read_bytes(), run.target_spm.read_bytes(), metadata, dtype=dtype)
    (Path(args.export) / "metrics.jsonl").write_text(run.metrics.read_text())
    print(f"exported {best_name} to {args.export} (valid BLEU {best_bleu})")

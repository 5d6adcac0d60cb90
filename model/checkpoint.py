"""A checkpoint is a folder: model.safetensors, config.json, source.model, target.model (+ metrics, card).

Weights are stored with safetensors, never pickle: loading a pickled file runs whatever code it contains.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from .tokenizer import Tokenizer
from .transformer import Transformer, TransformerConfig

WEIGHTS, CONFIG, SOURCE_SPM, TARGET_SPM = "model.safetensors", "config.json", "source.model", "target.model"


class CheckpointError(Exception):
    """A checkpoint folder is missing a file, or a file is unreadable or does not fit the others."""


@dataclass
class LoadedModel:
    model: Transformer  # in eval mode; shared, never mutated after loading
    source_tokenizer: Tokenizer
    target_tokenizer: Tokenizer
    name: str  # the checkpoint folder's name, e.g. "en-zh"
    metadata: dict  # config.json's "metadata": languages, data, training summary


def weights_to_save(model: Transformer, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    state = model.state_dict()
    if model.cfg.tie_target_embeddings:
        state.pop("generator.weight")  # the same tensor as tgt_embed.lookup.weight
    return {k: v.detach().to(dtype).contiguous() for k, v in state.items()}


def apply_weights(model: Transformer, weights: dict[str, torch.Tensor]) -> None:
    """Load weights saved by weights_to_save (the tied output layer follows the target embedding)."""
    model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=not model.cfg.tie_target_embeddings)


def save_checkpoint(
    directory: Path | str,
    model: Transformer,
    source_spm: bytes,
    target_spm: bytes,
    metadata: dict | None = None,
    dtype: torch.dtype = torch.float32,
) -> None:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_file(weights_to_save(model, dtype), str(directory / WEIGHTS))
    config = {"model": asdict(model.cfg), "metadata": metadata or {}}
    (directory / CONFIG).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (directory / SOURCE_SPM).write_bytes(source_spm)
    (directory / TARGET_SPM).write_bytes(target_spm)


def load_checkpoint(directory: Path | str) -> LoadedModel:
    """Load a checkpoint folder for inference. Every failure is a CheckpointError naming the file at fault."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint folder not found: {directory}")
    for name in (CONFIG, WEIGHTS, SOURCE_SPM, TARGET_SPM):
        if not (directory / name).is_file():
            raise CheckpointError(f"checkpoint file missing: {directory / name}")

    try:
        config = json.loads((directory / CONFIG).read_text(encoding="utf-8"))
        cfg = TransformerConfig(**config["model"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{directory / CONFIG} is not a valid model config ({e})") from None

    try:
        source, target = Tokenizer.load(directory / SOURCE_SPM), Tokenizer.load(directory / TARGET_SPM)
    except (ValueError, OSError) as e:
        raise CheckpointError(str(e)) from None
    for label, tok, expected in (("source", source, cfg.src_vocab_size), ("target", target, cfg.tgt_vocab_size)):
        if tok.vocab_size != expected:
            raise CheckpointError(
                f"{label} tokenizer has {tok.vocab_size} pieces but {directory / CONFIG} expects {expected}"
            )

    try:
        weights = load_file(str(directory / WEIGHTS))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{directory / WEIGHTS} is not a readable safetensors file ({e})") from None

    model = Transformer(cfg)
    expected_keys = set(weights_to_save(model, torch.float32))
    missing, unexpected = expected_keys - set(weights), set(weights) - expected_keys
    if missing or unexpected:
        raise CheckpointError(
            f"{directory / WEIGHTS} does not match {directory / CONFIG}: "
            f"missing {sorted(missing)[:3]}{'…' if len(missing) > 3 else ''}, "
            f"unexpected {sorted(unexpected)[:3]}{'…' if len(unexpected) > 3 else ''}"
        )
    state = model.state_dict()
    for key, tensor in weights.items():
        if tuple(tensor.shape) != tuple(state[key].shape):
            raise CheckpointError(
                f"{directory / WEIGHTS}: {key} has shape {tuple(tensor.shape)}, config expects {tuple(state[key].shape)}"
            )
    apply_weights(model, weights)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return LoadedModel(model, source, target, directory.name, config.get("metadata", {}))


def read_metadata(directory: Path | str) -> dict:
    """config.json's "metadata" without loading weights (for labels); {} when it cannot be read, since
    load_checkpoint is the one that reports what is wrong with a folder."""
    try:
        config = json.loads((Path(directory) / CONFIG).read_text(encoding="utf-8"))
        return dict(config.get("metadata") or {})
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def list_checkpoints(root: Path | str) -> list[Path]:
    """Every folder under root that holds a config.json, sorted by name."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / CONFIG).is_file())

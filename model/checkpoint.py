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
    if model.cfg.share_source_target_embeddings:
        state.pop("tgt_embed.lookup.weight")  # the same tensor as src_embed.lookup.weight
    return {k: v.detach().to(dtype).contiguous() for k, v in state.items()}


def apply_weights(model: Transformer, weights: dict[str, torch.Tensor]) -> None:
    """Load weights saved by weights_to_save (a tied matrix follows the one it is tied to: the output layer the
    target embedding, a shared target embedding the source one)."""
    tied = model.cfg.tie_target_embeddings or model.cfg.share_source_target_embeddings
    model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=not tied)


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


def shown(path: Path) -> str:
    """ "en-zh/config.json": error messages name the checkpoint and file, never where the server keeps them."""
    path = Path(path)
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def load_checkpoint(directory: Path | str) -> LoadedModel:
    """Load a checkpoint folder for inference. Every failure is a CheckpointError naming the file at fault
    (as "folder/file", never an absolute server path)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint folder not found: {directory.name}")
    for name in (CONFIG, WEIGHTS, SOURCE_SPM, TARGET_SPM):
        if not (directory / name).is_file():
            raise CheckpointError(f"checkpoint file missing: {shown(directory / name)}")

    cfg, metadata = read_config(directory)

    tokenizers = []
    for name in (SOURCE_SPM, TARGET_SPM):
        try:
            tokenizers.append(Tokenizer.from_bytes((directory / name).read_bytes()))
        except Exception:  # sentencepiece raises bare RuntimeErrors with C++ text
            raise CheckpointError(f"{shown(directory / name)} is not a valid SentencePiece model") from None
    source, target = tokenizers
    for label, tok, expected in (("source", source, cfg.src_vocab_size), ("target", target, cfg.tgt_vocab_size)):
        if tok.vocab_size != expected:
            raise CheckpointError(
                f"{label} tokenizer has {tok.vocab_size} pieces but {shown(directory / CONFIG)} expects {expected}"
            )

    try:
        weights = load_file(str(directory / WEIGHTS))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{shown(directory / WEIGHTS)} is not a readable safetensors file ({e})") from None

    model = Transformer(cfg)
    expected_keys = set(weights_to_save(model, torch.float32))
    missing, unexpected = expected_keys - set(weights), set(weights) - expected_keys
    if missing or unexpected:
        raise CheckpointError(
            f"{shown(directory / WEIGHTS)} does not match {shown(directory / CONFIG)}: "
            f"missing {sorted(missing)[:3]}{'…' if len(missing) > 3 else ''}, "
            f"unexpected {sorted(unexpected)[:3]}{'…' if len(unexpected) > 3 else ''}"
        )
    state = model.state_dict()
    for key, tensor in weights.items():
        if tuple(tensor.shape) != tuple(state[key].shape):
            raise CheckpointError(
                f"{shown(directory / WEIGHTS)}: {key} has shape {tuple(tensor.shape)}, "
                f"config expects {tuple(state[key].shape)}"
            )
    apply_weights(model, weights)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return LoadedModel(model, source, target, directory.name, metadata)


# TransformerConfig field -> (type, smallest allowed value); bools are checked apart (bool is an int in Python).
_CONFIG_FIELDS = {
    "src_vocab_size": (int, 5),
    "tgt_vocab_size": (int, 5),
    "d_model": (int, 1),
    "n_heads": (int, 1),
    "d_ff": (int, 1),
    "n_encoder_layers": (int, 1),
    "n_decoder_layers": (int, 1),
    "max_len": (int, 2),
    "pad_id": (int, 0),
    "bos_id": (int, 0),
    "eos_id": (int, 0),
    "dropout": (float, 0.0),
}
_BOOL_FIELDS = ("tie_target_embeddings", "norm_first", "share_source_target_embeddings", "decoder_only")
# metadata keys the app reads, all strings when present
_METADATA_STRINGS = ("corpus", "source_language", "target_language")


def check_model_fields(model: dict, path: Path) -> None:
    """Every field of config.json's "model" known, every number of its type and in range."""
    for name in model:
        if name not in _CONFIG_FIELDS and name not in _BOOL_FIELDS:
            raise CheckpointError(f'{shown(path)}: unknown field "model.{name}"')
    for name, (kind, smallest) in _CONFIG_FIELDS.items():
        if name not in model:
            if name in ("src_vocab_size", "tgt_vocab_size"):
                raise CheckpointError(f'{shown(path)}: "model.{name}" is missing')
            continue
        value = model[name]
        valid_type = isinstance(value, int) if kind is int else isinstance(value, (int, float))
        if isinstance(value, bool) or not valid_type:
            raise CheckpointError(
                f'{shown(path)}: "model.{name}" must be a number ({"whole" if kind is int else "decimal"}'
                f"), not {json.dumps(value)[:40]}"
            )
        if value < smallest or (name == "dropout" and value >= 1):
            raise CheckpointError(f'{shown(path)}: "model.{name}" = {value} is out of range')


def read_config(directory: Path | str) -> tuple[TransformerConfig, dict]:
    """config.json -> (model config, metadata), every field checked; a CheckpointError names the field at fault."""
    path = Path(directory) / CONFIG
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{shown(path)} is not readable JSON ({e})") from None
    if not isinstance(config, dict) or not isinstance(config.get("model"), dict):
        raise CheckpointError(f'{shown(path)} needs an object "model" holding the model\'s shape')
    model = config["model"]
    check_model_fields(model, path)
    for name in _BOOL_FIELDS:
        if name in model and not isinstance(model[name], bool):
            raise CheckpointError(
                f'{shown(path)}: "model.{name}" must be true or false, not {json.dumps(model[name])[:40]}'
            )
    if model.get("decoder_only"):  # the toy's architecture (model.toy); every view reads an encoder and a decoder
        raise CheckpointError(f"{shown(path)}: a decoder-only model is not a translation checkpoint the app reads")
    try:
        cfg = TransformerConfig(**model)
    except ValueError as e:  # e.g. d_model not divisible by n_heads
        raise CheckpointError(f"{shown(path)}: {e}") from None
    metadata = config.get("metadata", {})
    if not isinstance(metadata, dict):
        raise CheckpointError(f'{shown(path)}: "metadata" must be an object, not {json.dumps(metadata)[:40]}')
    for name in _METADATA_STRINGS:
        if name in metadata and not isinstance(metadata[name], str):
            raise CheckpointError(
                f'{shown(path)}: "metadata.{name}" must be text, not {json.dumps(metadata[name])[:40]}'
            )
    return cfg, metadata


def read_metadata(directory: Path | str) -> dict:
    """config.json's "metadata" without loading weights (for labels); {} when it cannot be read, since
    load_checkpoint is the one that reports what is wrong with a folder."""
    try:
        metadata = json.loads((Path(directory) / CONFIG).read_text(encoding="utf-8")).get("metadata") or {}
        return {k: v for k, v in dict(metadata).items() if k not in _METADATA_STRINGS or isinstance(v, str)}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


CHECKPOINT_FILES = (CONFIG, WEIGHTS, SOURCE_SPM, TARGET_SPM)


def list_checkpoints(root: Path | str) -> list[Path]:
    """Every folder under root that holds all of a checkpoint's files (config, weights, both tokenizers), sorted
    by name. (Whether they load is another matter: load_checkpoint says what is wrong with a file.)"""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and all((p / f).is_file() for f in CHECKPOINT_FILES))


def incomplete_checkpoints(root: Path | str) -> dict[str, list[str]]:
    """Folders under root that hold some of a checkpoint's files but not all: folder name -> the files missing."""
    root = Path(root)
    if not root.is_dir():
        return {}
    out = {}
    for p in sorted(root.iterdir()):
        if p.is_dir():
            missing = [f for f in CHECKPOINT_FILES if not (p / f).is_file()]
            if missing and len(missing) < len(CHECKPOINT_FILES):
                out[p.name] = missing
    return out

"""A Translation written to a file and read back, for notebooks; and the same data as BertViz's input.

    save(translation, "run.npz")    # or "run.json": pieces, probabilities, the three attention tensors, Q/K/V
    translation = load("run.npz")   # exactly what was saved (float32 arrays, bit for bit)
    head_view(**to_bertviz(translation))   # BertViz, encoder-decoder mode

The .npz holds the arrays as float32 and everything else as one JSON string; the .json holds everything as JSON
(a float32 written as the shortest decimal that reads back as the same float32). `python -m model.translate
--attention-out FILE` and the app's download button write these files.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np

from .decode import Translation
from .teacher_forcing import PassRecord

FORMAT = "attention-explorer translation"
VERSION = 1
# The file's name of each attention kind's array (version 1 files: a Translation's fields before issue 60).
ATTENTION_FIELDS = {
    "encoder_self": "encoder_self_attention",
    "decoder_self": "decoder_self_attention",
    "cross": "cross_attention",
}
_NPZ_METADATA = "metadata.json"


class ExportError(ValueError):
    """A file that is not a translation written by `save`, or a name with an unknown suffix."""


def _metadata(tr: Translation) -> dict:
    plain = {f.name: getattr(tr, f.name) for f in dataclasses.fields(tr) if f.name != "record"}
    plain["alternatives"] = [[[piece, p] for piece, p in step] for step in tr.alternatives]
    return {"format": FORMAT, "version": VERSION, **plain}


def _arrays(tr: Translation) -> dict[str, np.ndarray]:
    arrays = {name: tr.attention(kind) for kind, name in ATTENTION_FIELDS.items()}
    for kind, tensors in tr.record.qkv.items():
        for name, array in tensors.items():
            arrays[f"qkv/{kind}/{name}"] = array
    return {name: np.asarray(array, dtype=np.float32) for name, array in arrays.items()}


def _float32_list(array: np.ndarray):
    # float32 -> Python float is exact, and repr writes the shortest text that reads back as the same float.
    return array.astype(np.float32).tolist()


def to_bytes(tr: Translation, suffix: str) -> bytes:
    """The file's content for ".npz" or ".json" (the app's download button)."""
    _check_suffix(suffix)
    if suffix == ".npz":
        buffer = io.BytesIO()
        arrays = _arrays(tr)
        metadata = np.frombuffer(json.dumps(_metadata(tr), ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
        np.savez_compressed(buffer, **{_NPZ_METADATA: metadata}, **arrays)
        return buffer.getvalue()
    document = _metadata(tr)
    document["arrays"] = {name: _float32_list(array) for name, array in _arrays(tr).items()}
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def save(tr: Translation, path: Path | str) -> None:
    path = Path(path)
    path.write_bytes(to_bytes(tr, path.suffix.lower()))


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=np.float32)
    array.setflags(write=False)
    return array


def _check_suffix(suffix: str) -> None:
    if suffix not in (".npz", ".json"):
        raise ExportError(f"unknown format {suffix!r}: use .npz or .json")


def _check_header(metadata) -> None:
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ExportError("not a translation file written by model.export")
    if metadata.get("version") != VERSION:
        raise ExportError(f"translation file version {metadata.get('version')}; this code reads version {VERSION}")


def from_bytes(data: bytes, suffix: str) -> Translation:
    _check_suffix(suffix)
    try:
        if suffix == ".npz":
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                metadata = json.loads(archive[_NPZ_METADATA].tobytes().decode("utf-8"))
                _check_header(metadata)
                arrays = {name: archive[name] for name in archive.files if name != _NPZ_METADATA}
        else:
            metadata = json.loads(data.decode("utf-8"))
            _check_header(metadata)
            arrays = {name: np.array(values, dtype=np.float32) for name, values in metadata.pop("arrays").items()}
    except ExportError:
        raise
    except (ValueError, KeyError, OSError, UnicodeDecodeError, TypeError, AttributeError) as e:
        raise ExportError(f"not a translation file ({type(e).__name__}: {e})") from None
    fields = {k: v for k, v in metadata.items() if k not in ("format", "version")}
    fields["alternatives"] = [[(piece, p) for piece, p in step] for step in fields["alternatives"]]
    qkv: dict[str, dict[str, np.ndarray]] = {}
    for name, array in arrays.items():
        if name.startswith("qkv/"):
            _, kind, tensor = name.split("/")
            qkv.setdefault(kind, {})[tensor] = _read_only(array)
    attention = {kind: _read_only(arrays[name]) for kind, name in ATTENTION_FIELDS.items()}
    return Translation(**fields, record=PassRecord(fields["source_ids"], fields["target_ids"], attention, qkv))


def load(path: Path | str) -> Translation:
    path = Path(path)
    _check_suffix(path.suffix.lower())
    return from_bytes(path.read_bytes(), path.suffix.lower())


def to_bertviz(tr: Translation) -> dict:
    """The keyword arguments of BertViz's head_view / model_view for an encoder-decoder model: per layer, a
    (1, heads, queries, keys) tensor, and the tokens of each side. The decoder's tokens are its inputs (<s> and
    the output but its last piece), the rows that computed the attention; cross-attention rows are decoder
    positions and its columns source pieces."""
    import torch  # BertViz takes torch tensors

    def layers(attention: np.ndarray) -> tuple:
        return tuple(torch.from_numpy(np.array(layer))[None] for layer in attention)

    return dict(
        encoder_attention=layers(tr.attention("encoder_self")),
        decoder_attention=layers(tr.attention("decoder_self")),
        cross_attention=layers(tr.attention("cross")),
        encoder_tokens=list(tr.source_pieces),
        decoder_tokens=list(tr.decoder_input_pieces),
    )

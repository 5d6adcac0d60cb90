"""A Translation written out and read back is exactly the same; it converts to BertViz's input, and BertViz
itself renders it with our tokens (bertviz is a dev requirement only)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from model import export
from model import translate as translate_cli
from model.decode import teacher_force, translate


@pytest.fixture
def translation(tiny_model, tiny_tokenizers):
    return translate(tiny_model, *tiny_tokenizers, "Tom drinks tea ☃.", beam_size=3)


def assert_same(x, y, where="translation"):
    """Equal field by field, through the record's dicts of arrays; every array bit for bit, not approximately."""
    if dataclasses.is_dataclass(x):
        for field in dataclasses.fields(x):
            assert_same(getattr(x, field.name), getattr(y, field.name), f"{where}.{field.name}")
    elif isinstance(x, dict):
        assert x.keys() == y.keys(), where
        for key in x:
            assert_same(x[key], y[key], f"{where}[{key}]")
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype == np.float32 and x.shape == y.shape, where
        assert np.array_equal(x, y), where
    else:
        assert x == y, where


@pytest.mark.parametrize("suffix", [".npz", ".json"])
def test_a_translation_round_trips_exactly(translation, tmp_path, suffix):
    path = tmp_path / f"run{suffix}"
    export.save(translation, path)
    back = export.load(path)
    assert_same(translation, back)
    assert not back.attention("cross").flags.writeable  # like the app's, shared arrays are read-only
    assert back.decoder_input_pieces == translation.decoder_input_pieces


def test_a_teacher_forced_translation_round_trips_too(tiny_model, tiny_tokenizers, tmp_path):
    forced = teacher_force(tiny_model, *tiny_tokenizers, "I like tea.", reference="我喜欢茶。")
    export.save(forced, tmp_path / "forced.json")
    back = export.load(tmp_path / "forced.json")
    assert_same(forced, back) and back.teacher_forced


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not json", "not a translation file"),
        (json.dumps({"format": "something else"}).encode(), "not a translation file written by model.export"),
        (json.dumps({"format": export.FORMAT, "version": 99}).encode(), "version 99"),
    ],
)
def test_a_file_that_is_not_ours_gets_a_clear_error(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(export.ExportError, match=message):
        export.load(path)
    with pytest.raises(export.ExportError, match="use .npz or .json"):
        export.load(tmp_path / "x.csv")


def test_bertviz_input_has_a_tensor_per_layer_and_the_decoder_inputs_as_tokens(translation):
    kwargs = export.to_bertviz(translation)
    layers, heads, n_src, _ = translation.attention("encoder_self").shape
    assert len(kwargs["encoder_attention"]) == layers
    assert tuple(kwargs["cross_attention"][0].shape) == (1, heads, len(translation.decoder_input_pieces), n_src)
    assert kwargs["encoder_tokens"] == translation.source_pieces
    assert kwargs["decoder_tokens"][0] == "<s>" and len(kwargs["decoder_tokens"]) == len(translation.target_pieces)
    np.testing.assert_array_equal(kwargs["decoder_attention"][1][0].numpy(), translation.attention("decoder_self")[1])


@pytest.mark.parametrize("view", ["head_view", "model_view"])
def test_bertviz_renders_our_export(translation, view):
    bertviz = pytest.importorskip("bertviz")
    html = getattr(bertviz, view)(**export.to_bertviz(translation), html_action="return").data
    # BertViz writes the tokens into its page as JSON (and "prettifies" the word-start mark ▁ away).
    for token in ("<s>", "</s>", *translation.source_pieces):
        text = json.dumps(token.replace("\u2581", ""))[1:-1]
        assert text in html, token


def test_the_translate_command_writes_the_attention_file(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "tea.npz"
    translate_cli.main(["--checkpoint", str(tiny_checkpoint), "I like tea.", "--attention-out", str(out)])
    back = export.load(out)
    assert back.source_text == "I like tea." and back.attention("encoder_self").ndim == 4
    assert capsys.readouterr().out.strip() == back.target_text.strip()
    with pytest.raises(SystemExit):
        translate_cli.main(["--checkpoint", str(tiny_checkpoint), "a", "b", "--attention-out", str(out)])
    assert "exactly one sentence" in capsys.readouterr().err

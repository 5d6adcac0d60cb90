"""What a long lesson and a careless link must not break: bad link values, checkpoints of other shapes,
broken config and probe files. Each gets a message, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest
import streamlit as st
import torch

from model.checkpoint import save_checkpoint
from model.transformer import Transformer

from ..conftest import tiny_config
from .test_app import every_figure, figures, open_tab, run_app


@pytest.fixture
def unequal_root(tiny_spm, tiny_tokenizers, tmp_path, monkeypatch):
    """Two tiny checkpoints whose stacks differ in depth: 2 encoder + 1 decoder layers, and 1 + 2."""
    root = tmp_path / "checkpoints"
    meta = {"corpus": "tatoeba-en-zh", "source_language": "en", "target_language": "zh"}
    for name, (encoder, decoder) in {"deep-encoder": (2, 1), "deep-decoder": (1, 2)}.items():
        torch.manual_seed(0)
        model = Transformer(tiny_config(*tiny_tokenizers, n_encoder_layers=encoder, n_decoder_layers=decoder))
        save_checkpoint(root / name, model, *tiny_spm, metadata=meta)
    monkeypatch.setenv("ATTENTION_EXPLORER_CHECKPOINTS", str(root))
    st.cache_data.clear()
    st.cache_resource.clear()
    return root


def warnings_text(at) -> str:
    return "\n".join(w.value for w in at.warning)


@pytest.mark.parametrize(
    "query, parameter",
    [
        ({"layer": "²"}, "layer"),
        ({"beam": "²"}, "beam"),
        ({"layer": "9" * 5000}, "layer"),
        ({"head": "-1"}, "head"),
        ({"head": "x"}, "head"),
        ({"ckpt": "../../etc"}, "ckpt"),
        ({"lang": "fr"}, "lang"),
        ({"beam": "0"}, "beam"),
    ],
)
def test_a_bad_link_value_is_ignored_with_a_notice(checkpoint_root, query, parameter):
    at = run_app(**query)
    assert not at.exception
    assert f"`{parameter}`" in warnings_text(at) and "ignored" in warnings_text(at)
    assert at.get("plotly_chart")  # the page still shows its maps


@pytest.mark.parametrize(
    "query, parameter, used",
    # one rule (issue 59): past the last is the last (the tiny model: 2 layers, 4 heads)
    [({"layer": "40"}, "layer", 2), ({"head": "99"}, "head", "4"), ({"beam": "99"}, "beam", 8)],
)
def test_an_out_of_range_link_value_is_clamped_with_a_notice(checkpoint_root, query, parameter, used):
    at = run_app(**query)
    assert not at.exception
    assert f"`{parameter}`" in warnings_text(at) and "out of range" in warnings_text(at)
    assert at.session_state[parameter] == used


def test_a_sentence_longer_than_a_link_may_hold_is_cut_with_a_notice_in_the_interface_language(checkpoint_root):
    """Issue 36 item 10: the Chinese notice said "改用 2000 characters" (an English word in Chinese)."""
    from ui.links import MAX_SENTENCE_CHARACTERS

    at = run_app(s="a" * (MAX_SENTENCE_CHARACTERS + 50), lang="zh")
    assert not at.exception
    assert f"超过 {MAX_SENTENCE_CHARACTERS} 个字符" in warnings_text(at) and "characters" not in warnings_text(at)
    assert len(at.session_state["sentence"]) == MAX_SENTENCE_CHARACTERS


def test_the_notice_is_said_once(checkpoint_root):
    at = run_app(layer="²")
    assert "ignored" in warnings_text(at)
    at.sidebar.text_input[0].set_value("Good morning.").run()
    assert not at.exception and "ignored" not in warnings_text(at)


def test_layers_follow_each_stack_in_a_deeper_encoder(unequal_root):
    at = run_app(ckpt="deep-encoder", layer="2")
    assert not at.exception
    assert at.session_state["layer"] == 2
    figs = every_figure(at)
    assert "layer 2" in figs["heatmap-encoder_self"]["layout"]["title"]["text"]
    # the decoder has one layer: its maps show layer 1 and say why
    assert "layer 1" in figs["heatmap-cross"]["layout"]["title"]["text"]
    assert any("has 1 layers" in c.value for c in open_tab(at, "tab_cross").caption)
    grids = [
        e.value
        for e in open_tab(at, "tab_ablation").dataframe  # a layers x heads grid per kind
        if list(e.value.index)[:1] == ["L1"]
    ]
    assert [list(g.index) for g in grids] == [["L1", "L2"], ["L1"], ["L1"]]  # encoder 2 layers, decoder 1


def test_layers_follow_each_stack_in_a_deeper_decoder(unequal_root):
    at = run_app(ckpt="deep-decoder")
    at.sidebar.selectbox(key="layer").select(2).run()
    assert not at.exception
    figs = every_figure(at)
    assert "layer 2" in figs["heatmap-decoder_self"]["layout"]["title"]["text"]
    assert "layer 2" in figs["heatmap-cross"]["layout"]["title"]["text"]
    assert "layer 1" in figs["heatmap-encoder_self"]["layout"]["title"]["text"]
    # ablating decoder layer 2 works
    open_tab(at, "tab_ablation")
    at.session_state["ablated_heads"] = ["cross:2:1"]
    at.run()
    assert not at.exception and "ablation-heatmap" in figures(at)


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"kind,layer\nencoder_self,1\n", "lacks the column"),
        (b"", "not a readable CSV"),
        (b"kind,layer,head,entropy\n\xff\xfe,1,1,0.5\n", "not UTF-8"),
        (b"kind,layer,head,entropy\nencoder_self,one,1,0.5\n", "other than numbers"),
    ],
)
def test_a_malformed_probe_table_is_named_and_the_rest_keeps_working(checkpoint_root, content, reason):
    for name in ("head_stats.csv", "head_ablation.csv"):
        (checkpoint_root / "tiny-a" / name).write_bytes(content)
    at = open_tab(run_app(), "tab_heads")
    assert not at.exception
    shown = warnings_text(at).replace("\\", "")  # markdown escapes
    assert reason in shown and "tiny-a/head_stats.csv" in shown
    assert open_tab(at, "tab_ablation").dataframe
    assert "decoding-step" in every_figure(at)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["model"].update(n_heads=0), "model.n_heads"),
        (lambda c: c.update(metadata="hello"), "metadata"),
        (lambda c: c["metadata"].update(target_language=7), "metadata.target_language"),
        (lambda c: c["model"].update(d_model="256"), "model.d_model"),
    ],
)
def test_a_broken_config_is_named_without_a_server_path(checkpoint_root, change, message):
    path = checkpoint_root / "tiny-a" / "config.json"
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config))
    at = run_app(ckpt="tiny-a")
    assert not at.exception
    error = at.warning[0].value.replace("\\", "")  # named, and the checkpoint that loads is shown instead
    assert "tiny-a/config.json" in error and message in error
    assert str(checkpoint_root) not in error


def test_word_level_with_an_odd_target_language_still_renders(checkpoint_root):
    path = checkpoint_root / "tiny-a" / "config.json"
    config = json.loads(path.read_text())
    config["metadata"]["target_language"] = "xx"
    path.write_text(json.dumps(config))
    at = run_app(ckpt="tiny-a")
    at.sidebar.checkbox(key="word_level").check().run()
    assert not at.exception
    shutil.rmtree(checkpoint_root / "tiny-b")

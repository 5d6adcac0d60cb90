"""Attribution methods beside the weights, in the app: one selector switches every attention view to another account of
the same map (same axes), each computed from the shown translation; the heads' alignment error on the gold set."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from model import attribute, decode
from model.checkpoint import load_checkpoint
from ui import models

from ..conftest import ROOT
from .test_app import APP, figures, heat, open_tab, run_app


def expected_map(tiny_checkpoint, sentence, method, kind, layer=1, head="1"):
    loaded = load_checkpoint(tiny_checkpoint)
    tr = decode.translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence)
    record = tr.record  # decoded with its Q/K/V: what every method reads
    return attribute.METHODS[method].view(
        loaded.model, record, kind, layer - 1, None if head == "mean" else int(head) - 1
    )


def test_the_method_selector_redraws_the_same_view_under_each_account(checkpoint_root, tiny_checkpoint):
    at = open_tab(run_app(s="I like tea."), "tab_cross")
    raw = figures(at)["heatmap-cross"]
    for method in ("norm", "value-zeroing", "rollout", "gradient-x-input"):
        at.selectbox(key="attribution").select(method).run()
        assert not at.exception, method
        fig = figures(at)["heatmap-cross"]
        assert fig["layout"]["yaxis"]["ticktext"] == raw["layout"]["yaxis"]["ticktext"]  # the map keeps its axes
        assert fig["layout"]["xaxis"]["ticktext"] == raw["layout"]["xaxis"]["ticktext"]
        np.testing.assert_allclose(
            heat(fig), expected_map(tiny_checkpoint, "I like tea.", method, "cross"), rtol=1e-3, atol=1e-5
        )
        assert any(
            c.value.startswith(("Each cell is", "Value zeroing", "Attention rollout", "Gradient × input"))
            for c in at.caption
        )
    assert fig["data"][0]["zmin"] == -fig["data"][0]["zmax"]  # signed scores: a scale centred on 0
    assert at.query_params["attribution"] in ("gradient-x-input", ["gradient-x-input"])
    # Norm shares of a row sum to 1, like the weights.
    at.selectbox(key="attribution").select("norm").run()
    np.testing.assert_allclose(heat(figures(at)["heatmap-cross"]).sum(1), 1.0, atol=1e-4)
    # Decoder self-attention under gradients: cells after the row's own input stay masked.
    at = open_tab(at.selectbox(key="attribution").select("gradient-x-input").run(), "tab_decoder")
    shown = heat(figures(at)["heatmap-decoder_self"])
    assert np.isnan(shown[np.triu_indices(shown.shape[0], 1)]).all()
    # The encoder has no output to differentiate: it says so and shows the weights.
    at = open_tab(at, "tab_encoder")
    assert any("encoder predicts nothing" in i.value for i in at.info)
    assert "heatmap-encoder_self" in figures(at)


def test_integrated_gradients_run_only_when_asked_for_each_sentence_and_report_their_completeness(
    checkpoint_root, monkeypatch
):
    """Issue 36: chosen once, the slow method must not make the next sentence, or a shared link, wait: it is
    computed when asked for, on that sentence, and says how complete its sums are."""
    runs = []
    original = attribute.IntegratedGradients.steps

    def counted(self, *args, **kwargs):
        runs.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(attribute.IntegratedGradients, "steps", counted)
    at = open_tab(run_app(s="I like tea."), "tab_cross")
    at.selectbox(key="attribution").select("integrated-gradients").run()
    assert not at.exception and not runs
    assert any("only when you ask" in i.value for i in at.info)
    assert "integrated gradients" not in figures(at)["heatmap-cross"]["layout"]["title"]["text"]  # the raw map
    at.button(key="attribution-ask-cross").click().run()  # started in the background: the page is drawn at once
    assert not at.exception
    models.slow_attributions().wait(timeout=120)
    at.run()
    assert len(runs) == 1
    line = next(c.value for c in at.caption if c.value.startswith("Completeness"))
    assert float(line.split(" is ")[1].split(" %")[0]) <= 1.0
    at.text_input(key="sentence").input("Tom drinks tea.").run()  # the next sentence: asked for again
    assert len(runs) == 1 and any("only when you ask" in i.value for i in at.info)
    at.text_input(key="sentence").input("I like tea.").run()  # computed before: shown at once, not again
    assert len(runs) == 1 and any(c.value.startswith("Completeness") for c in at.caption)
    shared = open_tab(run_app(s="We drink water.", method="integrated-gradients"), "tab_cross")  # a link
    assert not shared.exception and len(runs) == 1
    assert shared.button(key="attribution-ask-cross").label.startswith("Compute")


def test_a_link_opens_a_method_and_an_unknown_one_is_named(checkpoint_root):
    """Issue 60: the link says attribution=, as the page's choice is called; method= and flow=, older links'
    names, still open."""
    for older in ("attribution", "method", "flow"):
        at = open_tab(run_app(s="I like tea.", **{older: "rollout"}), "tab_cross")
        assert at.selectbox(key="attribution").value == "rollout", older
        assert "rollout" in figures(at)["heatmap-cross"]["layout"]["title"]["text"]
        assert at.query_params["attribution"] == "rollout"  # the link is written back under its one name
        assert "method" not in at.query_params and "flow" not in at.query_params
    at = run_app(s="I like tea.", method="magic")
    assert at.selectbox(key="attribution").value == "attention"
    assert any("method" in w.value for w in at.warning)


@pytest.mark.checkpoint
def test_shipped_checkpoint_shows_each_heads_alignment_error_in_chinese(monkeypatch):
    monkeypatch.delenv("ATTENTION_EXPLORER_CHECKPOINTS", raising=False)
    st.cache_data.clear()
    at = open_tab(run_app(lang="zh"), "tab_heads")
    assert not at.exception
    grid = heat(figures(at)["aer-grid"])
    assert grid.shape == (6, 8) and np.isfinite(grid).all() and ((0 <= grid) & (grid <= 1)).all()
    assert "对齐错误率" in figures(at)["aer-grid"]["layout"]["title"]["text"]
    at.radio(key="aer_method").set_value("norm-shifted").run()
    assert not np.array_equal(heat(figures(at)["aer-grid"]), grid)
    at = open_tab(at, "tab_cross")
    assert any("对齐错误率" in c.value for c in at.caption)

    # the view opened on the best aligner of alignment.json (issue 36); from any other head it is one click away
    table = json.loads((ROOT / "checkpoints" / "en-zh" / "alignment.json").read_text())
    best = min((r for r in table["results"] if r["method"] == "attention"), key=lambda r: r["aer"])
    assert (at.session_state.layer, at.session_state.head) == (best["layer"], str(best["head"]))
    at.selectbox(key="layer").select(1).run()
    at.selectbox(key="head").select("1").run()
    at.button(key="aer-show-best").click().run()
    assert not at.exception
    assert (at.session_state.layer, at.session_state.head) == (best["layer"], str(best["head"]))
    assert any(f"{best['aer']:.2f}" in c.value for c in at.caption if "对齐错误率" in c.value)
    assert not [b for b in at.button if b.key == "aer-show-best"]  # shown already: no button


@pytest.mark.slow  # over 10 s alone in the CI run of 2026-12-03 (--durations)
def test_the_explanation_lesson_puts_every_method_beside_occlusion(checkpoint_root, tiny_checkpoint):
    from model import faithfulness

    from .test_lessons import open_lesson

    scored = faithfulness.score_sentences(
        *_loaded(tiny_checkpoint),
        ["Tom drinks tea.", "I like coffee.", "We walk home now."],
        ("attention", "norm", "rollout"),
        slow_sentences=0,
    )
    table = faithfulness.summarize(scored)
    table.to_csv(checkpoint_root / "tiny-a" / "faithfulness.csv", index=False)
    at = open_lesson(run_app(s="Tom drinks tea."), "lesson_explanation")
    assert any("shows no interval" in c.value for c in at.caption)  # an older table: said, not drawn
    table = faithfulness.with_intervals(table, faithfulness.sentence_correlations(scored))
    table.to_csv(checkpoint_root / "tiny-a" / "faithfulness.csv", index=False)
    at = open_lesson(run_app(s="Tom drinks tea."), "lesson_explanation")
    bars = figures(at)["explain-corpus"]["data"][0]
    assert len(bars["error_x"]["array"]) == len(table)  # each method's interval over the sentences
    assert any("95 % of the means over 3 sentences" in c.value for c in at.caption)
    fig = figures(at)["explain-methods"]
    names = fig["layout"]["yaxis"]["ticktext"]
    assert names[0].startswith("occlusion") and len(names) == 6  # + raw, norm, value zeroing, rollout, grad x input
    z = heat(fig)
    assert np.nanmax(np.abs(z), axis=1).round(6).tolist() == [1.0] * 6  # each row scaled to its strongest word
    assert "explain-corpus" in figures(at)
    # "Tom drinks tea." is four words and a full stop: how little one piece's rho says, in numbers
    assert any("rests on the 4 source words" in c.value and "8%" in c.value for c in at.caption)
    at.checkbox(key="explain_ig").check().run()
    assert not at.exception
    assert len(figures(at)["explain-methods"]["layout"]["yaxis"]["ticktext"]) == 7
    at = open_lesson(run_app(s="Tom drinks tea.", lang="zh"), "lesson_explanation")
    assert figures(at)["explain-methods"]["layout"]["yaxis"]["ticktext"][0].startswith("遮挡")


def _loaded(path):
    loaded = load_checkpoint(path)
    return loaded.model, loaded.source_tokenizer, loaded.target_tokenizer


@pytest.mark.checkpoint
def test_measured_roles_and_importance_on_the_head_statistics_view(monkeypatch):
    monkeypatch.delenv("ATTENTION_EXPLORER_CHECKPOINTS", raising=False)
    st.cache_data.clear()
    at = run_app(ckpt="en-de")
    for lang in ("en", "zh"):
        at.session_state["lang"] = lang
        at = open_tab(at, "tab_heads")
        assert not at.exception
        importance = heat(figures(at)["importance-grid"])
        assert importance.shape == (6, 8)
        np.testing.assert_allclose(np.linalg.norm(importance, axis=1), 1.0, atol=1e-3)
        caption = next(c.value for c in at.caption if c.value.startswith(("Thresholds", "阈值")))
        assert "90%" in caption or "90 %" in caption
        title = figures(at)["importance-grid"]["layout"]["title"]["text"].replace("<br>", " ")
        assert ("each encoder self-attention head" in title) if lang == "en" else ("编码器自注意力" in title)
        columns = [list(d.value.columns) for d in at.dataframe]  # one spelling of layer and head in every table
        assert {c for cols in columns for c in cols if c.lower() in ("layer", "head", "层", "头")} == (
            {"layer", "head"} if lang == "en" else {"层", "头"}
        )


@pytest.mark.checkpoint
def test_head_search_ranks_cross_attention_heads_by_gold_aer(monkeypatch):
    monkeypatch.delenv("ATTENTION_EXPLORER_CHECKPOINTS", raising=False)
    st.cache_data.clear()
    at = open_tab(run_app(ckpt="en-de"), "tab_search")
    at.radio(key="search_kind").set_value("cross").run()
    at.radio(key="search_by").set_value("aer").run()
    assert not at.exception
    import json

    rows = json.loads((ROOT / "checkpoints" / "en-de" / "alignment.json").read_text())["results"]
    best = min((r for r in rows if r["method"] == "attention" and isinstance(r["head"], int)), key=lambda r: r["aer"])
    assert any(
        b.label.endswith(f"layer {best['layer']}, head {best['head']}")
        or f"{best['layer']}" in b.label
        and f"{best['head']}" in b.label
        for b in at.button
        if b.key == "search-open-0"
    )
    np.testing.assert_allclose(heat(figures(at)["search-grid"]).min(), best["aer"])


def test_a_row_of_the_per_piece_table_offers_its_alternatives_as_what_if_choices(checkpoint_root, tiny_checkpoint):
    loaded = load_checkpoint(tiny_checkpoint)
    original = decode.translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.")
    at = run_app(s="I like tea.")
    at.session_state["piece_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    buttons = [b for b in at.button if b.key and b.key.startswith("table-whatif-")]
    others = [p for p, _ in original.alternatives[1] if p != original.target_pieces[1]]
    assert [b.label.split(" (")[0] for b in buttons] == others
    buttons[0].click().run()
    piece_id = loaded.target_tokenizer.processor.PieceToId(others[0])
    assert at.session_state["trail"] == [[1, piece_id]]
    expected = decode.translate(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.", forced={1: piece_id}
    )
    assert expected.target_text in next(m.value for m in at.markdown if m.value.startswith("### "))


def test_links_keep_word_level_name_repeated_values_and_replace_pairs_outside_the_sentence(checkpoint_root):
    at = run_app(s="I like tea.", words="1")
    assert at.session_state["word_level"] is True
    at.checkbox(key="word_level").uncheck().run()
    assert at.query_params["words"] in ("0", ["0"])
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["layer"] = ["1", "2"]
    at.run()
    assert any("`layer` 2 times" in w.value for w in at.warning)
    for name, value, tab in (("pair", "cross.9999.9999", "tab_search"), ("cmp", "9999.9999.9999", "tab_compare")):
        params = {"s": "I like tea.", name: value, "view": tab}
        if name == "cmp":
            params["s2"] = "You like tea."
        at = run_app(**params)
        assert not at.exception
        assert any(f"`{name}` positions do not exist" in w.value for w in at.warning), name
        assert value not in str(at.query_params.get(name, ""))


@pytest.mark.slow  # over 10 s alone in the CI run of 2026-12-03 (--durations)
def test_an_idle_server_computes_gradient_x_input_ahead_so_the_switch_only_draws(checkpoint_root, monkeypatch):
    from ui import models

    monkeypatch.setattr(models, "PREFETCH_MIN_PIECES", 1)  # the tiny test model writes short outputs
    monkeypatch.setattr(models, "CLASS_SECONDS", 0.0)  # each page here a lone visitor, not a class
    monkeypatch.setenv("ATTENTION_EXPLORER_COMPUTE_AHEAD", "1")  # what these tests are about
    cache = models.translation_cache()
    # Other background work holds a model slot for a while (the query-key view's held-out sample, started by a
    # checkpoint's first page in this process), and nothing is computed ahead meanwhile: let it finish first.
    # Its batches free the slots between them, so idle slots alone do not say it has ended.
    from ui.qk_space import qk_samples

    run_app(s="We walk home.")
    qk_samples().wait(timeout=120)
    deadline = time.monotonic() + 120
    while not cache.slots.idle and time.monotonic() < deadline:
        time.sleep(0.05)
    at = open_tab(run_app(s="We walk to the park every day."), "tab_cross")
    models.attribution_prefetcher().submit(lambda: None).result(timeout=120)  # one worker: the prefetch before it ran
    computed = cache.computed
    at.selectbox(key="attribution").select("gradient-x-input").run()
    assert not at.exception
    assert cache.computed == computed  # found, not computed again
    assert "gradient × input" in figures(at)["heatmap-cross"]["layout"]["title"]["text"]


@pytest.mark.slow  # over 5 s in the inner loop of 2026-12-03 (--durations)
def test_a_busy_server_computes_nothing_ahead(checkpoint_root, monkeypatch):
    from ui import models

    monkeypatch.setattr(models, "PREFETCH_MIN_PIECES", 1)  # so that only the busy cores stop it
    monkeypatch.setattr(models, "CLASS_SECONDS", 0.0)
    monkeypatch.setenv("ATTENTION_EXPLORER_COMPUTE_AHEAD", "1")  # what these tests are about
    cache = models.translation_cache()

    def gradient_attributions() -> int:
        return sum(1 for key in list(cache._items) if key[0] == "attribution" and key[-1] == "gradient-x-input")

    before = gradient_attributions()
    with cache.slots:  # another session's computation holds a slot for the whole run
        at = open_tab(run_app(s="They sing in the garden at night."), "tab_cross")
        assert not at.exception
        models.attribution_prefetcher().submit(lambda: None).result(timeout=120)
    assert gradient_attributions() == before


def test_every_link_value_the_sentence_cannot_have_gets_a_notice_on_the_page_the_link_opens(
    checkpoint_root, tiny_checkpoint
):
    loaded = load_checkpoint(tiny_checkpoint)
    tr = decode.translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.")
    step1 = tr.target_ids[1]
    other = next(i for i in range(4, 50) if i != step1)
    cases = {
        # a pair of positions past the sentence, with no view open that reads it
        (("pair", "cross.99.99"),): ("`pair` positions do not exist", "pair"),
        (("view", "tab_qk"), ("qk", "cross.9999")): ("`qk` positions do not exist", "qk"),
        # one step given three times: the last is used, said so
        (("force", f"1:{other},1:{step1},1:{other}"),): ("sets one step more than once", None),
        # a step past the translation: dropped, no what-if shown
        (("force", "9999:5"),): ("does not fit this translation", "force"),
        # no such piece in the vocabulary
        (("force", f"0:{loaded.model.cfg.tgt_vocab_size + 10}"),): ("names a piece this model does not have", "force"),
        # <s> or <pad> forced mid-sentence: pieces the decoder never writes (the walk-through: no notice, log-prob -21)
        (("force", "1:2"),): ("which the decoder never writes", "force"),
        (("force", "1:0"),): ("which the decoder never writes", "force"),
    }
    for params, (said, dropped) in cases.items():
        at = run_app(s="I like tea.", **dict(params))
        assert not at.exception, params
        warnings = " ".join(w.value for w in at.warning)
        assert said in warnings, (params, warnings)
        if dropped:  # gone from the link, or replaced (the open query-key view writes its own first query)
            assert dict(params)[dropped] not in str(at.query_params.get(dropped, "")), (params, at.query_params)
        if dropped == "force":
            assert not any("What if" in i.value for i in at.info)
            assert at.session_state["trail"] == []
        at.run()  # said once
        assert said not in " ".join(w.value for w in at.warning)


def test_a_link_with_an_empty_sentence_says_the_page_opens_on_its_own(checkpoint_root):
    at = run_app(s="")
    assert not at.exception
    assert "is empty: the page opens on its own sentence" in " ".join(w.value for w in at.warning)
    assert at.text_input(key="sentence").value.strip()  # and it does


def test_heads_switched_in_the_browser_reach_every_view_through_the_link(checkpoint_root):
    """Issue 37: with the maps switched in the browser the page gets every head of the kind at once (no server
    map), and the layer and head the page wrote into the link are what the next run's views read; a choice made
    in the sidebar meanwhile stands."""
    at = open_tab(run_app(s="I like tea."), "tab_cross")
    at.toggle(key="browser_switching").set_value(True).run()
    assert not at.exception
    assert "heatmap-cross" not in figures(at) and "grid-cross" not in figures(at)  # drawn in the page instead
    frame = at.get("iframe")[0].proto.srcdoc
    data = json.loads(frame.split("const DATA = ")[1].split(";\n")[0])
    assert np.array(data["kinds"]["cross"]["weights"]).shape[:2] == (2, 4)  # the tiny model: every layer and head
    assert data["link"]["view"] == "tab_cross" and data["embedded"]
    assert not at.query_params  # the page writes the link from now on
    # the page switched to layer 2, head 2 and wrote it; another view opens
    link = dict(data["link"], layer="2", head="2", view="tab_qk")
    for key, value in link.items():
        at.query_params[key] = value
    open_tab(at, "tab_qk")
    assert (at.session_state["layer"], at.session_state["head"]) == (2, "2")
    # back on the map: a head chosen in the sidebar stands against an older link
    at.session_state["browser_switching"] = False
    open_tab(at, "tab_cross")
    at.query_params["head"] = "3"  # as if the page had switched to head 3 meanwhile
    at.selectbox(key="head").set_value("1").run()
    assert at.session_state["head"] == "1"


def test_a_slow_method_can_be_cancelled_and_asked_for_again(checkpoint_root, monkeypatch):
    """Issue 36 item 1: integrated gradients took minutes under load with a spinner and no way out. It runs in the
    background with its progress on the page and a cancel button; cancelled, it can be asked for again."""
    started, release = threading.Event(), threading.Event()
    original = attribute.IntegratedGradients.steps

    def slow(self, model, p, *args, progress=None, **kwargs):
        progress.report(1, 10)
        started.set()
        while not release.wait(0.05):
            progress.check()  # raises Cancelled once the page's cancel button was pressed
        return original(self, model, p, *args, progress=progress, **kwargs)

    monkeypatch.setattr(attribute.IntegratedGradients, "steps", slow)
    at = open_tab(run_app(s="We like tea."), "tab_cross")
    at.selectbox(key="attribution").select("integrated-gradients").run()
    at.button(key="attribution-ask-cross").click().run()
    assert started.wait(30) and not at.exception
    at.run()
    assert any("1 of 10" in p.proto.text for p in at.get("progress"))
    at.button(key="attribution-cancel-integrated-gradients").click().run()
    models.slow_attributions().wait(timeout=30)
    at.run()
    assert any("cancelled" in c.value for c in at.caption)
    assert at.button(key="attribution-ask-cross").label.startswith("Compute")
    release.set()
    at.button(key="attribution-ask-cross").click().run()
    models.slow_attributions().wait(timeout=120)
    at.run()
    assert not at.exception and any(c.value.startswith("Completeness") for c in at.caption)


def test_a_class_on_the_server_computes_nothing_ahead_for_one_sentence(checkpoint_root, monkeypatch):
    """Computing a sentence's attributions ahead is for a lone visitor: with other sessions running scripts in the
    last minute (a class), an idle moment is not spent on one student's next switch."""
    from ui import models

    monkeypatch.setattr(models, "PREFETCH_MIN_PIECES", 1)
    monkeypatch.setenv("ATTENTION_EXPLORER_COMPUTE_AHEAD", "1")
    cache = models.translation_cache()

    def gradient_attributions() -> int:
        return sum(1 for key in list(cache._items) if key[0] == "attribution" and key[-1] == "gradient-x-input")

    before = gradient_attributions()
    models.note_script_run("another student")  # a script run of another session just now
    at = open_tab(run_app(s="The birds sing in the tall tree."), "tab_cross")
    assert not at.exception
    models.attribution_prefetcher().submit(lambda: None).result(timeout=120)
    assert gradient_attributions() == before
    assert models.note_script_run("another student") >= 2  # both sessions are counted as active

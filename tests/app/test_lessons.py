"""The Lessons page in AppTest: every lesson renders in both interface languages, and each what-if shows what
it claims with the model's own numbers (the shipped en-zh checkpoint where the point needs a trained model)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from model import decode, toy
from model.checkpoint import load_checkpoint
from model.transformer import count_parameters
from ui.models import toy_runs
from ui.views import lessons
from words import t

from ..conftest import SHIPPED
from .test_app import APP, figures, heat, plotly_array

shipped = pytest.mark.skipif(not SHIPPED.exists(), reason="needs the shipped en-zh checkpoint")


def open_lesson(at: AppTest, lesson: str) -> AppTest:
    at.session_state["page"] = "lessons"
    at.session_state["lesson"] = lesson
    at.run()
    assert not at.exception, lesson
    return at


def table_with(at: AppTest, column: str):
    """The page's table that has this column (the translation's piece table is on every page)."""
    return next(frame.value for frame in [*at.dataframe, *at.table] if column in frame.value.columns)


def run_shipped(monkeypatch, **query) -> AppTest:
    monkeypatch.delenv("ATTENTION_EXPLORER_CHECKPOINTS", raising=False)
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


# Lessons that draw their maps once the toy runs a press starts have finished (before: their prose and the button).
TRAINED_ON_A_PRESS = {"lesson_decoder_only": "alone_train"}


@pytest.mark.slow  # over 10 s alone in the CI run of 2026-12-03 (--durations)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_lesson_renders_in_both_languages(checkpoint_root, lang, monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_COMPUTE_AHEAD", "1")  # the first page starts the default toy run
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    toy_runs().wait(timeout=120)  # the lesson "Attention is learned" opens on the default run, started above
    seen = set()
    for lesson, entry in lessons().items():
        open_lesson(at, lesson)
        if lesson in TRAINED_ON_A_PRESS:  # its maps come from runs a teacher starts with the lesson's button
            at.button(key=TRAINED_ON_A_PRESS[lesson]).click().run()
            toy_runs().wait(timeout=180)
            at.run()
        charts = figures(at)
        assert charts, f"{lesson} draws nothing"
        seen |= set(charts)
        assert any(m.value.startswith("**") for m in at.markdown), lesson  # the lesson's argument, in words
        if entry.explorer_view:
            assert at.button(key=f"open-{lesson}").label  # and its link to the explorer
    for key in (
        "no-attention-learned",
        "no-attention-uniform",
        "order-0-original",
        "order-1-swapped",
        "padding-tokens",
        "padding-map",
        "residual-norms",
        "layernorm-histograms",
        "norm-axes",
        "ffn-updates",
        "output-distribution",
        "toy-map",
        "toy-curves",
        "alone-cross",
        "alone-sequence",
    ):
        assert key in seen, key


def test_a_link_opens_a_lesson_and_its_button_opens_the_explorer_view(checkpoint_root):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["view"] = "lesson_encoder_decoder"
    at.run()
    assert at.session_state["page"] == "lessons" and at.session_state["lesson"] == "lesson_encoder_decoder"
    assert at.query_params["view"] == "lesson_encoder_decoder"
    at.button(key="open-lesson_encoder_decoder").click().run()
    assert at.session_state["page"] == "explore" and at.session_state["tab"] == "tab_cross"
    assert "heatmap-cross" in figures(at)
    assert at.query_params["view"] == "tab_cross"


def test_uniform_cross_attention_lesson_shows_flat_rows_and_the_log_prob_change(checkpoint_root, tiny_checkpoint):
    at = open_lesson(AppTest.from_file(APP, default_timeout=120).run(), "lesson_encoder_decoder")
    charts = figures(at)
    uniform = heat(charts["no-attention-uniform"])
    np.testing.assert_allclose(uniform, 1 / uniform.shape[1], rtol=1e-6)
    learned = heat(charts["no-attention-learned"])
    assert learned.shape[1] == uniform.shape[1] and np.ptp(learned) > 0  # the same source pieces
    loaded = load_checkpoint(tiny_checkpoint)
    tr = decode.translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, at.session_state["sentence"])
    forced = decode.teacher_force(
        loaded.model,
        loaded.source_tokenizer,
        loaded.target_tokenizer,
        tr.source_text,
        reference_ids=tr.target_ids,
        uniform_cross=True,
    )
    said = next(m.value for m in at.markdown if "Log-probability" in m.value)
    assert f"**{tr.log_prob:.2f}**" in said and f"**{forced.log_prob - tr.log_prob:+.2f}**" in said


@shipped
@pytest.mark.checkpoint
def test_word_order_lesson_proves_a_bag_of_words_without_positions(monkeypatch):
    at = run_shipped(monkeypatch, s="The dog chases the cat.", view="lesson_positions")
    assert not at.exception
    assert at.selectbox(key="order_a").value == 1 and at.selectbox(key="order_b").value == 4  # dog, cat
    assert any("Swapped: The cat chases the dog" in m.value.replace("\\", "") for m in at.markdown)
    without, with_pe = (float(m.value) for m in at.metric)
    assert without < 1e-5 and with_pe > 0.1
    charts = figures(at)
    original, swapped = heat(charts["order-0-original"]), heat(charts["order-0-swapped"])
    permutation = [0, 5, 2, 3, 4, 1, 6, 7]  # ▁The ▁cat ▁chase s ▁the ▁dog . </s>
    np.testing.assert_allclose(swapped, original[np.ix_(permutation, permutation)], atol=1e-5)
    assert (
        np.abs(
            heat(charts["order-1-swapped"]) - heat(charts["order-1-original"])[np.ix_(permutation, permutation)]
        ).max()
        > 0.05
    )
    # Another pair of words: the sentence changes with one choice.
    at.selectbox(key="order_b").select(2).run()
    assert any("Swapped: The chases dog the cat" in m.value.replace("\\", "") for m in at.markdown)


def test_padding_lesson_batches_two_sentences_and_padding_gets_zero(checkpoint_root):
    at = open_lesson(AppTest.from_file(APP, default_timeout=120).run(), "lesson_masks")
    at.text_input(key="padding_other").input("Good morning.").run()
    charts = figures(at)
    tokens = charts["padding-tokens"]["data"][0]
    real = plotly_array(tokens["z"])  # (positions, sentences): 1 a real piece, 0 padding
    assert real.shape[1] == 2 and (real == 0).any(axis=0).sum() == 1  # one of the two sentences is padded
    assert "&lt;pad&gt;" in sum(tokens["text"], [])
    weights = heat(charts["padding-map"])
    masked = next(trace for trace in charts["padding-map"]["data"] if trace.get("name") == "masked")
    padded_columns = ~np.isnan(plotly_array(masked["z"])).all(axis=0)
    assert padded_columns.any() and np.isnan(weights[:, padded_columns]).all()  # drawn grey, not as a value
    np.testing.assert_allclose(np.nansum(weights, axis=1), 1.0, atol=1e-5)  # the real keys hold all the weight
    said = next(m.value for m in at.markdown if "Largest weight on a padding key" in m.value)
    assert "Encoder self-attention 0," in said and "Cross-attention 0." in said
    assert (table_with(at, "Identical")["Identical"] == "✓").all()


def test_residual_lesson_standardizes_to_mean_0_variance_1(checkpoint_root):
    at = open_lesson(AppTest.from_file(APP, default_timeout=120).run(), "lesson_residual")
    table = table_with(at, "standardized mean / var")
    for cell in table["standardized mean / var"]:
        mean, var = (float(x) for x in cell.split(" / "))
        assert abs(mean) < 1e-5 and var == pytest.approx(1.0, abs=1e-3)
    assert len(table) == 2 * 2  # tiny model: 2 encoder layers x (self-attention, FFN)
    at.radio(key="residual_stack").set_value("decoder").run()
    assert len(table_with(at, "standardized mean / var")) == 2 * 3  # decoder layers also have cross-attention


def test_output_lesson_draws_the_whole_vocabulary_and_marks_the_chosen_piece(checkpoint_root, tiny_checkpoint):
    at = open_lesson(AppTest.from_file(APP, default_timeout=120).run(), "lesson_output")
    loaded = load_checkpoint(tiny_checkpoint)
    tr = decode.translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, at.session_state["sentence"])
    curve, named, star = figures(at)["output-distribution"]["data"]
    probabilities = plotly_array(curve["y"])
    assert len(probabilities) == loaded.target_tokenizer.vocab_size
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-4) and (np.diff(probabilities) <= 0).all()
    assert star["y"][0] == pytest.approx(tr.token_probs[0], abs=1e-5)
    if len(tr.target_ids) > 1:
        at.slider(key="output_step").set_value(1).run()
        star = figures(at)["output-distribution"]["data"][2]
        assert star["y"][0] == pytest.approx(tr.token_probs[1], abs=1e-5)


def test_a_lessons_settings_survive_a_visit_to_another_lesson(checkpoint_root):
    at = open_lesson(AppTest.from_file(APP, default_timeout=120).run(), "lesson_residual")
    at.radio(key="residual_stack").set_value("decoder").run()
    open_lesson(at, "lesson_ffn")
    open_lesson(at, "lesson_residual")
    assert at.radio(key="residual_stack").value == "decoder"


def test_a_link_to_an_unknown_view_is_ignored_with_a_notice(checkpoint_root):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["view"] = "lesson_<script>"
    at.run()
    assert not at.exception
    assert at.session_state["page"] == "explore" and at.session_state["tab"] == "tab_encoder"
    assert any("view" in w.value and "ignored" in w.value for w in at.warning)


@pytest.mark.slow  # over 10 s alone in the CI run of 2026-12-03 (--durations)
def test_attention_is_learned_trains_another_setting_and_compares_it_with_the_run_before(checkpoint_root, monkeypatch):
    monkeypatch.setenv("ATTENTION_EXPLORER_COMPUTE_AHEAD", "1")  # the first page starts the default toy run
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    toy_runs().wait(timeout=120)
    open_lesson(at, "lesson_learned")
    assert any("This run learnt the task" in m.value for m in at.markdown)
    at.toggle(key="toy_positional").set_value(False).run()
    at.button(key="toy_train").click().run()
    toy_runs().wait(timeout=120)
    at.run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "did not learn the task" in text and "no positional encoding" in text
    curves = figures(at)["toy-curves"]
    names = [trace.get("name", "") for trace in curves["data"]]
    assert any(name.startswith("dashed: before (reorder, positions on") for name in names)
    # the slider's first snapshot: the untrained model, its map's title says so
    assert any(name.startswith("solid: this run (reorder, positions off") for name in names)
    # the slider's first snapshot: the untrained model, its map's title says so, and its caption that the
    # strongest cells of its random weights are chance
    at.select_slider(key="toy_snapshot").set_value(0).run()
    assert "step 0:" in figures(at)["toy-map"]["layout"]["title"]["text"]
    caption = next(c.value for c in at.caption if "At step 0 nothing has been learnt" in c.value)
    # issue 59: the chance figure is that of the measure shown (a row's strongest source word, the end mark left
    # out), for the rows shown ("about 1 time in 6" sat beside "3 of the 5 rows")
    rows = int(re.search(r"of the (\d+) target-word rows", caption).group(1))
    columns = len(figures(at)["toy-map"]["layout"]["xaxis"]["ticktext"]) - 1
    assert f"one of the {columns} source words" in caption
    assert f"about {rows / columns:.1f} of the {rows} rows" in caption, caption


@shipped
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attention_is_learned_compares_the_toy_size_with_the_model_being_explored(monkeypatch, lang):
    """The lesson's prose sets the toy's 44,000 weights against the translation model's own count, read from the
    checkpoint chosen (it said "15 million" while the shipped en-zh model had 16.5 and the en-de 13.1)."""
    at = run_shipped(monkeypatch, lang=lang)
    for name in ("en-zh", "en-de"):
        at.selectbox(key="checkpoint").select(name).run()
        open_lesson(at, "lesson_learned")
        weights = count_parameters(load_checkpoint(SHIPPED.parent / name).model)
        size = f"{weights / 1e6:.1f} million" if lang == "en" else f"{int(round(weights / 1e4, -1)):,} 万"
        intro = next(m.value for m in at.markdown if m.value.startswith("**"))
        assert "44,000" in intro and size in intro, (name, intro)


def test_the_masks_lesson_pads_beside_the_second_sentence_only_where_its_length_differs(checkpoint_root):
    """A minimal pair's second sentence has the sentence's pieces in another order: padded beside it, the batch held
    no padding, and the lesson said so under its title. It takes the second sentence where that is longer or
    shorter, else a sentence of another length."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(s="The dog chases the cat.", s2="The cat chases the dog.")
    at = open_lesson(at.run(), "lesson_masks")
    assert at.text_input(key="padding_other").value != "The cat chases the dog."
    real = plotly_array(figures(at)["padding-tokens"]["data"][0]["z"])
    assert (real == 0).any()  # padding to show
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(s="The dog chases the cat.", s2="The dog chases the cat in the garden all day.")
    at = open_lesson(at.run(), "lesson_masks")
    assert at.text_input(key="padding_other").value == "The dog chases the cat in the garden all day."


def test_the_masks_lesson_pads_a_chinese_sentence_beside_a_chinese_one(checkpoint_root, tiny_zh_en_checkpoint):
    """Issue 58: with a Chinese source and no second sentence, the sentence padded beside the user's is Chinese
    (a long one beside a short sentence), not an English one the model cannot read."""
    import shutil

    shutil.copytree(tiny_zh_en_checkpoint, checkpoint_root / "tiny-zh-en")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(ckpt="tiny-zh-en", s="猫追狗。")
    at = open_lesson(at.run(), "lesson_masks")
    assert at.text_input(key="padding_other").value == "我奶奶和我们一起住在一套小公寓里。"


@pytest.mark.slow  # two toy runs, about 15 s on one core
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gpt_keeps_only_the_decoder_trains_both_and_shows_where_each_reads_the_source(checkpoint_root, lang):
    """Issue 61: one press trains the encoder-decoder and the decoder alone on the same task; the table, the
    caption and the two maps say what the runs measured (exact match, alignment error, parameters), and the
    decoder-only map outlines the block where the target rows read the source."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    open_lesson(at, "lesson_decoder_only")
    at.button(key="alone_train").click().run()
    toy_runs().wait(timeout=180)
    at.run()
    assert not at.exception
    together = toy_runs().finished(toy.ToySettings())
    alone = toy_runs().finished(toy.ToySettings(architecture="decoder-only"))
    table = at.table[0].value
    assert list(table.iloc[:, 1]) == [f"{together.parameters:,}", f"{alone.parameters:,}"]
    assert list(table.iloc[:, 4]) == [f"{together.snapshots[-1].aer:.3f}", f"{alone.snapshots[-1].aer:.3f}"]
    caption = " ".join(c.value for c in at.caption)
    assert f"{alone.snapshots[-1].aer:.3f}" in caption and f"{alone.parameters:,}" in caption
    maps = figures(at)
    assert {"alone-cross", "alone-sequence"} <= set(maps)
    sequence = maps["alone-sequence"]
    assert sequence["layout"]["yaxis"]["ticktext"][alone.target_start - 1].startswith(
        "&lt;sep&gt; → "
    )  # escaped, as every label
    outlines = [s for s in sequence["layout"]["shapes"] if s.get("line", {}).get("color") == "#2ca02c"]
    assert len(outlines) == 1 and outlines[0]["y1"] == len(alone.sequence) - 0.5


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_scaling_lesson_sets_the_seeds_code_beside_the_models_d_k(checkpoint_root, lang):
    """Issue 61: the first seed article's code divides by √768 over one head of the whole width; the paper and the
    model divide each head's scores by √d_k, here the tiny model's own numbers."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    at = open_lesson(at.run(), "lesson_scaling")
    cfg = load_checkpoint(checkpoint_root / "tiny-a").model.cfg
    text = " ".join(m.value for m in at.markdown)
    assert "√768" in text and f"d_model = {cfg.d_model}" in text and f"√d_k = √{cfg.d_k}" in text


@pytest.mark.slow  # two toy runs
def test_lesson_6_trains_post_norm_against_pre_norm_and_says_what_the_runs_show(checkpoint_root):
    """Issue 61: the residual lesson's last section trains lesson 11's model with LayerNorm after (the paper) and
    before (the shipped models) each sub-layer; the curves, each layer's first gradient norms and a caption of the
    runs' own numbers, which says it is a toy."""
    at = AppTest.from_file(APP, default_timeout=120)
    at = open_lesson(at.run(), "lesson_residual")
    at.button(key="norm_train").click().run()
    toy_runs().wait(timeout=180)
    at.run()
    assert not at.exception
    post = toy_runs().finished(toy.ToySettings(norm="post"))
    pre = toy_runs().finished(toy.ToySettings(norm="pre"))
    assert {"norm-curves", "norm-gradients"} <= set(figures(at))
    gradients = figures(at)["norm-gradients"]["data"]
    assert [trace["y"] for trace in gradients] == [post.gradient_norms[0], pre.gradient_norms[0]]
    caption = next(c.value for c in at.caption if "post-norm" in c.value and "toy" in c.value)
    assert f"{post.snapshots[-1].exact_match:.0%}" in caption and f"{pre.snapshots[-1].loss:.2f}" in caption
    # at the default setting both learn the task, and the caption says no difference shows there (it said the runs
    # showed "the difference the placement of LayerNorm can make" beside two runs at 100 %)
    assert post.snapshots[-1].exact_match >= 0.99 and pre.snapshots[-1].exact_match >= 0.99
    assert t("norm_outcome_same", "en") in caption
    assert gradients[0]["x"][0] == "Encoder 1" and gradients[0]["x"][-1] == f"Decoder {post.settings['layers']}"


@shipped
def test_the_about_boxs_pre_norm_sentence_opens_the_lesson_that_trains_both(monkeypatch):
    at = run_shipped(monkeypatch)
    at.button(key="norm_first_open").click().run()
    assert not at.exception
    assert at.session_state["page"] == "lessons" and at.session_state["lesson"] == "lesson_residual"


@pytest.mark.slow  # trains the default toy run
def test_a_train_buttons_time_counts_only_the_runs_it_starts_as_measured():
    """The buttons said 'about 26 s' for a decoder-only run beside a finished encoder-decoder one (it took 5.6 s)
    and 84 s for the deep post-norm/pre-norm pair (34 s): a run already trained costs nothing, and each run's cost
    follows what was measured alone (6 + 6 layers 2.6 times the default, d_model 128 2.8 times, the decoder
    alone half)."""
    from ui.lessons.learned import expected_seconds, run_cost

    default = toy.ToySettings()
    assert run_cost(replace(default, layers=6)) / run_cost(default) == pytest.approx(3.0)
    assert run_cost(replace(default, d_model=128)) / run_cost(default) == pytest.approx(2.83, abs=0.01)
    assert run_cost(replace(default, architecture="decoder-only")) / run_cost(default) == pytest.approx(0.4)
    from ui.models import toy_run

    toy_run(default)
    toy_runs().wait(timeout=180)
    measured = toy_runs().finished(default).seconds
    untrained = replace(default, seed=9, steps=default.steps + 1)  # no test trains this one
    assert expected_seconds([default]) == 1  # nothing left to train
    expected = max(1, round(measured * run_cost(untrained) / run_cost(default)))
    assert expected_seconds([default, untrained]) == expected_seconds([untrained]) == expected

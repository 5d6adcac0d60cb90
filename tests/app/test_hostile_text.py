"""Text that could garble the page: markup in pieces, invisible and direction-changing characters, and
references the model cannot fully read."""

from __future__ import annotations

from model.checkpoint import load_checkpoint
from model.decode import teacher_force
from model.tokenizer import visible
from ui.links import MAX_SENTENCE_CHARACTERS

from .test_app import every_figure, figures, open_tab, run_app


def test_invisible_and_direction_characters_are_shown_as_code_points():
    assert visible("a\u202eb\u200dc\u0007") == "a<U+202E>b<U+200D>c<U+0007>"
    assert visible("普通 text ▁ok") == "普通 text ▁ok"


def test_a_right_to_left_override_never_reaches_the_page_raw(checkpoint_root):
    at = run_app(s="Tom \u202eis here\u200d.")
    assert not at.exception
    pieces = " ".join(c.value for c in at.code)
    assert "\u202e" not in pieces and "\u200d" not in pieces
    assert "<U+202E>" in pieces
    for warning in at.warning:
        assert "\u202e" not in warning.value
    for spec in every_figure(at).values():
        assert "\u202e" not in str(spec)


def test_a_query_piece_in_angle_brackets_is_literal_in_the_softmax_title(checkpoint_root):
    at = open_tab(run_app(), "tab_softmax")
    at.radio(key="scaling_kind").set_value("decoder_self").run()  # query 0 of the decoder is <s>
    title = figures(at)["model-scaling"]["layout"]["title"]["text"]
    assert "&lt;s&gt;" in title and "<s>" not in title


def test_an_unknown_piece_in_the_step_caption_is_not_a_link(checkpoint_root):
    at = open_tab(run_app(s="Tom ☃ tea"), "tab_steps")
    query = at.selectbox(key="steps_query")
    unknown = next(i for i in query.options if "<unk:☃>" in i)  # options are shown as "2: <unk:☃>"
    query.select_index(query.options.index(unknown)).run()
    assert not at.exception
    caption = next(c.value for c in at.caption if "Check:" in c.value)
    assert "\\<unk\\:☃\\>" in caption  # markdown-escaped: shown as text, never an autolink


def test_a_too_long_reference_is_cut_without_an_end_token_and_with_a_warning(checkpoint_root, tiny_checkpoint):
    loaded = load_checkpoint(tiny_checkpoint)
    reference = "我喜欢茶。" * 40
    forced = teacher_force(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.", reference=reference
    )
    assert forced.reference_truncated and not forced.finished
    assert forced.target_pieces[-1] != "</s>" and len(forced.target_pieces) == loaded.model.cfg.max_len - 1
    at = run_app()
    at.sidebar.text_input(key="reference").set_value(reference).run()
    assert not at.exception
    assert any("longer than the model reads" in w.value for w in at.warning)


def test_reference_characters_outside_the_vocabulary_are_named(checkpoint_root, tiny_checkpoint):
    loaded = load_checkpoint(tiny_checkpoint)
    forced = teacher_force(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, "I like tea.", reference="我喜欢☃茶。"
    )
    assert "☃" in forced.unknown_reference
    assert "<unk:☃>" in forced.target_pieces
    at = run_app()
    at.sidebar.text_input(key="reference").set_value("我喜欢☃茶。").run()
    assert not at.exception
    assert any("☃" in w.value and "no piece" in w.value for w in at.warning)


def test_thousands_of_unknown_characters_get_a_short_notice_and_the_boxes_take_what_a_link_can(checkpoint_root):
    """Issue 36: 5,000 emoji typed gave a 5,096-character warning; now the first few are named and the rest
    counted. The sentence boxes accept as many characters as a link may carry, no more."""
    emoji = "".join(chr(0x1F600 + i) for i in range(80))  # 80 distinct characters the tokenizer does not know
    at = run_app(s=f"I like tea. {emoji}")
    assert not at.exception
    notice = next(w.value for w in at.warning if "<unk>" in w.value)
    assert "and 60 more" in notice and len(notice) < 300
    for key in ("sentence", "second_sentence", "reference"):
        assert at.text_input(key=key).proto.max_chars == MAX_SENTENCE_CHARACTERS

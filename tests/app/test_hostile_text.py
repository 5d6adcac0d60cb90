"""Text that could garble the page: markup in pieces, invisible and direction-changing characters, and
references the model cannot fully read."""

from __future__ import annotations

import pytest

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


def test_thousands_of_unknown_characters_get_a_short_notice(checkpoint_root):
    """Issue 36: 5,000 emoji typed gave a 5,096-character warning; now the first few are named and the rest
    counted."""
    emoji = "".join(chr(0x1F600 + i) for i in range(80))  # 80 distinct characters the tokenizer does not know
    at = run_app(s=f"I like tea. {emoji}")
    assert not at.exception
    notice = next(w.value for w in at.warning if "<unk>" in w.value)
    assert "and 60 more" in notice and len(notice) < 300


def test_an_invisible_unknown_character_is_named_and_counted_as_one():
    """Issue 36 item 10: 999 unassigned code points (shown "<U+1F6D8>") were named letter by letter, "< U + 1 F
    6 D 8 >", and counted as 1,007 characters."""
    from ui.attention import NAMED_CHARACTERS, named_characters

    pieces = ["".join(f"<U+{c:04X}>" for c in range(0x1F6D8, 0x1F6D8 + 999))]  # as decode gives them
    notice = named_characters(pieces, "en").replace("\\", "")  # Markdown-literal: unescaped to read
    assert notice.startswith("<U+1F6D8> <U+1F6D9>") and f"and {999 - NAMED_CHARACTERS} more" in notice
    assert named_characters(["☃<U+200B>☃"], "en").replace("\\", "") == "☃ <U+200B>"


@pytest.mark.parametrize("key", ["sentence", "second_sentence", "reference"])
def test_a_text_longer_than_a_link_carries_is_cut_in_its_box_with_a_note(checkpoint_root, key):
    """Issue 36 item 10: the boxes' own limit (max_chars) made the browser refuse a longer paste whole, silently,
    and count an emoji twice, so after a link of 2,000 emoji no key typed did anything. Now a box takes any text
    and cuts it to what a link carries, saying so, in characters (an emoji is one)."""
    at = run_app()
    box = at.sidebar.text_input(key=key)
    assert not box.proto.max_chars
    box.set_value("\U0001f600" * (MAX_SENTENCE_CHARACTERS + 500)).run()
    assert not at.exception
    assert at.sidebar.text_input(key=key).value == "\U0001f600" * MAX_SENTENCE_CHARACTERS
    assert any(f"only the first {MAX_SENTENCE_CHARACTERS} are kept" in c.value for c in at.sidebar.caption)
    at.sidebar.text_input(key=key).set_value("I like tea.").run()
    assert not any("only the first" in c.value for c in at.sidebar.caption)

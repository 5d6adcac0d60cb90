"""The logit lens's caption in words (issue 36: an empty list was shown as a bare dash, "–.")."""

from ui.lens import decided_caption


def test_every_piece_decided_early_says_so_instead_of_a_dash():
    text = decided_caption(["Tom", "jagt", "</s>"], [2, 5, 1], 6, "en")
    assert "Tom (2), jagt (5)" in text
    assert "No piece is decided only at the last layer (6)." in text
    assert "–" not in text


def test_pieces_decided_only_at_the_last_layer_in_chinese():
    text = decided_caption(["汤姆", "。"], [6, 6], 6, "zh")
    assert "没有哪个子词在最后一层（第 6 层）之前就排第一。" in text
    assert "直到最后一层（第 6 层）才确定的：汤姆、。。" in text
    assert " " not in text.replace("第 6 层", "")  # no space between Chinese sentences

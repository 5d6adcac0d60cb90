"""The words catalogue: every key in both languages with the same placeholders, every key used, every key the
code asks for present, and no Chinese text left behind when its English changed."""

from __future__ import annotations

import re
import shutil
import string

import pytest

import words

from ..conftest import ROOT

CODE = [p for p in [ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "viz").glob("*.py")]]


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_key_is_written_in_both_languages_with_the_same_placeholders():
    assert set(words.STRINGS["en"]) == set(words.STRINGS["zh"])
    for key, english in words.STRINGS["en"].items():
        assert english.strip() and words.STRINGS["zh"][key].strip(), key
        assert placeholders(english) == placeholders(words.STRINGS["zh"][key]), key


def test_no_chinese_text_is_older_than_its_english():
    stale = [key for key, text in words.STRINGS["en"].items() if words.ZH_FROM[key] != words.english_hash(text)]
    assert not stale, (
        f"the English of {stale} changed since its Chinese was written: update the Chinese, then run "
        f"`python -m words --checked {' '.join(stale)}`"
    )


def test_every_key_is_used_and_every_key_used_exists():
    code = "\n".join(p.read_text(encoding="utf-8") for p in CODE)
    literals = set(re.findall(r"[\"']([\w\- ]+)[\"']", code))
    # keys built in the code: t(f"attribution_{method}", ...), f"{lesson.key}_intro"
    built = [
        re.compile(re.escape(before) + r".+" + re.escape(after) + "$")
        for before, after in re.findall(r"f[\"']([\w\-]*)\{[^}]*\}([\w\-]*)[\"']", code)
        if len(before) >= 3 or after
    ]
    unused = [k for k in words.STRINGS["en"] if k not in literals and not any(p.match(k) for p in built)]
    assert not unused, unused
    asked = set(re.findall(r"\bt\(\s*\"([\w\-]+)\"", code))
    assert asked and not asked - set(words.STRINGS["en"]), asked - set(words.STRINGS["en"])


def test_a_changed_english_is_named_until_its_chinese_is_checked(tmp_path, monkeypatch):
    shutil.copy(words.CATALOGUE, tmp_path / "words.toml")
    shutil.copytree(words.PROSE, tmp_path / "lessons", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(words, "CATALOGUE", tmp_path / "words.toml")
    monkeypatch.setattr(words, "PROSE", tmp_path / "lessons")
    catalogue = (tmp_path / "words.toml").read_text(encoding="utf-8")
    (tmp_path / "words.toml").write_text(catalogue.replace('en = "Layer"', 'en = "Layer (1 = first)"'), "utf-8")
    prose = tmp_path / "lessons" / "residual.en.md"
    prose.write_text(prose.read_text(encoding="utf-8").replace("LayerNorm", "Layer normalisation", 1), "utf-8")

    def stale():
        strings, checked, _ = words.load()
        return sorted(k for k, text in strings["en"].items() if checked[k] != words.english_hash(text))

    assert stale() == ["layer", "lesson_residual_intro"]
    strings, checked, written_in = words.load()
    monkeypatch.setattr(words, "STRINGS", strings)
    monkeypatch.setattr(words, "WRITTEN_IN", written_in)
    words.mark_checked(["layer", "lesson_residual_intro"])
    assert stale() == []
    assert words.load()[0]["zh"]["layer"] == words.STRINGS["zh"]["layer"]  # the Chinese itself untouched


def test_a_prose_file_without_its_key_line_is_refused(tmp_path):
    path = tmp_path / "x.en.md"
    path.write_text("Some prose without a key.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must start with"):
        words.read_prose(path)


def test_checking_a_new_key_with_an_empty_zh_from_marks_that_key_and_no_other(tmp_path, monkeypatch):
    """A key just added has zh_from = "": checking it once wrote its hash into the next table's zh_from."""
    catalogue = words.CATALOGUE.read_text(encoding="utf-8")
    new_table = '[a_new_key]\nen = "A new label"\nzh = "新标签"\nzh_from = ""\n\n'
    (tmp_path / "words.toml").write_text(catalogue.replace("[layer]\n", new_table + "[layer]\n", 1), "utf-8")
    monkeypatch.setattr(words, "CATALOGUE", tmp_path / "words.toml")
    strings, checked, written_in = words.load()
    monkeypatch.setattr(words, "STRINGS", strings)
    monkeypatch.setattr(words, "WRITTEN_IN", written_in)
    words.mark_checked(["a_new_key"])
    _, after, _ = words.load()
    assert after["a_new_key"] == words.english_hash("A new label")
    assert {k: v for k, v in after.items() if k != "a_new_key"} == {
        k: v for k, v in checked.items() if k != "a_new_key"
    }


def test_small_numbers_in_running_text_have_no_hyphen_to_break_at():
    """Issue 36: "(largest difference 2.6e-08)" broke into "2.6e-" / "08" at the end of a caption line."""
    from words import scientific

    assert scientific(2.6e-8) == "2.6×10⁻⁸"
    assert scientific(0.0) == "0"
    assert "-" not in words.t("steps_matches", "en", token="x", diff=scientific(1e-7))


def test_a_score_below_its_threshold_is_never_written_as_the_same_number():
    """A browser check of stage 7: "mean log-probability per piece -0.53, below -0.53" (-0.5346 under -0.5271)."""
    from words import apart

    assert apart(-0.5346, -0.5271) == ("-0.535", "-0.527")
    assert apart(-0.91, -0.53) == ("-0.91", "-0.53")  # two decimals where they already differ
    assert apart(-0.52715, -0.5271) == ("-0.5272", "-0.5271")
    assert apart(-0.527101, -0.5271) == ("-0.5271", "-0.5271")  # at most four decimals
    note = words.t("unsure", "en", verdict="Possibly wrong", score="-0.535", threshold="-0.527", wrong=3, n=4)
    assert "-0.535 per piece, below -0.527" in note


def test_switched_off_heads_are_said_as_briefly_as_they_are():
    """Issue 59: switching off every cross-attention head listed 48 heads one by one."""
    from ui.ablation import switched_off

    layers = {"encoder_self": 2, "decoder_self": 2, "cross": 2}
    every_cross = [f"cross:{layer}:{head}" for layer in (1, 2) for head in (1, 2, 3)]
    assert switched_off(every_cross, layers, 3, "en") == "Cross-attention · all 6 heads"
    one_layer = ["encoder_self:2:1", "encoder_self:2:2", "encoder_self:2:3", "decoder_self:1:2"]
    assert switched_off(one_layer, layers, 3, "en") == (
        "Encoder self-attention · L2 (all 3 heads), Masked decoder self-attention · L1 H2"
    )
    assert switched_off(every_cross, layers, 3, "zh") == "交叉注意力 · 全部 6 个头"
    assert "，" in switched_off(one_layer, layers, 3, "zh") and ":" not in switched_off(one_layer, layers, 3, "zh")


def test_the_presentation_notes_stay_on_one_line_at_1024():
    """In presentation mode a note above the map is one line (ui.common.NOTE_HEIGHT): the unsure note for a
    translation below every judged one wrapped to a second line in Chinese (en-zh stage 11, "The farmer's daughter
    …"), and the map ended 0.2 px below a 768 px screen. Measured in Chromium at 1024×768, presentation mode: the
    wrapped Chinese note's first line held 108 columns (a wide character two), and an English note of 125 stayed on
    one line; here with the widest numbers a note can hold."""
    from viz.widths import display_width

    fits = {"en": 125, "zh": 108}
    numbers = dict(score="-10.25", threshold="-0.660", wrong=100, n=100)
    for lang, limit in fits.items():
        verdict = max((words.t(k, lang) for k in ("unsure_probably", "unsure_possibly")), key=display_width)
        for key in ("unsure_short", "unsure_lowest_short", "unsure_forced_short"):
            note = words.t(key, lang, verdict=verdict, **numbers).replace("**", "")
            assert display_width(note) <= limit, (key, lang, display_width(note), note)

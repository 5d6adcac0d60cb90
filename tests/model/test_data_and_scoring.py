"""Splitting keeps every English sentence in one split; scoring is multi-reference sacrebleu."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from model.data import DEFAULT_DATA_DIR, Example, load_splits, read_tatoeba, split_grouped, training_pairs
from model.evaluate import score, translate_corpus

TATOEBA = DEFAULT_DATA_DIR / "tatoeba-en-zh" / "cmn-eng.tsv"


def test_grouped_split_is_deterministic_and_disjoint(tiny_corpus_dir):
    examples = read_tatoeba(tiny_corpus_dir / "tatoeba-en-zh" / "cmn-eng.tsv")
    assert len(examples) == 20 and all(len(e.references) == 3 for e in examples)  # repeats grouped
    a, b = split_grouped(examples, 2, 3), split_grouped(list(reversed(examples)), 2, 3)
    assert [e.source for e in a.test] == [e.source for e in b.test]  # independent of file order
    sources = [{e.source for e in split} for split in (a.train, a.valid, a.test)]
    assert not (sources[0] & sources[1]) and not (sources[0] & sources[2]) and not (sources[1] & sources[2])
    assert len(training_pairs(a.train)) == 3 * len(a.train)


@pytest.mark.skipif(not TATOEBA.exists(), reason="the shared Tatoeba corpus is not beside the repository")
def test_tatoeba_split_sizes_and_multi_reference_test_set():
    splits = load_splits("tatoeba-en-zh")
    assert (len(splits.valid), len(splits.test)) == (1000, 1500)
    train_sources = {e.source for e in splits.train}
    assert not train_sources & {e.source for e in splits.test}
    assert any(len(e.references) > 1 for e in splits.test)


@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "en-zh-extra").exists(), reason="the shared en-zh extras are not here")
def test_the_name_pairs_trained_every_epoch_are_the_lexicons_names():
    splits = load_splits("tatoeba-extra-en-zh")
    names = dict(splits.names)
    assert names["Jerry"] == "杰瑞" and names["Tom"] == "汤姆"
    assert 1000 < len(splits.names) < 2000  # few: all of them every epoch costs little
    assert set(splits.names) <= set(splits.lexicon)  # the same pairs a --lexicon-per-epoch draw takes from


def test_multi_reference_bleu_uses_every_reference():
    examples = [Example("a", ["我是汤姆。", "我叫汤姆。"]), Example("b", ["他走了。"])]
    perfect = score(["我叫汤姆。", "他走了。"], examples, tokenize="zh")
    assert perfect["bleu"] == pytest.approx(100.0) and perfect["chrf"] == pytest.approx(100.0)
    assert score(["你好。", "他走了。"], examples, tokenize="zh")["bleu"] < 100


@pytest.mark.slow
def test_translate_corpus_keeps_input_order(tiny_model, tiny_tokenizers):
    sentences = ["I like tea.", "The dog is running.", "Good morning.", "It is raining today."]
    batched = translate_corpus(tiny_model, *tiny_tokenizers, sentences, batch_size=2)
    single = [translate_corpus(tiny_model, *tiny_tokenizers, [s])[0] for s in sentences]
    assert batched == single


@pytest.mark.slow  # over 5 s in the inner loop of 2026-12-03 (--durations)
@pytest.mark.skipif(
    not (DEFAULT_DATA_DIR / "en-zh-extra").exists() or not (DEFAULT_DATA_DIR / "multi30k").exists(),
    reason="the shared corpora are not here",
)
@pytest.mark.checkpoint
def test_the_query_key_views_held_out_sample_is_the_probe_set_and_never_trained_on():
    import json

    from model.qk_space import read_sample_sentences

    from ..conftest import ROOT

    for name in ("en-zh", "en-de"):
        checkpoint = ROOT / "checkpoints" / name
        corpus = json.loads((checkpoint / "config.json").read_text())["metadata"]["corpus"]
        splits = load_splits(corpus)
        sample = read_sample_sentences(checkpoint)
        assert sample == [e.source.strip() for e in splits.test[: len(sample)]], name
        assert not set(sample) & {e.source.strip() for e in splits.train}, name


@pytest.mark.slow  # over 5 s in the inner loop of 2026-12-03 (--durations)
@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "en-zh-extra").exists(), reason="the shared en-zh extras are not here")
def test_more_name_copies_put_more_names_in_sentences_and_none_of_the_protected_ones():
    from model.data import normalise_english, protected_english

    one, three = load_splits("tatoeba-extra-en-zh"), load_splits("tatoeba-extra-en-zh", name_copies=3)
    with_jerry = [sum("Jerry" in e.source for e in splits.train) for splits in (one, three)]
    assert with_jerry[1] >= 3 * with_jerry[0] > 0
    assert len(three.train) > len(one.train) and (one.valid, one.test) == (three.valid, three.test)
    assert not {normalise_english(e.source) for e in three.train} & protected_english()


def test_chinese_training_targets_get_full_width_punctuation_and_numbers_keep_theirs():
    from model.data import full_width_punctuation

    assert full_width_punctuation("很痛吗?") == "很痛吗？"
    assert full_width_punctuation("我找过了, 但找不到。") == "我找过了，但找不到。"  # its space goes too
    assert full_width_punctuation("多漂亮的花啊!") == "多漂亮的花啊！"
    assert full_width_punctuation("会议3:30开始") == "会议3:30开始"  # a time is not Chinese punctuation
    assert full_width_punctuation("我说Hello, world") == "我说Hello, world"  # nor a comma inside English


@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "en-zh-extra").exists(), reason="the shared en-zh extras are not here")
def test_no_chinese_training_target_has_a_half_width_mark_after_a_character():
    import re

    splits = load_splits("tatoeba-extra-en-zh")
    targets = [t for _, t in training_pairs(splits.train)]
    assert not [t for t in targets if re.search(r"[\u4e00-\u9fff][?!,;:]", t)]
    assert sum("？" in t for t in targets) > 9000


def test_machine_learning_targets_drop_the_space_between_chinese_and_latin_words():
    """The TensorFlow translations write "使用 TensorFlow 并", Tatoeba never spaces Chinese: one convention."""
    from model.data import chinese_without_spaces

    assert chinese_without_spaces("如果您在研究中使用 TensorFlow 并想引用") == "如果您在研究中使用TensorFlow并想引用"
    assert chinese_without_spaces("TensorFlow Lite 模型，共 3 层。") == "TensorFlow Lite模型，共3层。"


@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "en-zh-ml").exists(), reason="the shared en-zh-ml data is not here")
def test_machine_learning_pages_are_held_out_whole_and_the_split_is_stable():
    """Neighbouring sentences of one page are near-copies: a page is in one split only, and the split does not
    change between calls."""
    from model.data import chinese_without_spaces, full_width_punctuation, read_ml_pages, split_ml_pages

    first, second = split_ml_pages(DEFAULT_DATA_DIR), split_ml_pages(DEFAULT_DATA_DIR)
    assert first == second
    in_split = {split: set(pairs) for split, pairs in first.items()}
    pages = {}
    for name in ("d2l.tsv", "tensorflow-docs.tsv", "hf-course.tsv"):
        pages.update(read_ml_pages(DEFAULT_DATA_DIR / "en-zh-ml" / name))
    held_out_pages = 0
    for page, pairs in pages.items():
        cleaned = {(en, chinese_without_spaces(full_width_punctuation(zh))) for en, zh in pairs}
        assert len({split for split, held in in_split.items() if cleaned & held}) == 1, page
        held_out_pages += not cleaned & in_split["train"]
    assert held_out_pages > 20  # many pages, not one long one


def test_non_words_are_counted_per_thousand_output_words():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from non_words import non_words_per_thousand

    known = {"Tom", "jagt", "Jerry", "Ein", "ist"}
    rate, unknown = non_words_per_thousand(["Tom jagt Je.", "Ein Frager ist eine Entschaft."], known)
    assert unknown == ["Je", "Frager", "eine", "Entschaft"]
    assert rate == 1000 * 4 / 8


def test_an_output_stutters_when_one_piece_comes_three_times_in_a_row():
    """段段段段段 stutters; 段段 or 段 x 段 x 段 does not."""
    from model.evaluate import stutter_share, stutters

    assert stutters([7, 9, 9, 9, 4]) and not stutters([9, 9, 4, 9, 9]) and not stutters([9, 5, 9, 5, 9])
    assert not stutters([]) and not stutters([9])
    assert stutter_share([[9, 9, 9], [9, 9], [1, 2, 3], [4, 4, 4, 4]]) == 0.5


def test_terms_are_also_trained_as_a_teachers_sentence_starts_with_them():
    """--capitalised-terms: "Softmax turns scores into probabilities." starts with a word the machine-learning text
    writes lower-case (softmax 54 times, Softmax twice): each lower-case term gets a copy with a capital, its
    Chinese unchanged; a term already capitalised or not starting with a letter gets none."""
    from model.data import sentence_initial

    terms = [("softmax", "softmax"), ("attention", "注意力"), ("BERT", "BERT"), ("GPU", "GPU"), ("3D", "三维")]
    assert sentence_initial(terms) == [("Softmax", "softmax"), ("Attention", "注意力")]


def test_city_copies_can_be_restricted_to_cities_whose_german_name_differs():
    """The German city copies of issue 33: a pair with Berlin gets copies with another city; with replacements
    only the listed (exonym) cities come in, written the target's way on the target side."""
    from model.data import substitute_names

    cities = {"Berlin": "Berlin", "London": "London", "Vienna": "Wien", "Moscow": "Moskau"}
    pairs = [("Tom lives in Berlin.", "Tom wohnt in Berlin."), ("Tom is here.", "Tom ist hier.")]
    copies = substitute_names(pairs, cities, copies=10, target_words=True, replacements=["Vienna", "Moscow"])
    assert len(copies) == 10  # only the pair with a city is copied
    assert {en for en, _ in copies} <= {"Tom lives in Vienna.", "Tom lives in Moscow."}
    assert all(
        de == {"Vienna": "Tom wohnt in Wien.", "Moscow": "Tom wohnt in Moskau."}[en.split()[-1][:-1]]
        for en, de in copies
    )


def test_every_city_gets_as_many_sentences_whatever_the_pairs_that_hold_one():
    """--sentences-per-city (issue 32): each city is put into the same number of everyday sentences (as many as
    there are pairs to use), replacing the one city a pair holds on both sides; a pair with two cities or a city
    on one side only is not used."""
    from model.data import sentences_for_every_name

    cities = {"Boston": "波士顿", "Munich": "慕尼黑", "Vienna": "维也纳", "Paris": "巴黎"}
    pairs = [
        ("Tom lives in Boston.", "汤姆住在波士顿。"),
        ("I went to Paris.", "我去了巴黎。"),
        ("Boston is far from Paris.", "波士顿离巴黎很远。"),  # two cities: not used
        ("Paris is nice.", "这很好。"),  # the city on one side only: not used
        ("Tom is here.", "汤姆在这里。"),
    ]
    copies = sentences_for_every_name(pairs, cities, per_name=1)
    for city, chinese in cities.items():
        mine = [(en, zh) for en, zh in copies if city in en]
        assert len(mine) == 1 and all(chinese in zh for _, zh in mine), city
    # two usable pairs: Munich and Vienna get both; Boston and Paris one (a pair never gets its own city again)
    counts = {c: sum(c in en for en, _ in sentences_for_every_name(pairs, cities, per_name=5)) for c in cities}
    assert counts == {"Boston": 1, "Munich": 2, "Vienna": 2, "Paris": 1}
    assert {en for en, _ in copies} <= {f"Tom lives in {c}." for c in cities} | {f"I went to {c}." for c in cities}
    assert not [zh for en, zh in copies if "波士顿" in zh and "Boston" not in en]


def test_a_name_is_put_after_my_friend_on_both_sides():
    """--apposed-names (issue 32): "my friend" gets a name after it in English and after 朋友 in Chinese, so the
    model sees "My friend Jack" (7 such pairs in 69k everyday ones); a pair whose Chinese has no single rendering
    of the relation, a possessive ("my friend's") or two relations is not used, and a name already in the pair is
    never drawn."""
    from model.data import apposed_names

    names = {"Jack": "杰克", "Tom": "汤姆", "Mary": "玛丽"}
    pairs = [
        ("My friend lives in Paris.", "我的朋友住在巴黎。"),
        ("Tom helped his brother.", "汤姆帮了他弟弟。"),
        ("My friend's car is red.", "我朋友的车是红色的。"),  # a possessive: not used
        ("My friend met my sister.", "我朋友见了我妹妹。"),  # two relations: not used
        ("I miss my friend.", "我想念他。"),  # the relation not in the Chinese: not used
        ("My brother and his brother are here.", "我哥哥和他哥哥在这里。"),  # two relations
    ]
    copies = apposed_names(pairs, names, copies=6)
    assert len(copies) == 12
    for en, zh in copies[:6]:
        name = en.split()[2]
        assert en == f"My friend {name} lives in Paris." and zh == f"我的朋友{names[name]}住在巴黎。"
    for en, zh in copies[6:]:
        name = en.split()[-1].rstrip(".")
        assert name != "Tom" and zh == f"汤姆帮了他弟弟{names[name]}。"


def test_language_names_are_replaced_on_both_sides_in_the_same_form():
    """--language-copies (issue 32): "English into Japanese" becomes two other languages on both sides, each in the
    form the Chinese used (英文 -> …文, 日语 -> …语); "Japanese people" (日本人, no rendering of the language) and a
    language the Chinese writes twice are not used."""
    from model.data import LANGUAGE_NAMES_ZH, substitute_languages

    pairs = [
        ("Can you translate English into Japanese?", "你可以把英文翻译成日语吗？"),
        ("Japanese people are kind.", "日本人很友好。"),
        ("English is English.", "英语就是英语。"),
        ("Tom is here.", "汤姆在这里。"),
    ]
    copies = substitute_languages(pairs, copies=20)
    assert len(copies) == 20
    for en, zh in copies:
        words = en.split()
        first, second = words[3], words[5].rstrip("?")
        assert {first, second}.isdisjoint({"English", "Japanese"}) and first != second
        assert zh == f"你可以把{LANGUAGE_NAMES_ZH[first][1]}翻译成{LANGUAGE_NAMES_ZH[second][0]}吗？"
    assert any("Chinese" in en for en, _ in copies)


def test_a_place_the_german_side_renders_otherwise_is_mined_from_the_pairs_themselves():
    """--mined-cities (issue 33): Beijing, which CLDR's German city list lacks, is written Peking in most German
    sentences with it, so the city copies learn Beijing -> Peking; a name the German side copies, a person written
    like a place (Columbus discovered ...), a place seen twice and a place CLDR already lists are not mined."""
    from model.data import mined_city_names

    pairs = [
        ("I went to Beijing.", "Ich bin nach Peking gefahren."),
        ("Beijing is big.", "Peking ist groß."),
        ("He lives in Beijing.", "Er wohnt in Beijing."),
        ("She flew to Beijing.", "Sie flog nach Peking."),
        ("Paris is big.", "Paris ist groß."),
        ("I live in Paris.", "Ich wohne in Paris."),
        ("Paris is old.", "Paris ist alt."),
        ("Columbus discovered America.", "Kolumbus entdeckte Amerika."),
        ("Columbus sailed west.", "Kolumbus segelte nach Westen."),
        ("Columbus was brave.", "Kolumbus war mutig."),
        ("I was in Vienna.", "Ich war in Wien."),
        ("Vienna is old.", "Wien ist alt."),
        ("Vienna is big.", "Wien ist groß."),
        ("We drove to Lhasa.", "Wir fuhren nach Lhasa."),
        ("Lhasa is high.", "Lhasa ist hoch."),
    ]
    places = {"Beijing", "Paris", "Columbus", "Vienna", "Lhasa"}
    assert mined_city_names(pairs, places, known={"Vienna"}) == {"Beijing": "Peking"}


@pytest.mark.slow
@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "en-zh-ml").exists(), reason="the shared en-zh-ml data is not here")
def test_city_copies_put_other_cities_in_everyday_chinese_pairs_and_none_of_the_protected_ones():
    """--city-copies (issue 32): cities such as Munich/慕尼黑 come into sentences as copies of pairs with another
    city; validation and test do not change and no protected sentence (lesson, must-translate) is trained on."""
    from model.data import normalise_english, protected_english, read_names

    places = read_names(DEFAULT_DATA_DIR / "en-zh-extra" / "cedict-places.tsv")
    plain, copied = (load_splits("tatoeba-extra-ml-en-zh", city_copies=n) for n in (0, 2))
    plain_pairs, copied_pairs = training_pairs(plain.train), training_pairs(copied.train)

    def cities_in_sentences(pairs):
        return {c for en, zh in pairs for c in places if places[c] in zh and f" {c}" in en}

    assert len(cities_in_sentences(copied_pairs)) > len(cities_in_sentences(plain_pairs)) + 500
    assert 1500 < len(copied_pairs) - len(plain_pairs) <= 2 * 882
    assert (plain.valid, plain.test, plain.domains) == (copied.valid, copied.test, copied.domains)
    assert not {normalise_english(e.source) for e in copied.train} & protected_english()


@pytest.mark.slow
@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "en-zh-ml").exists(), reason="the shared en-zh-ml data is not here")
def test_short_ml_repeat_adds_only_short_machine_learning_pairs_and_leaves_the_held_out_sets():
    """--short-ml-repeat (issue 32): the machine-learning pairs a teacher's sentences resemble (at most
    SHORT_ML_WORDS English words) are seen more often; nothing long, nothing held out, nothing protected is added."""
    import collections

    from model.data import SHORT_ML_WORDS, normalise_english, protected_english

    plain, more = (load_splits("tatoeba-extra-ml-en-zh", short_ml_repeat=n) for n in (0, 2))
    added = collections.Counter(training_pairs(more.train))
    added.subtract(training_pairs(plain.train))
    added = +added
    assert 2 * 3000 < sum(added.values()) < 2 * 5000
    assert all(len(en.split()) <= SHORT_ML_WORDS for en, _ in added)
    assert (plain.valid, plain.test, plain.domains) == (more.valid, more.test, more.domains)
    held_out = {normalise_english(e.source) for d in more.domains.values() for e in d} | protected_english()
    assert not {normalise_english(en) for en, _ in added} & held_out


def test_names_held_out_by_template_with_other_names():
    """Issue 57: a names set holds sentences with two names, or a name and a city, on both sides, one per template,
    written with other names; held_out_by_template then drops every training pair of those templates (the copies
    with other names too), and names_kept counts the translations that keep every name."""
    from model.data import copies_with_other_names, held_out_by_template, names_held_out, reversed_examples
    from model.evaluate import names_kept

    names = {"Tom": "汤姆", "Mary": "玛丽", "Jack": "杰克", "Emma": "爱玛", "Anna": "安娜", "Peter": "彼得"}
    cities = {"Boston": "波士顿", "Munich": "慕尼黑", "Vienna": "维也纳"}
    pairs = [
        ("Tom and Mary are friends.", "汤姆和玛丽是朋友。"),
        ("Jack and Emma are friends.", "杰克和爱玛是朋友。"),  # a copy of the same template
        ("Tom lives in Boston.", "汤姆住在波士顿。"),
        ("Tom is here.", "汤姆在这里。"),  # one name: not a candidate
        ("Mary met Peter.", "玛丽遇见了某人。"),  # Peter not in the Chinese: one name found
    ]
    sets, templates = names_held_out(pairs, names, cities, {"names_valid": 1, "names_test": 1})
    assert sorted(len(v) for v in sets.values()) == [1, 1] and len(templates) == 2
    for (example,) in sets.values():
        assert len(example.keep) == 2
        assert all(en in example.source and zh in example.references[0] for en, zh in example.keep)
        assert example.source not in dict(pairs)  # written with other names or another city
    assert held_out_by_template(pairs, templates, names, cities) == pairs[3:]
    keep = (("Anna", "安娜"), ("Peter", "彼得"))
    examples = [Example("Anna and Peter are friends.", ["安娜和彼得是朋友。"], keep)] * 2
    assert names_kept(["安娜和彼得是朋友。", "安娜是朋友。"], examples) == 0.5
    assert score(["安娜和彼得是朋友。", "安娜是朋友。"], examples, "zh")["names_kept"] == 0.5
    assert "names_kept" not in score(["x"], [Example("a", ["x"])], "13a")
    # the remedy: copies of the two-name and name-and-city pairs with all their names replaced
    copies = copies_with_other_names(pairs, names, cities, copies=3)
    assert len(copies) == 9  # three pairs of the five hold two names, or a name and a city
    for en, zh in copies:
        found = [(w, c) for w, c in {**names, **cities}.items() if w in en]
        assert len(found) == 2 and all(c in zh for _, c in found), (en, zh)
    # read the other way (zh-en), the English names are kept, each as a word
    (reversed_example,) = reversed_examples(examples[:1])
    assert reversed_example.source == "安娜和彼得是朋友。" and reversed_example.keep[0] == ("安娜", "Anna")
    assert names_kept(["Anna and Peter are friends.", "Annabel and Peter are friends."], [reversed_example] * 2) == 0.5


def test_each_unlisted_name_gets_its_sentences_beside_another_name():
    """The remedy for names no list holds (Lisa 丽萨): for each, per_name everyday pairs with two names, or a name
    and a city, with one given name replaced by it on both sides; the other name or the city stays."""
    from model.data import sentences_for_unlisted_names

    names = {"Tom": "汤姆", "Mary": "玛丽", "Jack": "杰克"}
    cities = {"Boston": "波士顿", "Munich": "慕尼黑"}
    pairs = [
        ("Tom and Mary are friends.", "汤姆和玛丽是朋友。"),
        ("Tom lives in Boston.", "汤姆住在波士顿。"),
        ("Jack met Mary in Munich.", "杰克在慕尼黑遇见了玛丽。"),
        ("Tom is here.", "汤姆在这里。"),  # one name: not used
    ]
    new = {"Lisa": "丽萨", "Laura": "劳拉"}
    sentences = sentences_for_unlisted_names(pairs, new, names, cities, per_name=2)
    assert len(sentences) == 4
    for name, chinese in new.items():
        mine = [(en, zh) for en, zh in sentences if name in en]
        assert len(mine) == 2 and all(chinese in zh for _, zh in mine)
        for en, zh in mine:  # one given name replaced, whatever else the sentence named still there, both sides
            kept = [(w, c) for w, c in {**names, **cities}.items() if w in en]
            assert len(kept) >= 1 and all(c in zh for _, c in kept) and "在这里" not in zh, (en, zh)


def test_the_german_lesson_words_are_found_in_compounds_and_not_in_other_words():
    """Issue 57: CORE_GERMAN_WORDS marks the machine-learning pairs that --core-word-repeat shows more often."""
    from model.data import CORE_GERMAN_WORDS

    for found in (
        "Der Encoder hat sechs Schichten.",
        "eine Einbettungsschicht",
        "acht Köpfe",
        "Selbstaufmerksamkeit",
        "ein neuronales Netz",
        "die Wahrscheinlichkeiten",
        "das Vokabular",
        "ein Sprachmodell",
    ):
        assert CORE_GERMAN_WORDS.search(found), found
    for not_found in ("Geschichten erzählen", "Er schüttelt den Kopfsalat.", "Die Schichtarbeit"):
        assert not CORE_GERMAN_WORDS.search(not_found), not_found


def test_a_chinese_name_with_several_english_spellings_is_read_back_as_the_everyday_one():
    """Issue 58: CC-CEDICT gives 杰瑞 as Gerry and Jerry; read the other way, the copies taught 杰瑞 -> "Gerry".
    The Chinese -> English corpus writes each such name as the spelling its everyday sentences use most, in its
    training pairs, word lists and names sets, while a Tatoeba test reference stays as written."""
    from model.data import Splits, english_name_for, read_back_as_one_name

    names = [("Gerry", "杰瑞"), ("Jerry", "杰瑞"), ("Johan", "约翰"), ("John", "约翰"), ("Tom", "汤姆")]
    chosen = english_name_for(names, Counter({"Jerry": 6, "Gerry": 1, "John": 30}))
    assert chosen == {"杰瑞": ("Jerry", ["Gerry"]), "约翰": ("John", ["Johan"])}  # Tom has one spelling
    splits = Splits(
        train=[Example("杰瑞和约翰是朋友。", ["Gerry and Johan are friends."]), Example("盖瑞来了。", ["Gerry came."])],
        valid=[],
        test=[Example("杰瑞在哪里？", ["Where is Gerry?"])],
        names=[("杰瑞", "Gerry"), ("杰瑞", "Jerry")],
        domains={"names_test": [Example("杰瑞住在柏林。", ["Gerry lives in Berlin."], (("杰瑞", "Gerry"),))]},
    )
    read = read_back_as_one_name(splits, chosen)
    assert read.train[0].references == ["Jerry and John are friends."]
    assert read.train[1].references == ["Gerry came."]  # its Chinese is not 杰瑞: another name, left alone
    assert read.names == [("杰瑞", "Jerry")]  # the two spellings become one pair
    assert read.test[0].references == ["Where is Gerry?"]
    names_test = read.domains["names_test"][0]
    assert names_test.references == ["Jerry lives in Berlin."] and names_test.keep == (("杰瑞", "Jerry"),)


def test_a_core_chinese_word_is_repeated_only_beside_its_english_rendering():
    """追 beside "chase" is seen `repeat` more times; 追 in 追求 "pursue", and pairs without 追, once."""
    from model.data import Splits, with_core_chinese_words

    train = [
        Example("狗追兔子。", ["The dog chased the rabbit."]),
        Example("他们在追求幸福。", ["They are after happiness."]),
        Example("我是学生。", ["I am a student."]),
        Example("每个注意力头都不同。", ["Every attention head is different."]),
    ]
    weighed = with_core_chinese_words(Splits(train=train, valid=[], test=[]), repeat=3)
    seen = Counter(e.source for e in weighed.train)
    assert seen == {"狗追兔子。": 4, "每个注意力头都不同。": 4, "他们在追求幸福。": 1, "我是学生。": 1}
    assert with_core_chinese_words(Splits(train=train, valid=[], test=[]), repeat=0).train == train

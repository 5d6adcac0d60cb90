"""The sentences a class meets first come out right, and none of them was ever trained on.

tests/data/must_translate.tsv lists the seeds' own sentences, every example sentence, minimal pair and lesson
button, with the words a correct translation must contain in order."""

from __future__ import annotations

import re

import pytest

from model.checkpoint import load_checkpoint
from model.data import (
    DEFAULT_DATA_DIR,
    MUST_TRANSLATE_CHINESE,
    UNLISTED_NAMES,
    corpus_available,
    load_splits,
    normalise_english,
    protected_english,
    read_everyday,
    read_must_translate,
    read_names,
    training_pairs,
)
from model.decode import translate
from model.evaluate import contains_in_order, translated_right

from ..conftest import ROOT

# every test here reads the shipped weights; together they take minutes (translations of every row)
pytestmark = [pytest.mark.checkpoint, pytest.mark.slow]

ROWS = read_must_translate()


def test_order_check_reads_alternatives_and_order():
    assert contains_in_order("汤姆追杰瑞。", ["汤姆", "追", "杰瑞"])
    assert not contains_in_order("杰瑞追汤姆。", ["汤姆", "追", "杰瑞"])
    assert contains_in_order("我们下个星期去看奶奶。", ["下周|下个星期", "奶奶|祖母"])
    assert contains_in_order("Jerry hat Toms Kuchen gegessen.", ["Jerry", "Tom"], whole_words=True)
    assert not contains_in_order("Tom ist nie zu Rome.", ["Tom", "Rom"], whole_words=True)


def test_every_sentence_the_app_offers_is_listed():
    """Listed, so a test holds it out of every training file and scores it: the lessons' sentences, the minimal
    pairs and the examples, English ones in must_translate.tsv, Chinese ones in must_translate_zh.tsv."""
    from model.data import MUST_TRANSLATE_CHINESE, read_everyday
    from ui.checkpoints import DEFAULT_EXAMPLES, MINIMAL_PAIRS
    from ui.lessons.masks import LONG_PARTNER, PARTNERS, SHORT_PARTNER
    from ui.lessons.positions import EXAMPLE, EXAMPLES

    listed = {(r.english, r.language) for r in ROWS}
    offered = [(s, "zh") for s in (EXAMPLE, SHORT_PARTNER, LONG_PARTNER)]
    offered += [(s, "zh") for pair in MINIMAL_PAIRS["en"] for s in (pair.first, pair.second)]
    for language in ("zh", "de"):
        examples = (ROOT / "checkpoints" / f"en-{language}" / "examples.txt").read_text().splitlines()
        offered += [(s, language) for s in examples if s]
    assert [o for o in offered if o not in listed] == []
    listed_chinese = {r.english for r in read_must_translate(MUST_TRANSLATE_CHINESE)}
    listed_chinese |= {e.source for e in read_everyday("en", source_language="zh")}
    chinese = [s for pair in MINIMAL_PAIRS["zh"] for s in (pair.first, pair.second)] + DEFAULT_EXAMPLES["zh"]
    chinese += [EXAMPLES["zh"], *PARTNERS["zh"]]
    for examples in sorted((ROOT / "checkpoints").glob("zh-*/examples.txt")):  # a Chinese-source checkpoint's
        chinese += [s for s in examples.read_text(encoding="utf-8").splitlines() if s]
    assert [s for s in chinese if s not in listed_chinese] == []


@pytest.fixture(scope="module")
def en_zh():
    return load_checkpoint(ROOT / "checkpoints" / "en-zh")


# What the shipped en-zh model still gets wrong (greedy), checked strictly: a fix makes these tests fail until
# the row leaves this table (`python benchmarks/must_translate_report.py checkpoints/en-zh --table` prints it).
# Continued on machine-learning text (issue 32, stage 9; issue 57's new files, stage 10) and on names no list holds
# (issue 57, stage 11): 46 of the 54 lesson rows right, 23 of the 26 app rows (stage 10: 24; its "too tired" row held
# the words, but a reader read 动物街上 as no phrase).
EN_ZH_STILL_WRONG = {
    "The animal didn't cross the street because it was too tired.": "动物条路因为太累了。",
    "The trophy didn't fit in the suitcase because it was too big.": "因为它的手提箱没有拟合它太大。",
    "The trophy didn't fit in the suitcase because it was too small.": (
        "因为那个手提箱里没有拟合它太小，所以它也没有适合这个手提箱。"
    ),
    "Cross-attention connects the decoder to the encoder.": "把连接连接到解码器的编码器。",
    "The model translates English into Chinese.": "模型翻译成英文。",
    "The matrix has eight rows and eight columns.": "矩阵矩阵有八行。",
    "The input sentence has five words.": "输入有五个单词。",
    "Susan studies computer science in Boston.": "苏珊科学在波士顿。",
    "My friend Jack lives in Munich.": "我的朋友住在慕尼黑。",
    "Jerry is hiding from Tom.": "杰瑞在隐藏上。",
    "Please close the kitchen window.": "请关上窗户。",
}


def _param(row, still_wrong: dict[str, str]):
    """The row, marked as a strict xfail with the shipped model's output when it is in a still-wrong table."""
    if row.english in still_wrong:
        wrong = still_wrong[row.english]
        return pytest.param(row, marks=pytest.mark.xfail(reason=f"the shipped model writes {wrong}", strict=True))
    return row


@pytest.mark.parametrize(
    "row", [_param(r, EN_ZH_STILL_WRONG) for r in ROWS if r.language == "zh"], ids=lambda r: r.english
)
def test_en_zh_greedy_translation_has_the_words_in_order(en_zh, row):
    tr = translate(en_zh.model, en_zh.source_tokenizer, en_zh.target_tokenizer, row.english, need_qkv=False)
    assert contains_in_order(tr.target_text, row.words), (row.english, tr.target_text)


# What the shipped en-de model gets wrong (greedy), checked strictly: a fix makes these tests fail until the row
# leaves this table. Retrained with a joint vocabulary and continued with the German city names the training pairs
# show (issue 33), it copies the names it was trained on and writes Beijing as Peking; Lisa, a name the German data
# holds only as "Mona Lisa", comes out "Lissa" (model card, gaps). Continued on the machine-learning data (issue
# 57): 28 of the 42 lesson rows right by their words (stage 4: 19), the seeds' "The cat chases the dog." in the
# accusative since stage 6; a German reader judged 22 of them right (the rows are stricter where German allows
# another word or order, and looser on case and register: the model card).
EN_DE_STILL_WRONG = {
    "Every layer has eight attention heads.": "Jeder Schicht hat acht Aufmerksamkeits.",
    "The model has two stacks of layers.": "Das Modell hat zwei Stackel von Schotern.",
    "The attention weights add up to one.": "Die Aufmerksamkeits Gewichte ergänzen sich einer.",
    "The output layer chooses the next word.": "Die Ausgabe legt das nächste Wort aus.",
    "The vocabulary has eight thousand words.": "Das Vokabular hat achttausend Worte.",
    "The softmax turns the scores into probabilities.": "Die Softmax dreht die Punkte in die Probilities.",
    "The decoder cannot see future words.": "Der Decoder kann Futures nicht sehen.",
    "Training takes a long time.": "Eine lange Zeit braucht man lange.",
    "Machine learning needs a lot of data.": "Machine Learning braucht viele Daten.",
    "Artificial intelligence helps many people.": "ifische Intelligenz hilft vielen Leuten.",
    "Attention helps the model translate.": "Achtung hilft dem Modell übersetzt.",
    "Max works in Munich.": "Max arbeitet in Maskat.",
    "Sophie visited her aunt in Cologne.": "Sophie besuchte ihre Tante in Cologne.",
    "Jerry is waiting for Tom in Paris.": "Jerry wartet in Paris.",
    "My friend Anna lives in Tokyo.": "Mein Freund in Tokio lebt Anna.",
    "Lisa is studying in Berlin.": "Lissa studiert in Berlin.",
}


@pytest.fixture(scope="module")
def en_de():
    return load_checkpoint(ROOT / "checkpoints" / "en-de")


@pytest.mark.parametrize(
    "row", [_param(r, EN_DE_STILL_WRONG) for r in ROWS if r.language == "de"], ids=lambda r: r.english
)
def test_en_de_greedy_translation_has_the_words_in_order(en_de, row):
    tr = translate(en_de.model, en_de.source_tokenizer, en_de.target_tokenizer, row.english, need_qkv=False)
    assert contains_in_order(tr.target_text, row.words, whole_words=True), (row.english, tr.target_text)


@pytest.fixture(scope="module")
def zh_en():
    return load_checkpoint(ROOT / "checkpoints" / "zh-en")


# What the shipped zh-en model gets wrong (greedy) by the rows' words, checked strictly as above. Read by a reader
# of both languages, 39 of the 51 are right (stage 3; the model card): the rows are stricter than the reader where
# English allows another order or word ("the output of the encoder", "AI", "The food at this restaurant") and where the
# row asks for the seeds' verb ("ran after" for 追逐, as the training data renders it).
ZH_EN_STILL_WRONG = {
    "汤姆追逐杰瑞。": "Tom ran after Jerry.",
    "杰瑞追逐汤姆。": "Jerry ran after Tom.",
    "早上好。": "It's fine in the morning.",
    "解码器一次生成一个词。": "The decoder produces a word.",
    "我们的模型有六层编码器。": "Our model has six layers.",
    "解码器会看编码器的输出。": "The decoder will look at the output of the encoder.",
    "人工智能正在改变世界。": "AI is changing the world.",
    "学生们在看热力图。": "The students are reading as hot as it is.",
    "每一层都有一个前馈网络。": "Every layer has one to feed the network.",
    "莉莎和艾玛是好朋友。": "Mary and Armen are good friends.",
    "我的朋友杰克住在巴黎。": "My friend lives in Paris.",
    "马克斯和彼得一起去了罗马。": "Mark and Peter went to Rome.",
    "今天天气很好。": "It's fine today.",
    "火车晚点了二十分钟。": "The train is late by 20 minutes.",
    "这家饭店的菜很好吃。": "The food at this restaurant is delicious.",
}


@pytest.mark.parametrize(
    "row", [_param(r, ZH_EN_STILL_WRONG) for r in read_must_translate(MUST_TRANSLATE_CHINESE)], ids=lambda r: r.english
)
def test_zh_en_greedy_translation_has_the_words_in_order(zh_en, row):
    tr = translate(zh_en.model, zh_en.source_tokenizer, zh_en.target_tokenizer, row.english, need_qkv=False)
    assert translated_right(tr.target_text, row.words, "en"), (row.english, tr.target_text)


def test_no_listed_sentence_is_in_the_en_zh_training_data():
    """Normalised English (case, spacing, final punctuation) against every training file, the name-substituted
    copies included; and the validation and test English sentences are not trained on either."""
    if not corpus_available("tatoeba-extra-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    splits = load_splits("tatoeba-extra-en-zh")
    trained = {normalise_english(e.source) for e in splits.train} | {normalise_english(en) for en, _ in splits.lexicon}
    protected = protected_english()
    assert {normalise_english(r.english) for r in ROWS} <= protected
    assert {normalise_english(e.source) for e in read_everyday("zh")} <= protected
    assert normalise_english("Mary calls her brother every evening.") in protected  # the gold alignment sets
    assert trained & protected == set()
    assert trained & {normalise_english(e.source) for e in splits.valid + splits.test} == set()


def test_no_listed_sentence_is_in_the_en_zh_machine_learning_corpus():
    """The corpus with machine-learning text (issue 32): no protected sentence in its training pairs, word pairs,
    names, places or terms; no held-out English sentence (everyday or machine-learning) trained on; and the
    machine-learning validation and test sets are whole pages no training pair comes from. With every copy option
    on: other cities (as the shipped model trained), names put after "my friend" and other languages (runs V, W)."""
    if not corpus_available("tatoeba-extra-ml-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    from model.data import split_ml_pages

    splits = load_splits(
        "tatoeba-extra-ml-en-zh", name_copies=3, sentences_per_city=10, apposed_name_copies=3, language_copies=3
    )
    trained = {normalise_english(e.source) for e in splits.train}
    trained |= {normalise_english(en) for en, _ in splits.lexicon + splits.names + splits.terms}
    assert trained & protected_english() == set()
    held_out = splits.valid + splits.test + splits["ml_valid"] + splits["ml_test"]
    assert trained & {normalise_english(e.source) for e in held_out} == set()
    assert len(splits["ml_valid"]) >= 400 and len(splits["ml_test"]) >= 900
    pages = split_ml_pages(DEFAULT_DATA_DIR)
    ml_trained = {pair for pair in pages["train"]}
    assert ml_trained & set(pages["ml_valid"] + pages["ml_test"]) == set()
    # the lesson's words are in what the model learns from
    assert ("encoder", "编码器") in splits.terms and ("Munich", "慕尼黑") in splits.names


def test_no_listed_sentence_is_in_the_en_de_training_corpus():
    """The English-German corpus of issue 33 (copies with other names and cities included): no protected
    sentence (the names test's among them), no validation or test English sentence of Tatoeba or Multi30k."""
    if not corpus_available("tatoeba-extra-en-de"):
        pytest.skip("shared corpora not beside the repo")
    splits = load_splits("tatoeba-extra-en-de")
    trained = {normalise_english(e.source) for e in splits.train} | {normalise_english(en) for en, _ in splits.lexicon}
    names_test = {normalise_english(r.english) for r in ROWS if r.group == "names"}
    assert len(names_test) >= 40 and names_test <= protected_english()
    assert trained & protected_english() == set()
    assert trained & {normalise_english(e.source) for e in splits.valid + splits.test} == set()
    # every name and city the names test asks for is in what the model learns from, in at least 20 training pairs;
    # the "unseen names" group's Lisa only as "Mona Lisa"
    asked = {w for r in ROWS if r.group == "names" for w in re.findall(r"\b[A-Z][a-z]+\b", r.english)}
    asked -= {"My", "Is", "The"}
    assert {"Tom", "Jerry", "Mary", "Anna", "Berlin", "Vienna", "Beijing", "Shanghai", "London"} <= asked
    for word in asked:
        assert sum(bool(re.search(rf"\b{word}\b", e.source)) for e in splits.train) >= 20, word
    assert all("Mona Lisa" in e.source for e in splits.train if re.search(r"\bLisa\b", e.source))


def test_no_listed_sentence_is_in_the_en_de_names_fine_tune():
    """The en-de names corpus (name-substituted copies included) holds no protected sentence, and no validation
    or test English sentence of the en-de model."""
    if not corpus_available("names-en-de"):
        pytest.skip("shared corpora not beside the repo")
    splits = load_splits("names-en-de")
    trained = {normalise_english(e.source) for e in splits.train}
    assert trained & protected_english() == set()
    assert trained & {normalise_english(e.source) for e in splits.valid + splits.test} == set()
    # the copies teach many names, where Tatoeba's German side has hardly any but Tom and Mary
    names = read_names(DEFAULT_DATA_DIR / "en-zh-extra" / "cedict-names.tsv")
    seen = {word for e in splits.train for word in re.findall(r"[A-Z][a-z]+", e.source) if word in names}
    assert len(seen) > 400


def test_no_listed_sentence_is_in_the_new_machine_learning_files_as_trained():
    """Issue 57's files: en-zh's added pages (held out by page on their own, so the older held-out pages stay as
    they were) and en-de's machine-learning corpus with its machine translations; no protected sentence, no
    held-out sentence of either domain trained on, and the held-out pages share no pair with training."""
    if not corpus_available("tatoeba-extra-ml-en-de") or not corpus_available("tatoeba-extra-ml-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    from model.data import ML_ADDED_FILES, ML_ADDED_HELD_OUT_PAIRS, split_ml_de_pages, split_ml_pages

    for corpus, options in (
        ("tatoeba-extra-ml-en-zh", dict(name_copies=3, sentences_per_city=10, added_ml_repeat=2)),
        ("tatoeba-extra-ml-en-de", dict(ml_repeat=3, short_ml_repeat=2, machine_translated_repeat=1)),
    ):
        splits = load_splits(corpus, **options)
        trained = {normalise_english(e.source) for e in splits.train}
        trained |= {normalise_english(en) for en, _ in splits.lexicon + splits.names + splits.terms}
        assert trained & protected_english() == set(), corpus
        held_out = splits.valid + splits.test + [e for d in splits.domains.values() for e in d]
        assert trained & {normalise_english(e.source) for e in held_out} == set(), corpus
        assert all(len(examples) >= 200 for name, examples in splits.domains.items() if name.startswith("ml")), corpus
    added = split_ml_pages(DEFAULT_DATA_DIR, ML_ADDED_FILES, ML_ADDED_HELD_OUT_PAIRS)
    assert set(added["train"]) & set(added["ml_added_valid"] + added["ml_added_test"]) == set()
    german = split_ml_de_pages(DEFAULT_DATA_DIR)
    assert set(german["train"] + german["train_mt"]) & set(german["ml_valid"] + german["ml_test"]) == set()
    # the lesson's words are in what the German model learns from, a few dozen times an epoch, and more often with
    # --core-word-repeat
    german_side = [r for e in load_splits("tatoeba-extra-ml-en-de", ml_repeat=3).train for r in e.references]
    assert sum("Encoder" in r for r in german_side) >= 20
    weighed = load_splits("tatoeba-extra-ml-en-de", ml_repeat=3, core_word_repeat=5).train
    assert sum("Encoder" in r for e in weighed for r in e.references) >= sum("Encoder" in r for r in german_side) + 50


def test_no_listed_sentence_is_in_the_zh_en_corpus():
    """Issue 58: the English-Chinese corpus read the other way. Its held-out pairs are en-zh's (split by English
    sentence): no held-out English nor Chinese sentence is trained on, nor any Chinese sentence the app offers a
    Chinese-source class (tests/data/must_translate_zh.tsv, the everyday set's Chinese)."""
    if not corpus_available("tatoeba-extra-ml-zh-en"):
        pytest.skip("shared corpora not beside the repo")
    from model.data import MUST_TRANSLATE_CHINESE, normalise_chinese, protected_chinese

    splits = load_splits(  # stage 2's options: the copies with two names and the core words repeated too
        "tatoeba-extra-ml-zh-en",
        name_copies=3,
        sentences_per_city=10,
        added_ml_repeat=2,
        two_name_copies=5,
        core_word_repeat=10,
    )
    protected = protected_chinese()
    assert {normalise_chinese(r.english) for r in read_must_translate(MUST_TRANSLATE_CHINESE)} <= protected
    assert normalise_chinese("猫追狗。") in protected and normalise_chinese("猫追狗?") in protected
    trained = {normalise_chinese(e.source) for e in splits.train}
    trained |= {normalise_chinese(zh) for zh, _ in splits.lexicon + splits.names + splits.terms}
    assert trained & protected == set()
    held_out = splits.valid + splits.test + [e for d in splits.domains.values() for e in d]
    assert trained & {normalise_chinese(e.source) for e in held_out} == set()
    trained_english = {normalise_english(r) for e in splits.train for r in e.references}
    assert trained_english & {normalise_english(r) for e in held_out for r in e.references} == set()
    assert ("编码器", "encoder") in splits.terms and ("慕尼黑", "Munich") in splits.names
    # the seeds' 杰瑞 is read back as Jerry and 约翰 as John, never as CC-CEDICT's other spellings Gerry or Johan
    pairs = [(e.source, r) for e in splits.train for r in e.references] + splits.names
    assert ("杰瑞", "Jerry") in splits.names and ("约翰", "John") in splits.names
    assert not [(zh, en) for zh, en in pairs if "杰瑞" in zh and re.search(r"\bGerry\b", en)]
    assert not [(zh, en) for zh, en in pairs if "约翰" in zh and re.search(r"\bJohann?\b", en)]
    # each pair with 追 and "chase" is seen 11 times (once, and ten more), a pair with 追求 "pursue" once
    chase = [(zh, en) for zh, en in pairs if zh == "狗追兔子。"]
    assert chase == [("狗追兔子。", "The dog chased the rabbit.")] * 11


def test_the_hand_segmented_chinese_sentences_are_listed_ones():
    """tests/data/zh_segmented.txt (benchmarks/chinese_word_level.py) segments sentences of our own lists, which
    no training file holds."""
    from model.data import MUST_TRANSLATE_CHINESE

    hand = (ROOT / "tests" / "data" / "zh_segmented.txt").read_text(encoding="utf-8").splitlines()
    sentences = ["".join(line.split()) for line in hand if line and not line.startswith("#")]
    listed = {r.english for r in read_must_translate(MUST_TRANSLATE_CHINESE)}
    listed |= {e.source for e in read_everyday("en", source_language="zh")}
    assert len(sentences) >= 30 and [s for s in sentences if s not in listed] == []


def test_the_names_sets_are_held_out_by_template_and_ask_for_other_names():
    """Issue 57: en-zh's names_valid and names_test are everyday sentences with two given names, or a name and a
    city, on both sides; no training pair shares a held-out sentence's template (names and cities masked, so no
    name-substituted copy of it is trained on), and each is written with other names, which its reference holds."""
    if not corpus_available("tatoeba-extra-ml-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    from model.data import name_template, names_found

    extra = DEFAULT_DATA_DIR / "en-zh-extra"
    given, cities = read_names(extra / "cedict-names.tsv"), read_names(extra / "cedict-places.tsv")
    splits = load_splits("tatoeba-extra-ml-en-zh", name_copies=3, sentences_per_city=10, apposed_name_copies=1)
    valid, test = splits.domains["names_valid"], splits.domains["names_test"]
    assert len(valid) == len(test) == 100
    held = {name_template(e.source, names_found(e.source, e.references[0], given, cities)) for e in valid + test}
    assert len(held) == 200  # one sentence per template, none in both sets
    for e in valid + test:
        assert len(e.keep) >= 2 and all(en in e.source and zh in e.references[0] for en, zh in e.keep), e
    trained = {name_template(en, names_found(en, zh, given, cities)) for en, zh in training_pairs(splits.train)}
    assert trained & held == set()
    # Tom and Mary are most of the originals; the held-out sentences ask for many other names
    assert len({en for e in valid + test for en, _ in e.keep}) > 150
    # names_unlisted: the same templates, written with given names no list of names holds (Lisa 丽萨, Laura 劳拉)
    unlisted = splits.domains["names_unlisted_valid"] + splits.domains["names_unlisted_test"]
    given_and_unlisted = {**given, **UNLISTED_NAMES}
    assert {
        name_template(e.source, names_found(e.source, e.references[0], given_and_unlisted, cities)) for e in unlisted
    } == held
    assert all(any(en in UNLISTED_NAMES for en, _ in e.keep) for e in unlisted)


def test_the_unlisted_names_are_written_one_way_in_the_everyday_pairs_and_in_no_list_of_names():
    """The names_unlisted sets ask for names the model meets only in everyday pairs: each of UNLISTED_NAMES stands in
    two or more of them, its Chinese in at least half of those (Lisa: 丽萨 twice, the Mona Lisa twice), and in
    neither CC-CEDICT's nor CLDR's names."""
    if not corpus_available("tatoeba-extra-en-zh"):
        pytest.skip("shared corpora not beside the repo")
    from model.data import EXTRA_SENTENCE_FILES, read_pairs

    extra = DEFAULT_DATA_DIR / "en-zh-extra"
    pairs = read_pairs(DEFAULT_DATA_DIR / "tatoeba-en-zh" / "cmn-eng.tsv")
    for name in EXTRA_SENTENCE_FILES:
        pairs += read_pairs(extra / name)
    listed = read_pairs(extra / "cedict-names.tsv") + read_pairs(extra / "cldr-names.tsv")
    for en, zh in UNLISTED_NAMES.items():
        with_name = [chinese for english, chinese in pairs if re.search(rf"\b{en}\b", english)]
        assert len(with_name) >= 2 and 2 * sum(zh in c for c in with_name) >= len(with_name), en
        assert not any(en == e or zh == z for e, z in listed), en

"""The checkpoints that ship in checkpoints/: their shape, fixed translations, and a BLEU floor each."""

from __future__ import annotations

import functools

import pytest

from model.checkpoint import load_checkpoint
from model.data import corpus_available, load_splits, read_everyday
from model.decode import translate
from model.evaluate import bleu_tokenizer_for, score, translate_corpus

from ..conftest import ROOT

# every test here reads the shipped weights; together they take minutes (translations of every row)
pytestmark = [pytest.mark.checkpoint, pytest.mark.slow]

EXPECTED = {
    "en-zh": {
        # stage 10 (issue 57) keeps "a book" (一本书); stage 9 wrote 汤姆在读书。, "Tom is reading"
        "Tom is reading a book.": "汤姆在读一本书。",
        "I don't know what to do.": "我不知道该做什么。",
        "She bought a red car yesterday.": "她昨天买了一辆红色汽车。",
        "The cat is sleeping on the sofa.": "猫在沙发上睡觉。",
        # the stage-2 checkpoint put 将 before 我们 ("下周将我们去看我们的祖母。")
        "We will visit our grandmother next week.": "下周我们会去看我们的祖母。",
        # the seeds' sentences, wrong in the first checkpoint ("汤姆一定会买手术。", "狗的猫喂车。")
        "Tom chases Jerry.": "汤姆追着杰瑞。",
        "The dog chases the cat.": "狗追着猫。",
        # stage 4 dropped 站 ("火车在哪里？", where is the train)
        "Where is the train station?": "火车站在哪里？",
        # everyday sentences
        "I am a student.": "我是个学生。",  # stage 11; stage 10: 我是学生。
        "He does not like coffee.": "他不喜欢咖啡。",
        "I bought a new computer yesterday.": "我昨天买了一台新电脑。",
        "Can you help me with my homework?": "你能帮我做作业吗？",
    },
    "en-de": {
        "A man in a blue shirt is playing the guitar.": "Ein Mann in einem blauen Hemd spielt Gitarre.",
        "Two dogs are running through the snow.": "Zwei Hunde laufen durch den Schnee.",
        "Children are playing soccer in the park.": "Kinder spielen Fußball im Park.",
        "A child is watching the man who is playing the drums.": "Ein Kind beobachtet den Mann, der Schlagzeug spielt.",
        # stage 6 of issue 57 drops the article (stage 5: "…, der eine Zeitung liest."), as German may
        "A woman is sitting next to a man who is reading a newspaper.": (
            "Eine Frau sitzt neben einem Mann, der Zeitung liest."
        ),
        # everyday sentences, which the caption-only checkpoint turned into "Ichchch ein Student." and the like
        "I am a student.": "Ich bin Student.",
        "I love you.": "Ich liebe dich.",
        "He does not like coffee.": "Er mag keinen Kaffee.",
        "I bought a new computer yesterday.": "Ich habe gestern einen neuen Computer gekauft.",
        "Where is the train station?": "Wo ist der Bahnhof?",
        # names, cities and the lesson's words, which the checkpoint with caption-learnt pieces wrote as "Tom jagt
        # Je.", "Tom wohnt in der richtig." and "Ein Frager ist eine Entschaft und ein Rechter." (issue 33)
        "Tom chases Jerry.": "Tom jagt Jerry.",
        "Tom lives in Berlin.": "Tom wohnt in Berlin.",
        # stage 5 of issue 57 said "It is a waste of time" here ("Es ist Zeitverschwendung."); stage 6 is right again,
        # with a comma German would not write
        "Learning a new language takes time.": "Eine neue Sprache zu lernen, braucht Zeit.",
        # the seeds' sentence in the accusative (stage 5 and before: "Die Katze jagt dem Hund.", the dative)
        "The cat chases the dog.": "Die Katze jagt den Hund.",
        "Each head learns a different pattern.": "Jeder Kopf lernt ein anderes Muster.",
        # Beijing as Tatoeba's German writes it (stage 4 of issue 33; stage 3 copied "Beijing"); the lesson's own
        # sentence, which lost its verb and "encoder" before issue 57 ("Ein Transformer-Ausser und ein Decoder.")
        "We will go to Beijing next week.": "Wir werden nächste Woche nach Peking fahren.",
        "A Transformer has an encoder and a decoder.": "Ein Transformer hat einen Encoder und einen Decoder.",
    },
    "zh-en": {
        # the seeds' sentences, with 追 as the training data renders it (past tense; 追逐 "run after": the model card)
        "猫追狗。": "The cat chased the dog.",
        "狗追猫。": "The dog chased the cat.",
        "汤姆追逐杰瑞。": "Tom ran after Jerry.",
        "注意力就是你所需要的一切。": "The attention is everything you need.",
        "她昨天买了一辆红色的汽车。": "She bought a red car yesterday.",
        # stage 3 of issue 58 writes "the vector" (stage 2: "into vectors")
        "编码器把句子变成向量。": "The encoder turned the sentence into the vector.",
        "机器翻译很难。": "Machine translation is difficult.",
        "汤姆住在北京。": "Tom lives in Beijing.",
        "我不知道该做什么。": "I don't know what to do.",
        "今天很冷。": "It's very cold today.",
    },
}
LANGUAGES = {
    "en-zh": ("en", "zh", "tatoeba-extra-ml-en-zh"),
    "en-de": ("en", "de", "tatoeba-extra-ml-en-de"),
    "zh-en": ("zh", "en", "tatoeba-extra-ml-zh-en"),
}
# Greedy BLEU on the first 300 test sentences of each model's benchmark corpus, measured when the checkpoint shipped
# (sacrebleu 2.6): en-zh 39.92 on Tatoeba (tok:zh, cased; the same split as the earlier checkpoints' 39.60, 39.12,
# 39.70, 38.77, 38.82, 38.68, 38.00, 38.97, 36.58 and 35.47), en-de 40.49 on Multi30k test2016 (13a, lowercased; stage 5
# of issue 57 40.73, 40.00 before issue 57's continuation, 40.31 for stage 3 of issue 33 and 38.0 for the checkpoint
# before that retraining), zh-en 41.49 on en-zh's Tatoeba test read the other way (13a, cased; issue 58's stage 3; stage
# 2 41.72, 38.58 before it). The floors leave room for numeric noise.
BLEU_FLOOR = {
    "en-zh": ("tatoeba-en-zh", 38.0, False),
    "en-de": ("multi30k-en-de", 38.5, True),
    "zh-en": ("tatoeba-extra-ml-zh-en", 40.5, False),
}
# Our everyday set (tests/data/everyday.tsv, 131 sentences), greedy, measured at shipping: en-zh BLEU 48.38 / chrF 40.84
# (tok:zh; the earlier checkpoints 47.72 / 40.31, 46.50 / 38.80, 47.38 / 39.83, 44.57 / 37.14, 43.70 / 37.10, 44.50 /
# 37.62, 43.28 / 36.36, 44.21 / 36.98, 41.57 / 34.55 and 36.37 / 31.11), en-de BLEU 57.64 / chrF 75.95 (13a, cased;
# stage 5 57.56 / 76.36, 55.38 / 74.47 before issue 57's continuation; stage 3 of issue 33 56.81 / 75.02; 37.54 / 61.05
# before that retraining), zh-en (the Chinese references read as sources) BLEU 46.42 / chrF 66.14 (13a, cased; issue
# 58's stage 3; stage 2 45.48 / 65.68 and before it 46.36 / 65.37, none different by paired bootstrap).
EVERYDAY_FLOOR = {"en-zh": (45.5, 38.0), "en-de": (56.0, 74.5), "zh-en": (45.0, 64.0)}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def shipped(request):
    return request.param, load_checkpoint(ROOT / "checkpoints" / request.param)


def test_has_the_papers_layout_and_its_languages(shipped):
    name, loaded = shipped
    cfg = loaded.model.cfg
    assert (cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads) == (6, 6, 8)
    source, target, corpus = LANGUAGES[name]
    meta = loaded.metadata
    assert (meta["source_language"], meta["target_language"], meta["corpus"]) == (source, target, corpus)


def test_translates_fixed_sentences_to_fixed_outputs(shipped):
    name, loaded = shipped
    for sentence, expected in EXPECTED[name].items():
        result = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence)
        assert result.target_text == expected, sentence
        assert result.finished and all(p > 0 for p in result.token_probs)


def test_bleu_floor_on_the_first_300_test_sentences(shipped):
    name, loaded = shipped
    corpus, floor, lowercase = BLEU_FLOOR[name]
    if not corpus_available(corpus):
        pytest.skip("shared corpus not beside the repo")
    examples = load_splits(corpus).test[:300]
    hyps = translate_corpus(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [e.source for e in examples]
    )
    bleu = score(hyps, examples, tokenize=bleu_tokenizer_for(LANGUAGES[name][1]), lowercase=lowercase)["bleu"]
    assert bleu >= floor


def test_floor_on_our_everyday_sentences(shipped):
    """What a class types, not the corpus's test set: none of these sentences is in a training corpus."""
    name, loaded = shipped
    source, target, _ = LANGUAGES[name]
    examples = read_everyday(target, source_language=source)
    hyps = translate_corpus(
        loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, [e.source for e in examples]
    )
    scores = score(hyps, examples, tokenize=bleu_tokenizer_for(target))
    bleu_floor, chrf_floor = EVERYDAY_FLOOR[name]
    assert scores["bleu"] >= bleu_floor and scores["chrf"] >= chrf_floor, scores


@functools.cache
def shipped_checkpoint(name: str):
    return load_checkpoint(ROOT / "checkpoints" / name)


def most_attended(name: str, sentence: str):
    """For a shipped checkpoint's greedy translation of sentence: reads(written, layer), the source piece that the
    step writing the target piece `written` attends to most in that layer (cross-attention, mean over heads)."""
    loaded = shipped_checkpoint(name)
    tr = translate(loaded.model, loaded.source_tokenizer, loaded.target_tokenizer, sentence)
    _, source = tr.axis_pieces("cross")

    def reads(written: str, layer: int) -> str:
        step = tr.target_pieces.index(written)  # cross row i produced target piece i
        return source[tr.attention("cross")[layer].mean(0)[step].argmax()]

    return reads


def test_cross_attention_crosses_where_german_puts_the_verb_last():
    """docs/guide.md's example: in "…einem Mann, der Zeitung liest." the step writing "Zeitung" attends to
    "newspaper" and the next one, writing "liest", back to "reading" (layers 4-6, mean over heads)."""
    reads = most_attended("en-de", "A woman is sitting next to a man who is reading a newspaper.")
    for layer in (3, 4, 5):
        assert reads("▁Zeitung", layer) == "▁newspaper"
        assert reads("▁liest", layer) == "▁reading"


def test_cross_attention_reaches_back_for_the_chinese_time_word():
    """docs/guide.md's other example: 她昨天买了… puts "yesterday" second; the step writing 昨天 attends to
    "yesterday", the last English word (every layer, mean over heads)."""
    reads = most_attended("en-zh", "She bought a red car yesterday.")
    for layer in range(6):
        assert reads("昨天", layer) == "▁yesterday"


def test_the_seeds_example_writing_jerry_looks_at_jerry():
    """The seeds' picture (docs/guide.md, the model card): translating "Tom chases Jerry." the step that writes 杰瑞
    attends most to "Jerry" and the one writing 追 to "chase" in layers 2-6, the one writing 汤姆 to "Tom" in
    layers 2-5 (mean over heads; in layer 6 汤姆's step looks at "chase")."""
    reads = most_attended("en-zh", "Tom chases Jerry.")
    for written, read, layers in (
        ("杰瑞", "▁Jerry", range(1, 6)),
        ("追", "▁chase", range(1, 6)),
        ("汤姆", "▁Tom", range(1, 5)),
    ):
        for layer in layers:
            assert reads(written, layer) == read, (written, layer)


def test_the_seeds_chinese_pair_writing_each_animal_looks_at_its_character():
    """docs/guide.md's zh-en example: 猫追狗 and 狗追猫 hold the same characters in another order, and in each the
    step that writes the first animal attends most to its character in every layer, the one writing the second in
    layers 2-4 (mean over heads). Without positions the encoder could not tell the two apart."""
    character = {"cat": "猫", "dog": "狗"}
    for sentence, first, second in (("猫追狗。", "cat", "dog"), ("狗追猫。", "dog", "cat")):
        reads = most_attended("zh-en", sentence)
        for written, layers in ((first, range(6)), (second, range(1, 4))):
            for layer in layers:
                assert reads("▁" + written, layer) == character[written], (sentence, written, layer)


def test_the_chinese_time_word_is_read_back_where_english_puts_it():
    """docs/guide.md: 她昨天买了一辆红色的汽车。 → "She bought a red car yesterday.": the step writing "yesterday",
    the last English word, attends to 昨天, the second Chinese one (layers 3-6, mean over heads)."""
    reads = most_attended("zh-en", "她昨天买了一辆红色的汽车。")
    for layer in range(2, 6):
        assert reads("▁yesterday", layer) == "昨天", layer


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_faithfulness_table_covers_a_few_hundred_sentences_and_every_method(name):
    """Lesson 10 and the head statistics read this table: every method the selector offers has a row, each
    scored on the test sentences it says (integrated gradients, 20 s a sentence, on a tenth of them)."""
    import pandas as pd

    from model.attribute import METHODS

    table = pd.read_csv(ROOT / "checkpoints" / name / "faithfulness.csv")
    assert set(table["method"]) == set(METHODS)
    others = table[table["method"] != "integrated-gradients"]
    assert (others["sentences"] >= 300).all()
    assert (table.loc[table["method"] == "integrated-gradients", "sentences"] >= 30).all()
    assert table["spearman"].between(-1, 1).all()

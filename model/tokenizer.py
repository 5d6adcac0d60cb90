"""SentencePiece tokenizers for source and target, with the special ids the model expects."""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import sentencepiece as spm

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


WORD_BOUNDARY = "\u2581"  # SentencePiece's "▁": marks a piece that starts a new word


def train_sentencepiece(
    sentences: list[str],
    vocab_size: int,
    character_coverage: float = 1.0,
    normalization: str = "nmt_nfkc",
    dummy_prefix: bool = True,
) -> bytes:
    """Train a unigram model on the given (training-split) sentences; returns the serialized model.

    Use normalization="identity" for Chinese targets: NFKC would turn full-width punctuation (，？！) into
    ASCII, so the model could never write the punctuation Chinese references use. dummy_prefix=False for Chinese:
    SentencePiece otherwise puts a "▁" (word start) before the first character, and as Chinese has no spaces the
    sentence's first piece is often a lone "▁" that takes a row of every decoder map and says nothing."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=character_coverage,
        normalization_rule_name=normalization,
        add_dummy_prefix=dummy_prefix,
        pad_id=PAD_ID,
        unk_id=UNK_ID,
        bos_id=BOS_ID,
        eos_id=EOS_ID,
        hard_vocab_limit=False,  # a small corpus may not support the full size; take what it supports
        num_threads=2,
        minloglevel=2,
    )
    return model.getvalue()


# Words an extension may add as pieces: English words on the source side; on a Chinese target, the Latin-script
# words Chinese technical text keeps (Transformer, softmax, GPU, TensorFlow.js).
EXTENSION_WORDS = {
    "source": r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*",
    "target": r"[A-Za-z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*",
    # one vocabulary for English and German (en-de): German words with their umlauts and ß; a hyphen ends a word,
    # so "encoder-decoder" and "Encoder-Decoder-Modell" count their encoder and decoder
    "joint": r"[A-Za-zÄÖÜäöüß][A-Za-zÄÖÜäöüß0-9]*",
}


def words_cut_finely(
    texts, processor: "spm.SentencePieceProcessor", pattern: str, min_count: int, min_pieces: int = 3
) -> list[str]:
    """The words of `texts` (matched by `pattern`) seen at least min_count times that the tokenizer cuts into
    min_pieces or more pieces, most frequent first: "Transformer" is 8 pieces of the everyday Chinese tokenizer
    (T r an s f or m er), which a decoder must spell right letter by letter."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in re.findall(pattern, text):
            counts[word] = counts.get(word, 0) + 1
    frequent = sorted((w for w, n in counts.items() if n >= min_count), key=lambda w: (-counts[w], w))
    return [w for w in frequent if len(processor.EncodeAsPieces(w)) >= min_pieces]


def capitalised(word: str) -> str:
    """The word as it starts a sentence: "softmax" -> "Softmax", "cross-attention" -> "Cross-attention"."""
    return word[:1].upper() + word[1:]


def lexicon_words_cut_finely(
    phrases, processor: "spm.SentencePieceProcessor", pattern: str, with_capital: bool, min_pieces: int = 3
) -> list[str]:
    """The words of word pairs' English (`phrases`: technical terms, names, places) that the tokenizer cuts into
    min_pieces or more pieces, in order of first appearance; with_capital: each word also with a capital, as a
    sentence starts with it ("Softmax turns scores into probabilities."; "positional" is ▁position al, fine, but
    "Positional" ▁Po s it ion al). Unlike words_cut_finely, no count: a word pair is seen once an epoch, and the
    sentences that use a term or a city are few. "Munich" is ▁M un ic h and "Softmax" ▁So f t m a x to the
    everyday tokenizer, though ▁softmax is one piece."""
    found: dict[str, None] = {}
    for phrase in phrases:
        for word in re.findall(pattern, phrase):
            for form in (word, capitalised(word)) if with_capital else (word,):
                if form not in found and len(processor.EncodeAsPieces(form)) >= min_pieces:
                    found[form] = None
    return list(found)


def is_han(char: str) -> bool:
    """A Chinese character of the CJK Unified Ideographs block, where every character of the corpus's Chinese
    words lies (punctuation such as 。 and ， does not)."""
    return "\u4e00" <= char <= "\u9fff"


def chinese_words_cut_finely(
    texts, processor: "spm.SentencePieceProcessor", dictionary: set[str], min_count: int
) -> list[str]:
    """The words of `dictionary` (Chinese, two or more characters) seen at least min_count times in `texts` that
    the tokenizer writes in two or more pieces, most frequent first. The everyday tokenizer learnt the words of
    everyday Chinese, not those of the lesson: 模型 (model) is 模 型, 注意力 注意 力, 编码器 编 码 器, so a decoder
    writes a term a character at a time, and can stop halfway (注意 for 注意力: "pay attention").

    A word is counted where a segmentation of the text by the dictionary (longest word first, left to right)
    finds it, not wherever its characters meet: 面的 ("minivan") is a dictionary word, but 上面的 ("the one
    above") is 上面 + 的."""
    longest = max((len(w) for w in dictionary), default=1)
    counts: dict[str, int] = {}
    for text in texts:
        i = 0
        while i < len(text):
            for n in range(min(longest, len(text) - i), 1, -1):
                if text[i : i + n] in dictionary:
                    counts[text[i : i + n]] = counts.get(text[i : i + n], 0) + 1
                    i += n
                    break
            else:
                i += 1
    frequent = sorted((w for w, n in counts.items() if n >= min_count), key=lambda w: (-counts[w], w))
    return [w for w in frequent if all(is_han(c) for c in w) and len(processor.EncodeAsPieces(w)) >= 2]


def characters_it_cannot_write(texts, processor: "spm.SentencePieceProcessor", min_count: int) -> list[str]:
    """The Chinese characters of `texts` seen at least min_count times that the tokenizer has no piece for (it
    reads and writes them as <unk>), most frequent first: the everyday Chinese tokenizer cannot write 嵌 of 嵌入
    (embedding) nor 骤 of 步骤 (step), which the machine-learning text uses hundreds of times."""
    counts: dict[str, int] = {}
    for text in texts:
        for char in text:
            if is_han(char) and processor.PieceToId(char) == processor.unk_id():
                counts[char] = counts.get(char, 0) + 1
    return sorted((c for c, n in counts.items() if n >= min_count), key=lambda c: (-counts[c], c))


def extend_sentencepiece(model: bytes, words: list[str], word_start: bool) -> bytes:
    """Append a piece for each word to a unigram SentencePiece model, keeping every existing piece and its id
    (so a trained model's embedding rows stay valid). word_start: the piece is "▁word" (a source word, which
    always follows a space or the dummy prefix); otherwise the bare word (Latin inside Chinese text).

    A new piece gets the median score of the existing pieces, a typical frequent piece's log-probability, far
    above the sum of the several pieces the word was cut into, so the best segmentation now takes it whole."""
    from sentencepiece import sentencepiece_model_pb2

    normal_type = sentencepiece_model_pb2.ModelProto.SentencePiece.NORMAL
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model)
    existing = {p.piece for p in proto.pieces}
    scores = sorted(p.score for p in proto.pieces if p.type == normal_type)
    for word in words:
        piece = WORD_BOUNDARY + word if word_start else word
        if piece not in existing:
            existing.add(piece)
            proto.pieces.add(piece=piece, score=scores[len(scores) // 2], type=normal_type)
    return proto.SerializeToString()


def pieces_across_words(processor: "spm.SentencePieceProcessor", words: set[str]) -> list[str]:
    """The Chinese pieces of two or more characters that are not a word of `words` (a dictionary's words,
    names, terms). A unigram model trained on unsegmented Chinese learns frequent strings whatever their
    grammar: 在医院 ("at" + "hospital"), 有两 ("has" + "two"), 只猫 (classifier + "cat"), 我的朋友. Such a piece lets
    the decoder write two words in one step, and skip what the source says between them: 安娜在医院工作 for
    "Anna works at a hospital in Munich" needs no step where 慕尼黑 could come."""
    found = []
    for i in range(processor.GetPieceSize()):
        piece = processor.IdToPiece(i)
        chinese = len(piece) > 1 and all(is_han(c) for c in piece)
        if chinese and piece not in words:
            found.append(piece)
    return found


def retire_pieces(model: bytes, pieces: list[str]) -> bytes:
    """The same SentencePiece model with `pieces` marked unused: encoding no longer chooses them (it cuts their
    text into the pieces left), decoding still reads them, and every id stays where it was, so a trained model's
    embedding rows stay valid. Training targets encoded with it teach the decoder to write the smaller pieces."""
    from sentencepiece import sentencepiece_model_pb2

    piece_type = sentencepiece_model_pb2.ModelProto.SentencePiece
    retired = set(pieces)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model)
    for p in proto.pieces:
        if p.piece in retired and p.type == piece_type.NORMAL:
            p.type = piece_type.UNUSED
    return proto.SerializeToString()


@dataclass
class Tokenizer:
    """One language's SentencePiece model."""

    processor: spm.SentencePieceProcessor

    @classmethod
    def load(cls, path: Path | str) -> "Tokenizer":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"tokenizer model not found: {path}")
        try:
            return cls.from_bytes(path.read_bytes())
        except Exception as e:  # sentencepiece raises bare RuntimeErrors with C++ text
            raise ValueError(f"{path} is not a valid SentencePiece model ({e})") from None

    @classmethod
    def from_bytes(cls, data: bytes) -> "Tokenizer":
        processor = spm.SentencePieceProcessor()
        processor.LoadFromSerializedProto(data)
        return cls(processor)

    @property
    def vocab_size(self) -> int:
        return self.processor.GetPieceSize()

    def encode(self, text: str) -> list[int]:
        return self.processor.EncodeAsIds(text)

    def sample(self, text: str, alpha: float) -> list[int]:
        """One segmentation drawn from the unigram model's distribution (subword regularisation, Kudo 2018):
        lower alpha, more varied splits. Training sees a sentence cut differently each epoch; decoding keeps the
        single best split (`encode`)."""
        return self.processor.Encode(text, out_type=int, enable_sampling=True, alpha=alpha, nbest_size=-1)

    def encode_with_pieces(self, text: str) -> tuple[list[int], list[str]]:
        """Ids and the pieces to display. An unknown character keeps its own text as its piece (its id is UNK_ID),
        so the app can show *which* character the model could not read."""
        proto = self.processor.encode(text, return_type="proto")
        return [p.id for p in proto.pieces], [p.piece for p in proto.pieces]

    def decode(self, ids: list[int]) -> str:
        return self.processor.DecodeIds([i for i in ids if i > EOS_ID or i == UNK_ID])

    def piece(self, token_id: int) -> str:
        return self.processor.IdToPiece(token_id)

    def pieces(self, ids: list[int]) -> list[str]:
        return [self.piece(i) for i in ids]


# Control, format (zero-width joiners, right-to-left overrides), separator, surrogate, private-use and unassigned
# characters: shown raw they reverse, hide or garble the text around them.
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def visible(text: str) -> str:
    """Text for display with every invisible or direction-changing character written as <U+XXXX>."""
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) in _INVISIBLE else c for c in text)


def group_pieces_into_words(pieces: list[str], language: str = "en") -> list[list[int]]:
    """Indices of the pieces that make up each word: a new word starts at a piece beginning with "▁", and
    special tokens (<s>, </s>) and punctuation stand alone. Chinese is written without spaces, so "▁" marks
    only the start of the sentence; there each piece (a character or a frequent word such as 我们) is its own
    unit."""
    if language.startswith("zh"):
        return [[i] for i in range(len(pieces))]
    words: list[list[int]] = []
    for i, piece in enumerate(pieces):
        # Punctuation is a word of its own ("▁Jerry" "." are two words, not "▁Jerry."), and so is what follows it.
        if (
            not words
            or _is_special(piece)
            or piece.startswith(WORD_BOUNDARY)
            or _is_special(pieces[i - 1])
            or is_punctuation(piece)
            or is_punctuation(pieces[i - 1])
        ):
            words.append([i])
        else:
            words[-1].append(i)
    return words


def is_punctuation(piece: str) -> bool:
    """A piece of punctuation only, except the apostrophes and hyphens inside words (didn't, well-known): the one
    test of punctuation, for grouping pieces into words, the heads' punctuation statistic and word swaps."""
    text = piece.replace(WORD_BOUNDARY, "")
    return bool(text) and all(unicodedata.category(c).startswith("P") and c not in "'\u2019-" for c in text)


def _is_special(piece: str) -> bool:
    return piece.startswith("<") and piece.endswith(">")

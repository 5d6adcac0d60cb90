"""What a map's title, axes and rows are called, in the interface language: one definition for the app's views,
the handout and the command line. Pure: a Translation and the words catalogue in, strings out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from model.tokenizer import group_pieces_into_words
from words import t

if TYPE_CHECKING:
    from model import decode

ARROW = " → "  # "reads → writes" in a decoder row's label


def kind_name(kind: str, lang: str) -> str:
    """An attention kind's name as a title: "Encoder self-attention", "交叉注意力"."""
    return t(f"kind_{kind}", lang)


def kind_in_sentence(kind: str, lang: str) -> str:
    """An attention kind's name inside a sentence: "encoder self-attention", not the title's "Encoder
    self-attention" (Chinese has no capitals)."""
    name = kind_name(kind, lang)
    return name[0].lower() + name[1:] if lang == "en" else name


def axis_names(kind: str, lang: str) -> tuple[str, str]:
    """(rows, columns) of a kind's map: who asks (queries) and who is read (keys)."""
    query = t("encoder_query", lang) if kind == "encoder_self" else t("decoder_query", lang)
    key = t("decoder_key", lang) if kind == "decoder_self" else t("encoder_key", lang)
    return query, key


def axis_languages(kind: str, languages: tuple[str, str]) -> tuple[str, str]:
    """The languages of a kind's query and key pieces, for grouping pieces into words."""
    source, target = languages
    return (source if kind == "encoder_self" else target), (target if kind == "decoder_self" else source)


def query_labels(
    tr: decode.Translation, kind: str, word_level: bool = False, languages: tuple[str, str] = ("en", "zh")
) -> list[str]:
    """The label of each row of a kind's map. An encoder row is the piece it reads. A decoder row t reads piece t
    of "<s> + output" and writes output piece t, and is named by both ("<s> → 汤姆"): labelled by what it reads
    alone, an alignment would look shifted by one row. At word level a row is a word of the decoder's input,
    named by the pieces it reads and the pieces it writes."""
    queries, _ = tr.axis_pieces(kind)
    groups = (
        group_pieces_into_words(queries, axis_languages(kind, languages)[0])
        if word_level
        else [[i] for i in range(len(queries))]
    )
    if kind == "encoder_self":
        return ["".join(queries[i] for i in g) for g in groups]
    written = tr.target_pieces
    return ["".join(queries[i] for i in g) + ARROW + "".join(written[i] for i in g) for g in groups]

"""The handout of one translation (viz.handout): the app's "Download as a web page" and `python -m model.translate
--html`. Builds the page's plain data from a Translation, in the interface language."""

from __future__ import annotations

from model import decode
from ui.common import KIND_TAB, axis_names, query_labels
from ui.words import language_name, t
from viz.handout import handout_html


def kind_document(tr: decode.Translation, kind: str, lang: str, languages: tuple[str, str]) -> dict:
    """One kind's part of a page: its name, row and column labels, axis names, mask and every map."""
    query_axis, key_axis = axis_names(kind, lang)
    return dict(
        name=t(KIND_TAB[kind], lang),
        queries=query_labels(tr, kind, False, languages),
        keys=tr.axis_pieces(kind)[1],
        query_axis=query_axis,
        key_axis=key_axis,
        masked=kind == "decoder_self",
        weights=tr.attention(kind),
    )


def handout_labels(lang: str) -> dict:
    labels = {
        key: t(f"handout_{key}", lang)
        for key in ("title", "pieces", "position", "piece", "probability", "grid", "grid_hint", "footer")
    }
    labels.update(layer=t("layer", lang), head=t("head", lang), mean=t("mean_heads", lang), weight=t("weight", lang))
    labels.update(mean_short=t("mean_short", lang))
    labels.update(layer_n=t("layer_n", lang), head_n=t("head_n", lang), masked=t("masked_cell", lang))
    return labels


def handout(
    tr: decode.Translation,
    lang: str,
    model_name: str,
    languages: tuple[str, str],
    kind: str | None = None,
    layer: int = 1,
    head: str = "mean",
) -> str:
    """tr's page: every kind, layer and head, the pieces and their probabilities, labels in lang (en or zh); it
    opens on kind, layer (from 1) and head ("mean" or from 1): the map on screen."""
    source, target = (language_name(code, lang) for code in languages)
    document = dict(
        source=tr.source_text,
        target=tr.target_text,
        model=t("handout_model", lang, model=model_name, source=source, target=target),
        pieces=[[piece, float(p)] for piece, p in zip(tr.target_pieces, tr.token_probs)],
        kinds={kind: kind_document(tr, kind, lang, languages) for kind in KIND_TAB},
    )
    start_head = head if head == "mean" else int(head) - 1
    return handout_html(document, handout_labels(lang), lang, kind, layer - 1, start_head)

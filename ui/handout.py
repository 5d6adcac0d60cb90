"""The handout of one translation (viz.handout): the app's "Download as a web page" and `python -m model.translate
--html`. Builds the page's plain data from a Translation, in the interface language."""

from __future__ import annotations

from model import decode
from ui.common import KIND_TAB, axis_names, query_labels
from ui.words import language_name, t
from viz.handout import handout_html


def handout(tr: decode.Translation, lang: str, model_name: str, languages: tuple[str, str]) -> str:
    """tr's page: every kind, layer and head, the pieces and their probabilities, labels in lang (en or zh)."""
    kinds = {}
    for kind, tab in KIND_TAB.items():
        query_axis, key_axis = axis_names(kind, lang)
        kinds[kind] = dict(
            name=t(tab, lang),
            queries=query_labels(tr, kind, False, languages),
            keys=tr.axis_pieces(kind)[1],
            query_axis=query_axis,
            key_axis=key_axis,
            masked=kind == "decoder_self",
            weights=tr.attention(kind),
        )
    source, target = (language_name(code, lang) for code in languages)
    document = dict(
        source=tr.source_text,
        target=tr.target_text,
        model=t("handout_model", lang, model=model_name, source=source, target=target),
        pieces=[[piece, float(p)] for piece, p in zip(tr.target_pieces, tr.token_probs)],
        kinds=kinds,
    )
    labels = {
        key: t(f"handout_{key}", lang)
        for key in ("title", "pieces", "position", "piece", "probability", "grid", "grid_hint", "footer")
    }
    labels.update(layer=t("layer", lang), head=t("head", lang), mean=t("mean_heads", lang), weight=t("weight", lang))
    labels.update(layer_n=t("layer_n", lang), head_n=t("head_n", lang))
    labels["masked"] = t("masked_cell", lang)
    return handout_html(document, labels, lang)

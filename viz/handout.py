"""A handout: one self-contained web page of one translation that opens offline, without Python, for a student to
look at again at home. It holds the translation with its pieces and their probabilities and every attention map
(each kind, every layer and head and their mean), switched in the page itself: a kind button, a layer and a head
list, and a layers x heads grid of thumbnails whose click opens that head, as in the app (labelled axes, masked
cells grey with x).

Pure: plain data in, one HTML string out. Plotly's cartesian bundle (static/, vendored from npm, MIT, 1.5 MB) is
inlined; where the page holds Chinese, a font with just its characters is embedded (from the app's served subset),
so it shows on a machine without a Chinese font. Nothing is fetched when the page opens. switcher_html is the
same maps inside the app, switched in the browser. `handout` builds the page's plain data from a Translation, in
the interface language: the app's "Download as a web page" and `python -m model.translate --html` (no Streamlit).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from plotly.colors import sequential

from model.transformer import ATTENTION_KINDS
from words import language_name, t

from .attention import MASKED_COLOR
from .cjk import FAMILY, FONT, UNICODE_RANGE, is_cjk, subset_woff2
from .labels import axis_names, kind_name, query_labels
from .titles import MAP_PLOT_PX, column_labels, column_labels_px, level_label_fits
from .widths import display_width

if TYPE_CHECKING:
    from model.decode import Translation

STATIC = Path(__file__).resolve().parent.parent / "static"  # served by the app at app/static/
PLOTLY_JS = STATIC / "plotly-cartesian-4.1.1.min.js"  # vendored from npm (MIT): heatmaps, bars, scatter
SCRIPT = Path(__file__).with_name("handout.js")  # the page's own switching


def font_for(text: str, source: Path = FONT) -> bytes | None:
    """A WOFF2 font with just the CJK characters of text (None when it has none or the font is missing)."""
    chars = {c for c in text if is_cjk(c)}
    return subset_woff2(source, chars) if chars and source.is_file() else None


def rounded(weights: np.ndarray) -> list:
    """(layers, heads, queries, keys) weights as nested lists of 4 decimals (each row still sums to 1 within 5e-4)."""
    return np.round(np.asarray(weights, dtype=np.float64), 4).tolist()


def _script_json(value) -> str:
    """JSON safe inside a <script> element (no "</script>" can end it early)."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


STYLE = """
body {font-family: "Source Sans 3", "Source Sans Pro", "Segoe UI", Roboto, Helvetica, Arial, explorer-cjk,
  "Noto Sans CJK SC", "Microsoft YaHei", sans-serif; color: #262730}
h1 {font-size: 1.9rem; margin: 0.2em 0} .source {font-size: 1.15rem; margin: 0}
.model {color: #666; font-size: 0.9rem}
table {border-collapse: collapse} td, th {border: 1px solid #ddd; padding: 2px 8px; text-align: left}
#controls {display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin: 12px 0; scroll-margin-top: 64px}
button.kind {font: inherit; padding: 6px 12px; border: 1px solid #bbb; background: #fff; border-radius: 6px;
  cursor: pointer}
button.kind.on {border-color: #ff4b4b; color: #ff4b4b}
select {font: inherit; padding: 4px 8px; border: 1px solid #d0d0d6; border-radius: 8px; background: #fff;
  color: inherit}
#grid {display: grid; gap: 4px; align-items: center; justify-content: start}
#grid canvas {width: var(--thumb, 56px); height: var(--thumb, 56px); cursor: pointer; border: 2px solid transparent;
  image-rendering: pixelated}
#grid canvas.on {border-color: #d62728}
#grid span {font-size: 0.8rem; color: #555; text-align: center; white-space: nowrap}
#mapbox {position: relative}
#cells {position: absolute; pointer-events: none}
#hover {position: absolute; pointer-events: none; white-space: pre; background: #262730; color: white;
  font-size: 0.85rem; padding: 4px 8px; border-radius: 4px; z-index: 2}
footer {color: #777; font-size: 0.8rem; margin-top: 24px}
"""


def map_font_px(present: bool = False) -> int:
    """The page's map text size: larger in the app's presentation mode, for a projector's back row."""
    return 15 if present else 12


def map_layout(queries: list[str], keys: list[str], font_px: int = 12) -> dict:
    """The page's map of these rows and columns (viz/handout.js lays it out; the app sizes the page's frame by
    it): the column labels written (ticks), their angle and size, the room above the map and its height. Level
    up to 8 columns, and beyond while each label fits its column (as the app's own maps: nine Chinese columns
    stood slanted 45°, 一 read as a stroke); beyond, as the app's maps: slanted while a column has room, else
    upright, smaller and only every k-th written (33 columns slanted 45° lay on one another)."""
    longest = max((display_width(k) for k in keys), default=1)
    if len(keys) <= 8 or level_label_fits(longest, len(keys), font_px):
        ticks, angle, tick_px = list(keys), 0, font_px
    else:
        ticks, angle, tick_px = column_labels(keys, font_px, MAP_PLOT_PX)
    # The room the title, its pad and the key axis's name take, and the labels' own, grow with the text: at a
    # fixed 76 px presentation mode's 15 px title ran 2 px into the axis name under it.
    above = font_px + 6 if angle == 0 else column_labels_px(ticks, angle, tick_px)
    top = round(76 * font_px / 12) + above
    return dict(
        ticks=ticks,
        angle=angle,
        tick_px=tick_px,
        top=top,
        height=max(320, 140 + 26 * len(queries) + top - 76),
    )


def page_data(
    document: dict,
    embedded: bool = False,
    layer: int = 0,
    head: str | int = "mean",
    font_size: int = 12,
    start_kind: str | None = None,
) -> dict:
    """What the page's script reads: every kind's maps (4 decimals), the colour scale, where to start (the kind,
    by default the last; a 0-based layer; "mean" or a 0-based head), whether it sits inside the app (embedded: it
    then writes the app's link, document["link"], with the chosen layer and head, into the app's address bar
    instead of its own), and the map's font size (larger for a projector's back row)."""
    kinds = {
        kind: dict(
            entry, weights=rounded(entry["weights"]), layout=map_layout(entry["queries"], entry["keys"], font_size)
        )
        for kind, entry in document["kinds"].items()
        if kind in ATTENTION_KINDS
    }
    return dict(
        kinds=kinds,
        order=[k for k in ATTENTION_KINDS if k in kinds],
        colorscale=[[i / (len(sequential.Blues) - 1), c] for i, c in enumerate(sequential.Blues)],
        masked_color=MASKED_COLOR,
        embedded=embedded,
        start=dict(kind=start_kind if start_kind in kinds else None, layer=layer, head=head),
        font_size=font_size,
        link=document.get("link", {}),  # embedded: the app's link, whose layer and head the page keeps current
    )


def _escape(value) -> str:
    return html.escape(str(value), quote=True)


def _controls(data: dict, labels: dict) -> str:
    e = _escape
    kind_buttons = "".join(
        f'<button type="button" class="kind" data-kind="{kind}">{e(data["kinds"][kind]["name"])}</button>'
        for kind in data["order"]
        if len(data["order"]) > 1
    )
    return f"""<div id="controls">{kind_buttons}
<label>{e(labels["layer"])} <select id="layer"></select></label>
<label>{e(labels["head"])} <select id="head"></select></label></div>
<div id="mapbox"><div id="map"></div><canvas id="cells"></canvas><div id="hover" hidden></div></div>"""


def _scripts(data: dict, labels: dict) -> str:
    return f"""<script>
const DATA = {_script_json(data)};
const LABELS = {_script_json(labels)};
{SCRIPT.read_text(encoding="utf-8")}
</script>"""


def switcher_html(
    document: dict, labels: dict, lang: str, layer: int, head: str, static_url: str, present: bool = False
) -> str:
    """The app's own maps of one kind, switched in the browser (an iframe in the page): the layer and head lists,
    the map and the layers x heads grid, as in the handout. Plotly and the Chinese font come from the app's
    static files (static_url: where the app serves static/), so the page sent per sentence holds only its
    numbers. A switch writes the app's link with its layer and head into the address bar, where the server reads
    them at its next run (ui.session.adopt_browser_view): no script run per switch. present: the projector's
    sizes (larger text, as the app's presentation mode)."""
    data = page_data(document, embedded=True, layer=layer, head=head, font_size=map_font_px(present))
    return f"""<!doctype html>
<html lang="{_escape(lang)}"><head><meta charset="utf-8">
<style>@font-face{{font-family:{FAMILY};src:url({static_url}/cjk-subset.woff2) format("woff2");
unicode-range:{UNICODE_RANGE}}}
{STYLE}
body {{margin: 0; font-size: {"1.25rem" if present else "1rem"}}} #controls {{margin: 0 0 6px}}</style>
<script src="{static_url}/{PLOTLY_JS.name}"></script>
</head><body>
{_controls(data, labels)}
<div id="grid"></div>
{_scripts(data, labels)}
</body></html>
"""


def handout_html(
    document: dict, labels: dict, lang: str, kind: str | None = None, layer: int = 0, head: str | int = "mean"
) -> str:
    """document: {"source": text, "target": text, "model": a line naming the model, "pieces": [[piece,
    probability], ...] (the output pieces), "kinds": {kind: {"name": the view's name, "queries": row labels,
    "keys": column labels, "query_axis", "key_axis", "masked": whether the causal mask applies, "weights":
    (layers, heads, queries, keys) arrays}}}, user text unescaped. labels: title, pieces, position, piece,
    probability, layer, head, layer_n and head_n (templates with {n}), mean, weight, masked, grid, grid_hint, footer
    (in the interface language). kind, layer (0-based) and head ("mean" or 0-based): what the page opens on, the
    map on the app's screen when it was downloaded."""
    data = page_data(document, layer=layer, head=head, start_kind=kind)
    text = json.dumps(document, ensure_ascii=False, default=str) + json.dumps(labels, ensure_ascii=False)
    font = font_for(text)
    font_css = (
        f"@font-face{{font-family:{FAMILY};src:url(data:font/woff2;base64,"
        + base64.b64encode(font).decode()
        + f");unicode-range:{UNICODE_RANGE}}}"
        if font
        else ""
    )
    e = _escape
    rows = "".join(
        f"<tr><td>{i}</td><td>{e(piece)}</td><td>{probability:.1%}</td></tr>"
        for i, (piece, probability) in enumerate(document["pieces"])
    )
    return f"""<!doctype html>
<html lang="{e(lang)}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(labels["title"])}: {e(document["source"])}</title>
<style>{font_css}
{STYLE}
body {{max-width: 980px; margin: 16px auto; padding: 0 12px}}
</style>
<script>{PLOTLY_JS.read_text(encoding="utf-8")}</script>
</head><body>
<h1>{e(document["target"])}</h1>
<p class="source">{e(document["source"])}</p>
<p class="model">{e(document["model"])}</p>
<details><summary>{e(labels["pieces"])}</summary>
<table><tr><th>{e(labels["position"])}</th><th>{e(labels["piece"])}</th><th>{e(labels["probability"])}</th></tr>
{rows}</table></details>
{_controls(data, labels)}
<h2 style="font-size:1.1rem">{e(labels["grid"])}</h2>
<p class="model">{e(labels["grid_hint"])}</p>
<div id="grid"></div>
<footer>{e(labels["footer"])}</footer>
{_scripts(data, labels)}</body></html>
"""


def kind_document(tr: Translation, kind: str, lang: str, languages: tuple[str, str]) -> dict:
    """One kind's part of a page: its name, row and column labels, axis names, mask and every map."""
    query_axis, key_axis = axis_names(kind, lang)
    return dict(
        name=kind_name(kind, lang),
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
    tr: Translation,
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
        kinds={kind: kind_document(tr, kind, lang, languages) for kind in ATTENTION_KINDS},
    )
    start_head = head if head == "mean" else int(head) - 1
    return handout_html(document, handout_labels(lang), lang, kind, layer - 1, start_head)

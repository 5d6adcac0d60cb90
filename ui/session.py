"""A session's state: set once from the page's link (the values its widgets start on: a page that reconnects to a
restarted server keeps the values it sends), and written back to the link after every run."""

from __future__ import annotations

import streamlit as st

from model import align, attribute
from model.tokenizer import BOS_ID, PAD_ID
from ui import links, widgets
from ui import views as registry
from ui.checkpoints import PREFERRED_CHECKPOINT, examples_for
from ui.common import every_head
from ui.sidebar import MAX_BEAM
from viz.escape import markdown_literal
from words import LANGUAGES, t


def init_state(checkpoints: list[str]) -> None:
    """Defaults, overridden once per session by the URL's query parameters (a shared link), each checked
    strictly (ui.links); what the link asked for but could not have is listed in link_notices.
    Checkpoints are named by folder (the URL says ckpt=en-de, not a path on the server).

    The values of the sidebar's and the view's widgets are the values they start on (ui.widgets.start_on), not
    session-state values: a page that reconnects to a restarted server sends those it holds with its first run
    there, its user's next action among them, and they must stand (the link fills in what it did not send).
    Streamlit's own link binding of widgets (bind="query-params") is not used: it names a parameter after its
    widget's key, writes an option's label in the interface language and reads it back without the notices of
    ui.links, and a bound parameter cannot be set through st.query_params, which writes the whole link here
    (write_url). Nor is persist_state: it keeps values on the server, which a restart loses."""
    if st.session_state.get("initialised"):
        widgets.settle()  # a first run that stopped before its page's choices were drawn
        return
    link = links.parse_link(
        {k: st.query_params[k] for k in st.query_params},
        checkpoints,
        list(LANGUAGES),
        MAX_BEAM,
        registry.linkable(),
        attribute.METHODS,
        {k: len(st.query_params.get_all(k)) for k in st.query_params},
    )
    checkpoint = link.checkpoint or (PREFERRED_CHECKPOINT if PREFERRED_CHECKPOINT in checkpoints else checkpoints[0])
    beam = link.beam or 1
    starting = dict(
        sentence=link.sentence or examples_for(checkpoint)[0],
        second_sentence=link.second_sentence or "",
        checkpoint=checkpoint,
        layer=1,
        head="1",
        lang=link.lang or "en",
        decoding="beam" if beam > 1 else "greedy",
        reference="",
        word_level=bool(link.word_level),
        present=link.present,
        page="lessons" if link.view in registry.lessons() else "explore",
    )
    if beam > 1:
        starting["beam_size"] = beam
    if link.attribution:
        starting["attribution"] = link.attribution
    widgets.start_on(starting)
    st.session_state.update(beam=beam, link_notices=link.notices, link_view=(link.layer, link.head))
    if link.view in registry.views():
        st.session_state.tab = link.view
    elif link.view in registry.lessons():
        st.session_state.lesson = link.view
    for param in registry.link_params():  # each view's own choices
        if param.name in link.view_values:
            st.session_state.update(param.restore(link.view_values[param.name]))
    st.session_state.initialised = True


def apply_link_view(cfg) -> None:
    """The link's layer and head, once the checkpoint's depth and head count are known."""
    if "link_view" not in st.session_state:
        return
    layer, head, notices = links.fit_view(
        *st.session_state.pop("link_view"), max(cfg.n_encoder_layers, cfg.n_decoder_layers), cfg.n_heads
    )
    st.session_state.link_notices += notices
    if layer is not None:
        widgets.set_value("layer", layer)
    if head is not None:
        widgets.set_value("head", head)
    if layer is not None or head is not None:
        st.session_state.view_chosen = True


def open_cross_attention_on_the_best_aligner(alignment: dict | None) -> None:
    """The first time a session opens the cross-attention view, with the layer and head still the page's
    defaults (neither a link nor the user chose them), it opens on the checkpoint's best word aligner among the
    raw attention maps (its alignment.json: for en-zh the mean of layer 3), where a class sees the alignment the
    seeds describe; the caption says so (ui.attention). Layer 1, head 1 showed the links only in part."""
    if widgets.current("page") != "explore" or st.session_state.get("tab") != registry.map_view("cross"):
        return
    if st.session_state.get("aligner_opened"):
        return
    st.session_state.aligner_opened = True
    best = align.best_row((alignment or {}).get("results", []), attribute.RAW)
    if st.session_state.get("view_chosen") or best is None:
        return
    widgets.set_value("layer", int(best["layer"]))
    widgets.set_value("head", str(best["head"]))
    st.session_state.opened_on_aligner = True


def check_link_positions(tr, word_level: bool, languages: tuple[str, str]) -> None:
    """Once, on the page a link opened, with its sentence translated: positions of the link that this sentence
    does not have (pair=cross.99.99, qk=cross.9999) are dropped with a notice now, not when their view opens."""
    notices = st.session_state.setdefault("link_notices", [])
    if st.session_state.get("search_signature") == "from a link":
        kind = st.session_state.search_kind
        _, queries, keys, _ = every_head(tr, kind, word_level, languages)
        query, key = st.session_state.get("search_query"), st.session_state.get("search_key")
        if not (0 <= query < len(queries) and 0 <= key < len(keys)):
            notices.append(links.Notice("pair", f"{kind}.{query}.{key}", "out_of_sentence"))
            st.session_state.search_signature = None  # the view starts on the sentence's own words
            for name in ("search_query", "search_key"):
                st.session_state.pop(name)
    if st.session_state.pop("qk_from_link", False):
        kind, query = st.session_state.qk_kind, st.session_state.qk_query
        if not 0 <= query < len(tr.axis_pieces(kind)[0]):
            notices.append(links.Notice("qk", f"{kind}.{query}", "out_of_sentence"))
            st.session_state.pop("qk_query")


def fit_link_trail(trail: tuple[tuple[int, int], ...], translation) -> tuple[tuple[int, int], ...]:
    """Once, for a link's what-if steps: those the what-if translation did not take (a step past its end, or one
    an earlier choice moved) are left out, each with a notice. -> the steps kept."""
    if not st.session_state.pop("trail_from_link", False):
        return trail
    ids = translation.target_ids
    kept = tuple((step, piece) for step, piece in trail if step < len(ids) and ids[step] == piece)
    notices = st.session_state.setdefault("link_notices", [])
    for step, piece in trail:
        if (step, piece) not in kept:
            notices.append(links.Notice("force", f"{step}:{piece}", "step_not_reached"))
    if kept != trail:
        st.session_state.trail = [list(step) for step in kept]
    return kept


def show_link_notices(lang: str, box=None) -> None:
    """The link's notices, said once (on the page the link opened), in box (a container placed where they
    belong, filled once the sentence has been checked) or here."""
    notices = st.session_state.pop("link_notices", None)
    if not notices:
        return
    lines = [
        t(
            f"link_{n.action}",
            lang,
            parameter=n.parameter,
            value=markdown_literal(n.value),
            used=markdown_literal(n.used),
        )
        for n in notices
    ]
    (box or st).warning("\n".join(f"- {line}" for line in lines))


def current_trail(checkpoint: str, sentence: str, beam: int, vocab_size: int) -> tuple[tuple[int, int], ...]:
    """The what-if choices of this sentence (step, piece id); a new sentence, checkpoint or beam starts without
    any (a link's trail is kept for the sentence the link opened)."""
    signature = (checkpoint, sentence, beam)
    if st.session_state.get("trail_for") == "from a link":
        st.session_state.trail_for = signature
    if st.session_state.get("trail_for") != signature:
        st.session_state.update(trail=[], trail_for=signature)
    trail = st.session_state.get("trail", [])
    # <pad> and <s> are pieces of the vocabulary the decoder never writes (a link could force them mid-sentence)
    kept = [step for step in trail if 0 <= step[1] < vocab_size and step[1] not in (PAD_ID, BOS_ID)]
    if st.session_state.get("trail_from_link") and kept != trail:
        for step, piece in trail:
            if [step, piece] not in kept:
                why = "never_written" if piece in (PAD_ID, BOS_ID) else "no_such_piece"
                notice = links.Notice("force", f"{step}:{piece}", why)
                st.session_state.setdefault("link_notices", []).append(notice)
        st.session_state.trail = kept
    return tuple(tuple(step) for step in kept)


def write_url(final: bool = False) -> None:
    """The link of what the page shows, in the address bar. final: the run's last write; where the page's maps
    are switched in the browser (ui.attention sets link_in_browser), the browser writes the link itself from now
    on: the server's copy is cleared, because Streamlit's page sends its own copy of the query string with every
    run when it has one, and the address bar's only when it has none."""
    shown = widgets.with_starting_values()  # a session's first run, before some of the widgets are drawn
    link = links.link_from_session(shown, next(iter(registry.views())), next(iter(registry.lessons())))
    params = link.to_params()
    st.session_state.link_params = params  # for the maps switched in the browser, which write it themselves
    st.session_state.url_view = (params.get("layer"), params.get("head"))  # what adopt_browser_view compares with
    if final and st.session_state.pop("link_in_browser", False):
        st.query_params.clear()
    else:
        st.query_params.from_dict(params)


def adopt_browser_view(deepest: int, n_heads: int) -> None:
    """A layer or head chosen in the browser (the attention maps switched in the page, ui.attention) was written
    into the link without a script run; at the next run, whatever caused it, every view takes it from there.
    Only a link that differs from what the server itself wrote last is the browser's choice (a sidebar choice
    made meanwhile arrives as that widget's value, with the link still as the server left it)."""
    written = st.session_state.get("url_view")
    if written is None:
        return
    layer, head = st.query_params.get("layer"), st.query_params.get("head")
    if (layer, head) == written or layer is None:
        return
    if (str(st.session_state.get("layer")), st.session_state.get("head")) != written:
        return  # chosen in the sidebar since: that choice stands
    if layer and layer.isdigit() and 1 <= int(layer) <= deepest:
        st.session_state.layer = int(layer)
    if head == "mean" or (head and head.isdigit() and 1 <= int(head) <= n_heads):
        st.session_state.head = head
    st.session_state.view_chosen = True

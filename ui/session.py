"""A session's state: set once from the page's link (and, for a page that reconnects to a restarted server, from
the widget values it sent), and written back to the link after every run."""

from __future__ import annotations

import streamlit as st

from model import align, attribute
from model.checkpoint import read_metadata
from ui import links
from ui import views as registry
from ui.checkpoints import PREFERRED_CHECKPOINT, checkpoint_label, checkpoint_root, examples_for
from ui.common import every_head, head_name
from ui.sidebar import MAX_BEAM, PAGES
from ui.words import LANGUAGES, t
from viz.escape import markdown_literal


def widget_values_the_page_sent() -> dict[str, object]:
    """Key -> value of the widget values the browser sent with this run. A page that reconnects to a restarted
    server sends the values its widgets hold, with the action that triggered the run (a new sentence, another
    layer, a tab), while the new server's session is still empty: those values are the user's and must win over
    the link's. A new page sends none."""
    try:  # Streamlit's session internals: no public API says which values the browser sent
        from streamlit.runtime.state.common import user_key_from_element_id
        from streamlit.runtime.state.session_state_proxy import get_session_state

        sent = {}
        for w in get_session_state().get_widget_states():
            key, field = user_key_from_element_id(w.id), w.WhichOneof("value")
            if key and field:
                sent[key] = getattr(w, field)
        return sent
    except Exception:
        return {}


def restored_values(sent: dict, checkpoints: list[str]) -> dict[str, object]:
    """The sent values of the page's main choices as the options they name (select widgets send the option's
    label, in the interface language of the page), for the keys the script reads before it draws them."""

    def by_label(options, label_of):
        return {label_of(o, lang): o for o in options for lang in LANGUAGES}

    def number(label):
        digits = "".join(c for c in str(label) if c.isdigit())
        return int(digits) if digits else None

    restored = {}
    for key in ("sentence", "second_sentence", "reference"):
        if isinstance(sent.get(key), str):
            restored[key] = sent[key]
    for key in ("present", "word_level"):
        if isinstance(sent.get(key), bool):
            restored[key] = sent[key]
    maps = {
        "lang": by_label(LANGUAGES, lambda code, _: LANGUAGES[code]),
        "checkpoint": by_label(
            checkpoints, lambda name, lang: checkpoint_label(name, read_metadata(checkpoint_root() / name), lang)
        ),
        "decoding": by_label(("greedy", "beam"), lambda d, lang: t(d, lang)),
        "page": by_label(PAGES, lambda p, lang: t(f"page_{p}", lang)),
        "attribution_method": by_label(attribute.METHODS, lambda m, lang: t(f"attribution_{m}", lang)),
        "head": by_label(["mean"], head_name),
    }
    for key, labels in maps.items():
        if sent.get(key) in labels:
            restored[key] = labels[sent[key]]
    if "head" in sent and "head" not in restored and number(sent["head"]):
        restored["head"] = str(number(sent["head"]))
    for key in ("layer", "beam_size"):
        if number(sent.get(key, "")):
            restored[key] = number(sent[key])
    return restored


def tab_from_sent(sent: dict, lang_keys: tuple[str, ...], widget_key: str) -> str | None:
    """The tab key whose label (in any interface language) a sent tabs widget holds, or None."""
    by_label = {t(key, lang): key for key in lang_keys for lang in LANGUAGES}
    return by_label.get(sent.get(widget_key)) if isinstance(sent.get(widget_key), str) else None


def init_state(checkpoints: list[str]) -> None:
    """Defaults, overridden once per session by the URL's query parameters (a shared link), each checked
    strictly (ui.links); what the link asked for but could not have is listed in link_notices.
    Checkpoints are named by folder (the URL says ckpt=en-de, not a path on the server)."""
    if st.session_state.get("initialised"):
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
    sent = widget_values_the_page_sent()  # a reconnected page: its widgets' values stand, the link fills the rest
    defaults = dict(
        sentence=link.sentence or examples_for(checkpoint)[0],
        second_sentence=link.second_sentence or "",
        checkpoint=checkpoint,
        layer=1,
        head="1",
        lang=link.lang or "en",
        beam=link.beam or 1,
        decoding="greedy",
        reference="",
        word_level=bool(link.word_level),
        present=link.present,
    )
    restored = restored_values(sent, checkpoints)
    # a value the page sent but that cannot be read back (an option no longer offered) falls back to the default
    st.session_state.update({k: v for k, v in defaults.items() if k not in restored})
    st.session_state.update(restored)
    if "beam_size" in restored and st.session_state.get("decoding") == "beam":
        st.session_state.beam = restored["beam_size"]
    st.session_state.update(
        link_notices=link.notices,
        link_view=(None if "layer" in sent else link.layer, None if "head" in sent else link.head),
    )
    if "page" not in sent:
        st.session_state.page = "explore"
    if st.session_state.get("beam", 1) > 1:
        st.session_state.update(decoding="beam", beam_size=st.session_state.beam)
    if link.pair:
        kind, query, key = link.pair
        st.session_state.update(search_kind=kind, search_query=query, search_key=key, search_signature="from a link")
    if link.view in registry.views():
        st.session_state.update(page="explore", tab=link.view)
    elif link.view in registry.lessons():
        st.session_state.update(page="lessons", lesson=link.view)
    if link.qk:
        st.session_state.update(qk_kind=link.qk[0], qk_query=link.qk[1], qk_from_link=True)
    if link.attribution:
        st.session_state.attribution_method = link.attribution
    if link.trail:
        st.session_state.update(
            trail=[list(step) for step in link.trail], trail_for="from a link", trail_from_link=True
        )
    if link.compared:
        st.session_state.update(
            zip(("compare_query", "compare_x", "compare_y"), link.compared), compare_signature="from a link"
        )  # kept, not replaced by the pair's own words
    # A reconnected page's tab click (its tabs widgets hold labels): the view or lesson it opened.
    # (the group tabs send a value only once clicked: else the group is the link's view's, or the first)
    groups = registry.view_groups()
    clicked_group = tab_from_sent(sent, tuple(groups), "group_tab")
    group = clicked_group or registry.group_of(st.session_state.get("tab", next(iter(registry.views()))))
    view = tab_from_sent(sent, groups[group], f"view_tab_{group}")
    if view or clicked_group:
        st.session_state.tab = view or groups[group][0]
    lesson = tab_from_sent(sent, tuple(registry.lessons()), "lesson_tab")
    if lesson:
        st.session_state.lesson = lesson
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
        st.session_state.layer = layer
    if head is not None:
        st.session_state.head = head
    if layer is not None or head is not None:
        st.session_state.view_chosen = True


def open_cross_attention_on_the_best_aligner(alignment: dict | None) -> None:
    """The first time a session opens the cross-attention view, with the layer and head still the page's
    defaults (neither a link nor the user chose them), it opens on the checkpoint's best word aligner among the
    raw attention maps (its alignment.json: for en-zh the mean of layer 3), where a class sees the alignment the
    seeds describe; the caption says so (ui.attention). Layer 1, head 1 showed the links only in part."""
    if st.session_state.get("page") != "explore" or st.session_state.get("tab") != "tab_cross":
        return
    if st.session_state.get("aligner_opened"):
        return
    st.session_state.aligner_opened = True
    best = align.best_row((alignment or {}).get("results", []), attribute.RAW)
    if st.session_state.get("view_chosen") or best is None:
        return
    st.session_state.update(layer=int(best["layer"]), head=str(best["head"]), opened_on_aligner=True)


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
    kept = [step for step in trail if 0 <= step[1] < vocab_size]
    if st.session_state.get("trail_from_link") and kept != trail:
        for step, piece in trail:
            if [step, piece] not in kept:
                notice = links.Notice("force", f"{step}:{piece}", "no_such_piece")
                st.session_state.setdefault("link_notices", []).append(notice)
        st.session_state.trail = kept
    return tuple(tuple(step) for step in kept)


def write_url(final: bool = False) -> None:
    """The link of what the page shows, in the address bar. final: the run's last write; where the page's maps
    are switched in the browser (ui.attention sets link_in_browser), the browser writes the link itself from now
    on: the server's copy is cleared, because Streamlit's page sends its own copy of the query string with every
    run when it has one, and the address bar's only when it has none."""
    link = links.link_from_session(st.session_state, next(iter(registry.views())), next(iter(registry.lessons())))
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

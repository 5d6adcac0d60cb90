"""The page's link: one LinkState read from the query parameters strictly (parse_link) and written back to them
(LinkState.to_params, from the session by link_from_session), so a copied link reopens what its page showed. The
page-wide parameters are read here; each view's own choices are the LinkParams it declares (ui.views), which
these functions loop over.

A link is typed, pasted and edited by people, so every value is checked: numbers are ASCII digits of bounded
length (``str.isdigit`` accepts "²" and 5,000-digit strings, which ``int`` then rejects or chokes on), names must
be ones the app offers, and anything else is dropped *with a notice* saying what was ignored or changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ui.views import OLDER_NAMES, link_params

NUMBER = re.compile(r"[0-9]{1,4}")  # a layer, head or beam size; more digits than that is not a real setting
MAX_SENTENCE_CHARACTERS = 2000  # far beyond what the model reads (it truncates to max_len pieces)


@dataclass
class Notice:
    """One value of the link that was not used as given."""

    parameter: str
    value: str  # as given, shortened for display
    action: str  # "ignored", "clamped", "shortened" (a sentence cut), "repeated", "duplicate" (one what-if step
    # twice) or "out_of_sentence"
    used: str = ""  # the value used instead


@dataclass
class LinkState:
    """What a link asks for, already checked; None where the link says nothing usable."""

    sentence: str | None = None
    second_sentence: str | None = None  # the comparison view's sentence
    checkpoint: str | None = None
    lang: str | None = None
    layer: int | None = None  # still to be checked against the checkpoint's depth
    head: str | None = None  # "mean" or a number as text; still to be checked against its heads
    beam: int | None = None
    present: bool = False  # presentation mode
    view: str | None = None  # the open explorer tab or lesson ("tab_cross", "lesson_positions")
    # each view's own choices (its LinkParams): parameter name -> value, e.g. "qk" -> ("cross", 3)
    view_values: dict[str, object] = field(default_factory=dict)
    word_level: bool | None = None  # word-level maps (words=1)
    attribution: str | None = None  # what the attention maps show: raw weights or another method (model.attribute)
    notices: list[Notice] = field(default_factory=list)

    def to_params(self) -> dict[str, str]:
        """The query parameters of this state; parse_link reads them back to the same state. The explorer's
        first view, raw attention and an empty second sentence are the defaults: no parameter, or an empty one."""
        params = {
            "s": self.sentence or "",
            "s2": self.second_sentence or "",
            "ckpt": self.checkpoint or "",
            "layer": str(self.layer or 1),
            "head": self.head or "1",
            "lang": self.lang or "en",
            "beam": str(self.beam or 1),
            "present": str(int(self.present)),
            "words": str(int(bool(self.word_level))),
        }
        if self.view:
            params["view"] = self.view
        if self.attribution and self.attribution != "attention":
            params["attribution"] = self.attribution
        for param in link_params():
            if param.name in self.view_values:
                params[param.name] = param.write(self.view_values[param.name])
        return params


def link_from_session(session, first_view: str, first_lesson: str) -> LinkState:
    """What the page shows, from its session state (a mapping): the state a copied link must reopen.
    first_view: the explorer's default view (no parameter); first_lesson: the lesson the lessons page opens on."""

    lessons = session.get("page") == "lessons"
    view = session.get("lesson", first_lesson) if lessons else session.get("tab")
    view_values = {param.name: param.read(session) for param in link_params()}
    return LinkState(
        sentence=session.get("sentence"),
        second_sentence=session.get("second_sentence") or None,
        checkpoint=session.get("checkpoint"),
        lang=session.get("lang"),
        layer=session.get("layer"),
        head=session.get("head"),
        beam=session.get("beam"),
        present=bool(session.get("present")),
        word_level=bool(session.get("word_level")),
        view=view if view and (lessons or view != first_view) else None,
        view_values={name: value for name, value in view_values.items() if value is not None},
        attribution=session.get("attribution", "attention"),
    )


def session_numbers(session: Mapping, keys: tuple[str, ...]) -> tuple[int, ...] | None:
    """These session values as a tuple, where every one is an int (a choice made); None otherwise."""
    values = [session.get(k) for k in keys]
    return tuple(values) if all(type(v) is int for v in values) else None


def kind_and_numbers(text: str, kinds: tuple[str, ...], count: int) -> tuple | None:
    """ "cross.2.1" -> ("cross", 2, 1): an attention kind, then `count` numbers from 0, dot-separated; None
    otherwise."""
    parts = text.split(".")
    if len(parts) == count + 1 and parts[0] in kinds and all(NUMBER.fullmatch(p) for p in parts[1:]):
        return (parts[0], *(int(p) for p in parts[1:]))
    return None


def shorten(value: str, limit: int = 24) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def parse_number(value: str) -> int | None:
    """A positive count written in ASCII digits, at most four of them; None otherwise."""
    if not NUMBER.fullmatch(value):
        return None
    number = int(value)
    return number if number >= 1 else None


def clamp(number: int, low: int, high: int) -> int:
    return min(max(number, low), high)


def parse_flag(value: str) -> bool | None:
    return {"0": False, "1": True}.get(value)


def parse_head(value: str) -> str | None:
    """ "mean", or a head number as text without leading zeros ("03" -> "3")."""
    number = parse_number(value)
    return "mean" if value == "mean" else None if number is None else str(number)


def parse_link(
    params: dict[str, str],
    checkpoints: list[str],
    languages: list[str],
    max_beam: int,
    views: tuple[str, ...] = (),
    methods: tuple[str, ...] = (),
    repeated: dict[str, int] | None = None,
) -> LinkState:
    """views: the names of the explorer's tabs and lessons a link may open; methods: the attribution methods a map
    may show; repeated: parameter -> how many times the link gives it (more than once: the last is used, with a
    notice)."""
    state = LinkState()
    said_as = {}  # a parameter's name as the link wrote it, where that was an older name
    for older in OLDER_NAMES:  # older links' names for the attribution
        if older in params and "attribution" not in params:
            params = {("attribution" if name == older else name): value for name, value in params.items()}
            said_as["attribution"] = older
    for name, count in (repeated or {}).items():
        if count > 1:
            state.notices.append(Notice(name, shorten(params.get(name, "")), "repeated", str(count)))

    def read(name: str, attribute: str, value) -> None:
        """The value read from params[name], or a notice that it was ignored."""
        if value is None:
            state.notices.append(Notice(said_as.get(name, name), shorten(params[name]), "ignored"))
        else:
            setattr(state, attribute, value)

    read_sentences(params, state)
    offered = lambda among: lambda value: value if value in among else None  # noqa: E731  names the app offers
    page_wide = {
        "ckpt": ("checkpoint", offered(checkpoints)),
        "lang": ("lang", offered(languages)),
        "view": ("view", offered(views)),
        "attribution": ("attribution", offered(methods)),
        "layer": ("layer", parse_number),
        "head": ("head", parse_head),
    }
    for name, (attribute, parse) in page_wide.items():
        if name in params:
            read(name, attribute, parse(params[name]))
    for param in link_params():  # each view's own
        if param.name in params:
            value, notices = param.parse(params[param.name])
            read(param.name, "view_values", None if value is None else {**state.view_values, param.name: value})
            state.notices += [Notice(param.name, shorten(shown), action, used) for shown, action, used in notices]
    for name, attribute, parse in (("present", "present", parse_flag), ("words", "word_level", parse_flag)):
        if name in params:
            read(name, attribute, parse(params[name]))
    if "beam" in params:
        read("beam", "beam", parse_number(params["beam"]))
        if state.beam is not None and state.beam != clamp(state.beam, 1, max_beam):
            state.beam = clamp(state.beam, 1, max_beam)
            state.notices.append(Notice("beam", shorten(params["beam"]), "clamped", str(state.beam)))
    return state


def read_sentences(params: dict[str, str], state: LinkState) -> None:
    """s= and s2=: cut past MAX_SENTENCE_CHARACTERS, and an empty s= said (the page opens on its own sentence)."""
    for name, attribute in (("s", "sentence"), ("s2", "second_sentence")):
        if name in params:
            sentence = params[name]
            if len(sentence) > MAX_SENTENCE_CHARACTERS:
                state.notices.append(Notice(name, shorten(sentence), "shortened", str(MAX_SENTENCE_CHARACTERS)))
                sentence = sentence[:MAX_SENTENCE_CHARACTERS]
            if name == "s" and not sentence.strip():
                state.notices.append(Notice(name, sentence, "empty_sentence"))
            setattr(state, attribute, sentence or None)


def fit_view(
    layer: int | None, head: str | None, deepest: int, n_heads: int
) -> tuple[int | None, str | None, list[Notice]]:
    """Check a link's layer and head against the checkpoint, by one rule: a value past the last becomes the last
    (a layer past the deepest stack, a head past the last head); each change is a notice."""
    notices = []
    if layer is not None and layer > deepest:
        notices.append(Notice("layer", str(layer), "clamped", str(deepest)))
        layer = deepest
    if head is not None and head != "mean" and int(head) > n_heads:
        notices.append(Notice("head", head, "clamped", str(n_heads)))
        head = str(n_heads)
    return layer, head, notices

"""The page's link: one LinkState read from the query parameters strictly (parse_link) and written back to them
(LinkState.to_params, from the session by link_from_session), so a copied link reopens what its page showed.

A link is typed, pasted and edited by people, so every value is checked: numbers are ASCII digits of bounded
length (``str.isdigit`` accepts "²" and 5,000-digit strings, which ``int`` then rejects or chokes on), names must
be ones the app offers, and anything else is dropped *with a notice* saying what was ignored or changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from model.transformer import ATTENTION_KINDS

_NUMBER = re.compile(r"[0-9]{1,4}")  # a layer, head or beam size; more digits than that is not a real setting
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
    pair: tuple[str, int, int] | None = None  # head search: attention kind, query and key positions (from 0)
    compared: tuple[int, int, int] | None = None  # two sentences: the query and the words that fit the first / second
    view: str | None = None  # the open explorer tab or lesson ("tab_cross", "lesson_positions")
    trail: tuple[tuple[int, int], ...] | None = None  # what-if decoding: (step, piece id) the decoder must write
    qk: tuple[str, int] | None = None  # query-key space: attention kind and the query whose weights are drawn
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
        if self.pair:
            params["pair"] = ".".join(map(str, self.pair))
        if self.compared and (self.second_sentence or "").strip():
            params["cmp"] = ".".join(map(str, self.compared))
        if self.qk:
            params["qk"] = f"{self.qk[0]}.{self.qk[1]}"
        if self.attribution and self.attribution != "attention":
            params["attribution"] = self.attribution
        if self.trail:
            params["force"] = ",".join(f"{step}:{piece}" for step, piece in self.trail)
        return params


def link_from_session(session, first_view: str, first_lesson: str) -> LinkState:
    """What the page shows, from its session state (a mapping): the state a copied link must reopen.
    first_view: the explorer's default view (no parameter); first_lesson: the lesson the lessons page opens on."""

    def numbers(keys):
        values = [session.get(k) for k in keys]
        return tuple(values) if all(type(v) is int for v in values) else None

    lessons = session.get("page") == "lessons"
    view = session.get("lesson", first_lesson) if lessons else session.get("tab")
    pair_kind, qk_kind = session.get("search_kind"), session.get("qk_kind")
    pair, qk = numbers(("search_query", "search_key")), numbers(("qk_query",))
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
        pair=(pair_kind, *pair) if pair_kind in ATTENTION_KINDS and pair else None,  # once a pair was chosen
        compared=numbers(("compare_query", "compare_x", "compare_y")),  # the two-sentence view's word pairs
        qk=(qk_kind, *qk) if qk_kind in ATTENTION_KINDS and qk else None,  # once a query was chosen
        attribution=session.get("attribution", "attention"),
        trail=tuple(tuple(step) for step in session.get("trail") or ()) or None,
    )


def shorten(value: str, limit: int = 24) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def parse_number(value: str) -> int | None:
    """A positive count written in ASCII digits, at most four of them; None otherwise."""
    if not _NUMBER.fullmatch(value):
        return None
    number = int(value)
    return number if number >= 1 else None


def clamp(number: int, low: int, high: int) -> int:
    return min(max(number, low), high)


def parse_link(  # noqa: C901 (issue 60 splits it)
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
    for older in ("method", "flow"):  # older links' names for the attribution
        if older in params and "attribution" not in params:
            params = {("attribution" if name == older else name): value for name, value in params.items()}
            said_as["attribution"] = older
    for name, count in (repeated or {}).items():
        if count > 1:
            state.notices.append(Notice(name, shorten(params.get(name, "")), "repeated", str(count)))

    def ignore(name: str) -> None:
        state.notices.append(Notice(said_as.get(name, name), shorten(params[name]), "ignored"))

    for name, attribute in (("s", "sentence"), ("s2", "second_sentence")):
        if name in params:
            sentence = params[name]
            if len(sentence) > MAX_SENTENCE_CHARACTERS:
                state.notices.append(Notice(name, shorten(sentence), "shortened", str(MAX_SENTENCE_CHARACTERS)))
                sentence = sentence[:MAX_SENTENCE_CHARACTERS]
            if name == "s" and not sentence.strip():  # the page opens on its own sentence: say why
                state.notices.append(Notice(name, sentence, "empty_sentence"))
            setattr(state, attribute, sentence or None)
    # Names the app offers: used as given, or ignored.
    for name, attribute, offered in (
        ("ckpt", "checkpoint", checkpoints),
        ("lang", "lang", languages),
        ("view", "view", views),
        ("attribution", "attribution", methods),
    ):
        if name in params:
            if params[name] in offered:
                setattr(state, attribute, params[name])
            else:
                ignore(name)
    if "layer" in params:
        state.layer = parse_number(params["layer"])
        if state.layer is None:
            ignore("layer")
    if "head" in params:
        head = params["head"]
        if head == "mean" or parse_number(head) is not None:
            state.head = head if head == "mean" else str(parse_number(head))
        else:
            ignore("head")
    if "pair" in params:
        parts = params["pair"].split(".")
        if len(parts) == 3 and parts[0] in ATTENTION_KINDS and all(_NUMBER.fullmatch(p) for p in parts[1:]):
            state.pair = (parts[0], int(parts[1]), int(parts[2]))
        else:
            ignore("pair")
    if "cmp" in params:
        parts = params["cmp"].split(".")
        if len(parts) in (3, 4) and all(_NUMBER.fullmatch(p) for p in parts):
            numbers = [int(p) for p in parts]
            # query.x.y; an older link's query.key (first).query.key (second) keeps its two keys
            state.compared = tuple(numbers) if len(numbers) == 3 else (numbers[0], numbers[1], numbers[3])
        else:
            ignore("cmp")
    if "qk" in params:
        parts = params["qk"].split(".")
        if len(parts) == 2 and parts[0] in ATTENTION_KINDS and _NUMBER.fullmatch(parts[1]):
            state.qk = (parts[0], int(parts[1]))
        else:
            ignore("qk")
    if "force" in params:  # what-if decoding: "2:1234,5:88" = step 2 writes piece 1234, step 5 piece 88
        pairs = [item.split(":") for item in params["force"].split(",")]
        if pairs and all(len(p) == 2 and all(_NUMBER.fullmatch(x) for x in p) for p in pairs):
            state.trail = tuple(sorted({int(a): int(b) for a, b in pairs}.items()))
            for step in sorted({int(a) for a, _ in pairs if sum(int(x) == int(a) for x, _ in pairs) > 1}):
                kept = dict(state.trail)[step]
                given = ",".join(f"{a}:{b}" for a, b in pairs if int(a) == step)
                state.notices.append(Notice("force", shorten(given), "duplicate", f"{step}:{kept}"))
        else:
            ignore("force")
    for name, attribute in (("present", "present"), ("words", "word_level")):
        if name in params:
            if params[name] in ("0", "1"):
                setattr(state, attribute, params[name] == "1")
            else:
                ignore(name)
    if "beam" in params:
        beam = parse_number(params["beam"])
        if beam is None:
            ignore("beam")
        else:
            state.beam = clamp(beam, 1, max_beam)
            if state.beam != beam:
                state.notices.append(Notice("beam", shorten(params["beam"]), "clamped", str(state.beam)))
    return state


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

"""The interface's words in English and Chinese: the short labels of `words/words.toml` (each key's two languages
together) and the lessons' prose of `ui/lessons/<lesson>.<lang>.md` (beside the code that computes its numbers),
read once into one table. `t(key, lang, **numbers)` fills a text's named placeholders. A package of its own,
importing nothing else of the project, so that the app, the figures and the command line
(`python -m model.translate --html`) share one catalogue without Streamlit.

Each Chinese text records which English it was written from (`zh_from`, the start of the English's SHA-256), so a
test names every key whose English changed since its Chinese was last checked. After checking one:
    python -m words --checked KEY [KEY ...]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import tomllib
from pathlib import Path

LANGUAGES = {"en": "English", "zh": "中文"}
# Names of the languages a checkpoint translates between, in each interface language.
LANGUAGE_NAMES = {
    "en": {"en": "English", "de": "German", "zh": "Chinese", "fr": "French"},
    "zh": {"en": "英语", "de": "德语", "zh": "中文", "fr": "法语"},
}
CATALOGUE = Path(__file__).with_name("words.toml")
PROSE = Path(__file__).resolve().parents[1] / "ui" / "lessons"
# A section of a prose file: "<!-- key -->", in Chinese "<!-- key · zh_from 1a2b3c4d -->", then its text.
_SECTION = re.compile(r"^<!-- (?P<key>[\w-]+)(?: · zh_from (?P<checked>[0-9a-f]{8}))? -->\n", re.M)


def english_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def read_prose(path: Path) -> dict[str, tuple[str, str | None]]:
    """key -> (text, the hash of the English it was checked against, for Chinese files)."""
    content = path.read_text(encoding="utf-8")
    marks = list(_SECTION.finditer(content))
    if not marks or marks[0].start() != 0:
        raise ValueError(f"{path}: must start with a <!-- key --> line")
    ends = [m.start() for m in marks[1:]] + [len(content)]
    return {m["key"]: (content[m.end() : end].strip("\n"), m["checked"]) for m, end in zip(marks, ends)}


def load() -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, str]]:
    """-> (language -> key -> text, key -> zh_from, key -> where it is written)."""
    strings: dict[str, dict[str, str]] = {"en": {}, "zh": {}}
    checked, source = {}, {}
    for key, entry in tomllib.loads(CATALOGUE.read_text(encoding="utf-8")).items():
        strings["en"][key], strings["zh"][key], checked[key] = entry["en"], entry["zh"], entry["zh_from"]
        source[key] = CATALOGUE.name
    for path in sorted(PROSE.glob("*.md")):
        lang = path.suffixes[-2].lstrip(".")
        for key, (text, was_checked) in read_prose(path).items():
            if key in source and source[key] != f"lessons/{path.name.split('.')[0]}":
                raise ValueError(f"{key} is written twice: {source[key]} and {path.name}")
            strings[lang][key] = text
            source[key] = f"lessons/{path.name.split('.')[0]}"
            if lang == "zh":
                checked[key] = was_checked
    return strings, checked, source


STRINGS, ZH_FROM, WRITTEN_IN = load()


def t(key: str, lang: str, **kwargs) -> str:
    """The text for key in lang, its placeholders filled with kwargs."""
    text = STRINGS[lang][key]
    return text.format(**kwargs) if kwargs else text


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float, digits: int = 1) -> str:
    """A small number for running text: 2.6×10⁻⁸, not 2.6e-08 (a line broke at its hyphen: "2.6e-" / "08")."""
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def apart(value: float, limit: float, digits: int = 2, most: int = 4) -> tuple[str, str]:
    """A value and the limit it is compared with, each with as many decimals (digits, up to most) as it takes to
    write them differently: a score of -0.5346 under a threshold of -0.5271 reads "-0.535, below -0.527", not
    "-0.53, below -0.53", which says the note fired on equal numbers."""
    while digits < most and f"{value:.{digits}f}" == f"{limit:.{digits}f}":
        digits += 1
    return f"{value:.{digits}f}", f"{limit:.{digits}f}"


def sentences(lang: str, *texts: str) -> str:
    """Sentences run on in one paragraph: with a space in English, without one after Chinese's full stop."""
    return ("" if lang == "zh" else " ").join(text for text in texts if text)


def language_name(code: str, lang: str) -> str:
    """The name of a checkpoint's language ("de") in the interface language; the code itself if unknown."""
    return LANGUAGE_NAMES[lang].get(code, code)


def mark_checked(keys: list[str]) -> None:
    """Record that the Chinese of these keys was checked against their current English."""
    catalogue = CATALOGUE.read_text(encoding="utf-8")
    for key in keys:
        new = english_hash(STRINGS["en"][key])
        if WRITTEN_IN[key] == CATALOGUE.name:
            table = re.escape(f"[{key}]") + "|" + re.escape(f'["{key}"]')
            # this key's own zh_from line (a new key's may be empty), never one of a later table
            pattern = re.compile(rf"^(?:{table})\n(?:(?!\[).*\n)*?zh_from = \"[0-9a-f]{{0,8}}\"", re.M)
            match = pattern.search(catalogue)
            if match is None:
                raise ValueError(f"{key}: no zh_from line in its table of {CATALOGUE.name}")
            line_start = catalogue.rindex("zh_from", 0, match.end())
            catalogue = catalogue[:line_start] + f'zh_from = "{new}"' + catalogue[match.end() :]
        else:
            path = PROSE / f"{WRITTEN_IN[key].split('/')[1]}.zh.md"
            text = re.sub(rf"<!-- {re.escape(key)} · zh_from [0-9a-f]{{8}} -->", f"<!-- {key} · zh_from {new} -->",
                          path.read_text(encoding="utf-8"))  # fmt: skip
            path.write_text(text, encoding="utf-8")
    CATALOGUE.write_text(catalogue, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checked", nargs="+", metavar="KEY", required=True, help="keys whose Chinese was checked")
    args = parser.parse_args(argv)
    unknown = [k for k in args.checked if k not in STRINGS["en"]]
    if unknown:
        parser.error(f"no such key: {', '.join(unknown)}")
    mark_checked(args.checked)
    return 0

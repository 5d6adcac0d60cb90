"""A Chinese font served with the app, so Chinese shows on a machine that has none (a classroom PC, a fresh VM):
without one, every Chinese character of the page and of every chart is an empty box.

`static/cjk-subset.woff2` holds only the characters the app can show in Chinese: every piece of the shipped
Chinese vocabularies (what a translation can write, what a Chinese source is cut into) and every character of
the interface's Chinese (the words catalogue and the lessons' prose). Streamlit serves it
(`server.enableStaticServing`) and the theme names it after the Latin font, for the CJK ranges only
(`.streamlit/config.toml`); the charts name it too (ui.common).

Rebuilt when a Chinese vocabulary or the interface's Chinese changes (benchmarks/recompute_checkpoint_tables.sh
runs it; a test names the characters missing from the committed file):
    python -m ui.cjk_font --source /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
(Debian's fonts-noto-cjk, SIL Open Font License 1.1; fontTools and brotli from requirements.txt.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import sentencepiece as spm

import words
from viz.cjk import FONT, is_cjk, subset_woff2

ROOT = Path(__file__).resolve().parent.parent
NOTO_SC_INDEX = 2  # NotoSansCJK-Regular.ttc holds JP, KR, SC, TC, HK: SC is the third


def chinese_vocabularies() -> list[Path]:
    """The shipped checkpoints' Chinese tokenizers: the target's where a model writes Chinese (what a translation
    can write), the source's where it reads Chinese (what a typed sentence's pieces can show)."""
    found = []
    for config in sorted((ROOT / "checkpoints").glob("*/config.json")):
        text = config.read_text(encoding="utf-8")
        for side in ("source", "target"):
            if f'"{side}_language": "zh' in text:
                found.append(config.parent / f"{side}.model")
    return found


def needed_characters() -> set[str]:
    """Every CJK character the app can show: the Chinese vocabularies' pieces and the interface's Chinese."""
    chars: set[str] = set()
    for path in chinese_vocabularies():
        processor = spm.SentencePieceProcessor(model_file=str(path))
        for i in range(processor.get_piece_size()):
            chars.update(processor.id_to_piece(i))
    chars.update("".join(words.STRINGS["zh"].values()))
    return {c for c in chars if is_cjk(c)}


def build(source: Path, out: Path = FONT) -> tuple[int, int]:
    """Subset source to needed_characters() as WOFF2. -> (characters, bytes)."""
    chars = needed_characters()
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(subset_woff2(source, chars, NOTO_SC_INDEX if source.suffix == ".ttc" else 0))
    return len(chars), out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a CJK font (.otf, .ttf or .ttc) to subset")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        parser.error(f"no font at {args.source} (Debian: apt-get install fonts-noto-cjk)")
    n, size = build(args.source)
    print(f"{FONT.relative_to(ROOT)}: {n} characters, {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

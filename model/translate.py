"""Translate sentences with a checkpoint.

    python -m model.translate --checkpoint checkpoints/en-zh "Tom is reading a book."
    python -m model.translate --checkpoint checkpoints/en-zh --input in.txt --output out.txt --beam 4
    python -m model.translate --checkpoint checkpoints/en-zh "Tom is reading a book." --attention-out tom.npz
    python -m model.translate --checkpoint checkpoints/en-zh "Tom chases Jerry." --force 2=追   # what if …?
    python -m model.translate "Tom chases Jerry." --html tom.html --lang zh   # a handout that opens offline

--attention-out writes one sentence's translation with every attention map, Q/K/V and probability to a .npz or
.json file (model.export.load reads it back; model.export.to_bertviz turns it into BertViz's input). --html writes
it as one web page that opens offline, every map switched in the page (the app's "Download as a web page"; the
page is built by viz.handout, in the interface language --lang).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import export
from .cli import check_output, open_checkpoint, positive_int, read_lines
from .decode import forced_steps, translate
from .evaluate import translate_corpus


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", type=Path, default=Path("checkpoints/en-zh"))
    p.add_argument("sentences", nargs="*", help="sentences to translate")
    p.add_argument("--input", type=Path, help="a file of sentences, one per line")
    p.add_argument("--output", type=Path, help="write translations here, one per line (default: stdout)")
    p.add_argument("--beam", type=positive_int, default=1, help="beam size; 1 = greedy")
    p.add_argument("--length-penalty", type=float, default=0.6)
    p.add_argument("--batch-size", type=positive_int, default=64)
    p.add_argument("--attention-out", type=Path, help="one sentence: also write its attention to this .npz / .json")
    p.add_argument("--html", type=Path, help="one sentence: also write it as a web page that opens offline")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="the web page's language (default en)")
    p.add_argument(
        "--force",
        action="append",
        default=[],
        metavar="STEP=PIECE",
        help="what-if decoding: at output step STEP (from 0) write PIECE (a piece of the target "
        "vocabulary, or text, which is then cut into pieces), and decode on from there; repeatable",
    )
    return p


def checked_arguments(p: argparse.ArgumentParser, argv) -> tuple[argparse.Namespace, list[str], list]:
    """-> (arguments, sentences, what-if choices), every check made before any work: a bad output path found after
    translating a whole file wastes the run."""
    args = p.parse_args(argv)
    choices = []
    for item in args.force:
        step, sep, piece = item.partition("=")
        if not sep or not step.strip().isdigit() or not piece:
            p.error(f"--force takes STEP=PIECE (e.g. 2=追), not {item!r}")
        choices.append((int(step), piece))

    sentences = list(args.sentences)
    if args.input:
        sentences += read_lines(args.input)
    if not any(s.strip() for s in sentences):
        p.error("give sentences as arguments or --input FILE")
    check_output(args.output)
    if args.attention_out:
        if args.input or len(sentences) != 1:
            p.error("--attention-out takes exactly one sentence (as an argument, not --input)")
        if args.attention_out.suffix.lower() not in (".npz", ".json"):
            p.error(f"--attention-out must end in .npz or .json, not {args.attention_out.name!r}")
        check_output(args.attention_out)
    if args.html:
        if args.input or len(sentences) != 1:
            p.error("--html takes exactly one sentence (as an argument, not --input)")
        if args.html.suffix.lower() not in (".html", ".htm"):
            p.error(f"--html must end in .html, not {args.html.name!r}")
        check_output(args.html)
    if choices and (args.input or len(sentences) != 1):
        p.error("--force takes exactly one sentence (as an argument, not --input)")
    return args, sentences, choices


def main(argv=None):
    p = parser()
    args, sentences, choices = checked_arguments(p, argv)
    loaded = open_checkpoint(args.checkpoint)
    if choices:
        try:
            forced = forced_steps(loaded.target_tokenizer, choices)
        except ValueError as e:
            p.error(str(e))
        result = translate(
            loaded.model,
            loaded.source_tokenizer,
            loaded.target_tokenizer,
            sentences[0],
            beam_size=args.beam,
            length_penalty=args.length_penalty,
            forced=forced,
        )
        write_files(result, args, loaded)
        text = result.target_text + "\n"
        if args.output:
            args.output.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return
    if args.attention_out or args.html:
        result = translate(
            loaded.model,
            loaded.source_tokenizer,
            loaded.target_tokenizer,
            sentences[0],
            beam_size=args.beam,
            length_penalty=args.length_penalty,
        )
        write_files(result, args, loaded)
    # Blank lines stay blank so output lines match input lines.
    todo = [i for i, s in enumerate(sentences) if s.strip()]
    outputs = [""] * len(sentences)
    translated = translate_corpus(
        loaded.model,
        loaded.source_tokenizer,
        loaded.target_tokenizer,
        [sentences[i].strip() for i in todo],
        args.beam,
        args.length_penalty,
        args.batch_size,
        progress=args.input is not None,
    )
    for i, t in zip(todo, translated):
        outputs[i] = t
    text = "\n".join(outputs) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def write_files(result, args, loaded) -> None:
    """The one sentence's --attention-out and --html files."""
    if args.attention_out:
        export.save(result, args.attention_out)
    if args.html:
        from viz.handout import handout  # the words catalogue, without Streamlit

        languages = (loaded.metadata.get("source_language", "en"), loaded.metadata.get("target_language", "zh"))
        args.html.write_text(handout(result, args.lang, args.checkpoint.name, languages), encoding="utf-8")


if __name__ == "__main__":
    main()

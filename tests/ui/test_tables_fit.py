"""The tables of the heads view (per-sentence statistics, named and strongest heads, the ablation ranking) and
lesson 10's corpus table as the data grid draws them: it cuts a heading or value longer than its column and
scrolls a table wider than the main column (issue 36 item 4: "same po", "boundar", "关闭后的 BL", a table of 587 px
in a 562 px column)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from model import faithfulness, probe
from ui.head_stats import head_table_columns
from ui.lessons.explanation import corpus_table, method_label
from viz.tables import GRID_CELL_PADDING_PX, GRID_PX
from viz.widths import grid_text_px

CHECKPOINTS = sorted(p for p in Path("checkpoints").iterdir() if (p / "head_stats.csv").is_file())


def shipped_tables(checkpoint: Path) -> dict[str, pd.DataFrame]:
    """Every head table the heads view shows for a checkpoint: the sentence's statistics of each kind have the
    corpus statistics' columns (without kind and role), so the corpus rows stand in for a sentence."""
    corpus = probe.read_head_table(checkpoint / "head_stats.csv")
    tables = {
        f"sentence {kind}": rows.drop(columns=["kind", "role"]).dropna(axis=1, how="all")
        for kind, rows in corpus.groupby("kind")
    }
    tables["named"] = corpus[corpus["role"].fillna("") != ""][["kind", "layer", "head", "role"]]
    tables["strongest"] = probe.strongest_heads(corpus)
    if (checkpoint / "head_ablation.csv").is_file():
        tables["ablation"] = probe.read_head_table(checkpoint / "head_ablation.csv").head(20)
    return tables


@pytest.mark.checkpoint
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.name)
def test_every_head_table_fits_the_main_column_with_whole_headings(checkpoint, lang):
    for name, frame in shipped_tables(checkpoint).items():
        _, columns = head_table_columns(frame, lang)
        assert sum(c.width_px for c in columns) <= GRID_PX, (name, [(c.heading, c.width_px) for c in columns])
        for c in columns:
            assert c.width_px >= grid_text_px(c.heading) + GRID_CELL_PADDING_PX, (name, c.heading)


def test_a_number_column_has_one_format_and_room_for_its_longest_value():
    """39 and 38.99 do not stand one above the other; a BLEU of 100.00 is not cut."""
    frame = pd.DataFrame({"layer": [1, 2], "head": [3, 4], "bleu": [39.0, 100.0], "log_prob_drop": [0.0442, 1.5]})
    shown, columns = head_table_columns(frame, "en")
    by_name = {c.name: c for c in columns}
    bleu = next(c for c in columns if c.heading == "BLEU w/o")
    assert bleu.number_format == "%.2f" and bleu.width_px >= grid_text_px("100.00") + GRID_CELL_PADDING_PX
    assert by_name[shown.columns[0]].number_format == "%d"
    assert next(c for c in columns if c.heading == "log p drop").number_format == "%.3f"
    assert np.isclose(shown.iloc[1, 2], 100.0)


@pytest.mark.checkpoint
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("checkpoint", CHECKPOINTS, ids=lambda p: p.name)
def test_lesson_10s_corpus_table_fits_the_main_column(checkpoint, lang):
    table = faithfulness.read_faithfulness(checkpoint / "faithfulness.csv")
    bars = [method_label(r.method, int(r.layer), lang) for r in table.itertuples()]
    shown, columns = corpus_table(table, bars, list(zip(table["ci_low"], table["ci_high"])), lang)
    assert len(shown) == len(table) and len(columns) == 5
    assert sum(c.width_px for c in columns) <= GRID_PX, [(c.heading, c.width_px) for c in columns]
    assert columns[1].heading == "ρ" and "Spearman" in columns[1].name  # the full name on hover

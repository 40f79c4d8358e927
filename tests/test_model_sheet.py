"""The model sheet is validated as a whole, and a broken sheet never breaks an import.

Each corruption of ``ffnbook/data/models.csv`` is refused by
:func:`ffnbook.models.parse_sheet` with a :class:`~ffnbook.models.SheetError`
naming the file, the line, the model and the column; importing any ffnbook
module does not read the sheet at all (it is read on first use, then cached).
"""

from __future__ import annotations

import csv
import io
import pkgutil
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import ffnbook
from ffnbook import models
from ffnbook.models import COLUMNS, SheetError, parse_sheet

SHEET = resources.files("ffnbook").joinpath("data/models.csv").read_bytes()
ROWS = list(csv.reader(io.StringIO(SHEET.decode("utf-8"), newline="")))
NAME = "models.csv"


def _csv(rows) -> bytes:
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def _line_of(model: str) -> int:
    """The line a model's row starts on (rows may span lines inside quoted cells)."""
    reader = csv.reader(io.StringIO(SHEET.decode("utf-8"), newline=""))
    line = 1
    for row in reader:
        if row and row[0] == model:
            return line
        line = reader.line_num + 1
    raise AssertionError(model)


def _with_cell(model: str, column: str, value: str) -> bytes:
    rows = [list(r) for r in ROWS]
    for r in rows[1:]:
        if r[0] == model:
            r[COLUMNS.index(column)] = value
    return _csv(rows)


def test_the_real_sheet_parses_to_what_load_models_serves():
    assert parse_sheet(SHEET) == models.load_models()
    assert tuple(ROWS[0]) == COLUMNS
    assert len(models.load_models()) == len(ROWS) - 1


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "models.csv is empty"),
        (b"  \n\n", "models.csv is empty"),
        (_csv(ROWS[:1]), "models.csv holds a header but no model"),
        (b"\xef\xbb\xbf" + SHEET, "models.csv starts with a UTF-8 byte-order mark"),
        (SHEET.replace(b"GPT-2 small", b"GPT-2 sm\xe4ll", 1), r"models.csv, line \d+: not UTF-8"),
        (
            _csv([["dff" if c == "d_ff" else c for c in ROWS[0]]] + ROWS[1:]),
            "models.csv, line 1: the header must be .*missing d_ff; unknown 'dff'",
        ),
    ],
)
def test_a_broken_file_is_refused_with_the_file_named(data, message):
    with pytest.raises(SheetError, match=message):
        parse_sheet(data, NAME)


def test_missing_unknown_and_reordered_columns_are_named():
    i = COLUMNS.index("d_ff")
    without = [r[:i] + r[i + 1 :] for r in ROWS]
    with pytest.raises(SheetError, match="line 1: .*missing d_ff"):
        parse_sheet(_csv(without), NAME)
    extra = [r + (["dropout"] if n == 0 else ["0.1"]) for n, r in enumerate(ROWS)]
    with pytest.raises(SheetError, match="line 1: .*unknown 'dropout'"):
        parse_sheet(_csv(extra), NAME)
    swapped = [[r[1], r[0], *r[2:]] for r in ROWS]
    with pytest.raises(SheetError, match="line 1: .*out of order"):
        parse_sheet(_csv(swapped), NAME)


def test_short_long_empty_and_duplicated_rows_are_named_by_line():
    line = _line_of("GPT-2 small")
    short = [r[:-1] if r[0] == "GPT-2 small" else r for r in ROWS]
    with pytest.raises(SheetError, match=rf"models.csv, line {line} \('GPT-2 small'\): 23 cells, the header has 24"):
        parse_sheet(_csv(short), NAME)
    long = [r + ["x"] if r[0] == "GPT-2 small" else r for r in ROWS]
    with pytest.raises(SheetError, match=rf"line {line} \('GPT-2 small'\): 25 cells"):
        parse_sheet(_csv(long), NAME)
    text = SHEET.decode("utf-8").split("\n")
    blank = "\n".join(text[:3] + [""] + text[3:]).encode("utf-8")
    with pytest.raises(SheetError, match="models.csv, line 4: an empty row"):
        parse_sheet(blank, NAME)
    doubled = ROWS + [next(r for r in ROWS if r[0] == "Mistral 7B")]
    with pytest.raises(SheetError, match=rf"model 'Mistral 7B' is already on line {_line_of('Mistral 7B')}"):
        parse_sheet(_csv(doubled), NAME)


@pytest.mark.parametrize(
    "model, column, value, message",
    [
        ("GPT-2 small", "d_ff", "3072abc", "must be a whole number, or 'N per expert"),
        ("GPT-2 small", "d_model", "768.0", "must be a whole number"),
        ("GPT-2 small", "d_model", "0", "must be a positive whole number"),
        ("GPT-2 small", "year", "", "must be a whole number"),
        ("GPT-2 small", "n_heads", "12 heads", "must be a whole number"),
        ("Llama-3 8B", "n_kv_heads", "8x", "must be a whole number, or 'N \\(MLA\\)'"),
        ("DeepSeek-V3", "n_experts", "256 routed + 1 shared per MoE layerz", "must be 'n/a', a whole number"),
        ("Mixtral 8x7B", "experts_per_token", "2 of 8", "must be a whole number, or 'N routed"),
        ("Mixtral 8x7B", "experts_per_token", "9", "9 is more than the 8 routed experts"),
        ("GPT-2 small", "experts_per_token", "2", "must be 'n/a' for a dense model"),
        ("GPT-2 small", "vocab_size", "50257 tokens", "must be a whole number, '~N' or 'Nk'"),
        ("GPT-2 small", "context_length", "1k", "must be a whole number"),
        ("GPT-2 small", "ffn_bias", "true", "must be 'yes' or 'no'"),
        ("GPT-2 small", "total_params_reported", " ", "is empty"),
        ("GPT-2 small", "model", " GPT-2 small", "must be a name without surrounding spaces"),
        ("LLaMA-1 7B", "ffn_width_rule", "P: multiple_of 0", "'P|S: multiple_of N"),
    ],
)
def test_a_bad_cell_is_named_by_line_model_and_column(model, column, value, message):
    line = _line_of(model)
    with pytest.raises(SheetError, match=rf"models.csv, line {line} \(model '.*'\), column {column}: {message}"):
        parse_sheet(_with_cell(model, column, value), NAME)


def test_a_row_that_contradicts_itself_is_refused():
    # Parses cell by cell, but n_kv_heads must divide n_heads (ModelConfig's own check).
    with pytest.raises(
        SheetError, match=rf"line {_line_of('Llama-3 8B')} \(model 'Llama-3 8B'\): n_kv_heads must divide"
    ):
        parse_sheet(_with_cell("Llama-3 8B", "n_kv_heads", "5"), NAME)


def test_an_unterminated_quote_is_refused():
    text = SHEET.decode("utf-8")
    with pytest.raises(SheetError, match="models.csv, line .*: malformed CSV|cells, the header has"):
        parse_sheet((text + 'Broken,2020,"unclosed\n').encode("utf-8"), NAME)


def test_no_module_reads_the_sheet_at_import_and_a_broken_sheet_fails_on_first_use(tmp_path):
    copy = tmp_path / "ffnbook"
    shutil.copytree(Path(ffnbook.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "data" / "models.csv").write_text("model,year\nBroken,20x\n", encoding="utf-8")
    names = sorted(m.name for m in pkgutil.iter_modules(ffnbook.__path__) if not m.name.startswith("_"))
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module('ffnbook.' + name)\n"
        "import ffnbook, ffnbook.models as m\n"
        "assert ffnbook.__file__.startswith(sys.argv[1]), ffnbook.__file__\n"
        "try:\n"
        "    m.load_models()\n"
        "except m.SheetError as e:\n"
        "    print('refused:', e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stderr
    assert "refused: ffnbook/data/models.csv, line 1: the header must be the columns" in done.stdout

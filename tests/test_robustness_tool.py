"""tools/robustness.py (`make robustness`): asserts recorded with their margins, glue recorded, failures reported.

Fast: tiny sources and a tiny page, no training and no environment matrix.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("robustness", ROOT / "tools" / "robustness.py")
robustness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(robustness)


def run(source: str) -> robustness.Recorder:
    recorder = robustness.Recorder()
    exec(robustness.instrument(source, 0), {"__robustness__": recorder})
    return recorder


def test_a_failing_assert_is_recorded_not_raised_with_both_sides_and_its_margin():
    recorder = run("x = 0.25\nassert x > 0.3\nassert x < 0.5\n")
    (failing, passing) = recorder.compares.values()
    assert failing["failed"] == 1 and failing["margin"] == pytest.approx(-0.05)
    assert (failing["left"], failing["right"]) == (0.25, 0.3)
    assert passing["failed"] == 0 and passing["margin"] == pytest.approx(0.25)
    assert [a["failed"] for a in recorder.asserts.values()] == [1, 0]


def test_all_over_a_generator_keeps_the_tightest_instance():
    recorder = run("values = [0.9, 0.4, 0.7]\nassert all(v > 0.3 for v in values)\n")
    (entry,) = recorder.compares.values()
    assert entry["count"] == 3 and entry["margin"] == pytest.approx(0.1) and entry["left"] == 0.4


def test_a_chained_comparison_records_each_link_and_stops_where_python_stops():
    recorder = run("g = 0.12\nassert 0 < g < 0.1\nassert 1 < g < 0.1\n")
    links = recorder.compares
    assert links["cell 0, line 2 #1.1"]["margin"] == pytest.approx(0.12)  # 0 < g
    assert links["cell 0, line 2 #1.2"]["margin"] == pytest.approx(-0.02)  # g < 0.1 fails by 0.02
    assert links["cell 0, line 3 #1.1"]["margin"] == pytest.approx(-0.88)  # 1 < g fails ...
    assert "cell 0, line 3 #1.2" not in links  # ... so g < 0.1 is not evaluated, as in Python
    assert [a["failed"] for a in recorder.asserts.values()] == [1, 1]


def test_a_comprehension_s_filter_is_not_a_claim():
    recorder = run("values = [0.9, 0.4, 0.7]\nassert all(v > 0.3 for i, v in enumerate(values) if i < 2)\n")
    assert list(recorder.compares) == ["cell 0, line 2 #1"]  # v > 0.3 only; i < 2 is false once, and no failure
    assert recorder.compares["cell 0, line 2 #1"]["count"] == 2 and not recorder.compares["cell 0, line 2 #1"]["failed"]


def test_non_numeric_comparisons_count_without_a_margin():
    recorder = run("assert [1, 2] == [1, 2]\nassert 'a' in 'abc'\n")
    assert all("margin" not in e and e["failed"] == 0 for e in recorder.compares.values())


def test_code_outside_asserts_is_untouched():
    recorder = run("flags = [1 < 2, 3 > 4]\nassert flags == [True, False]\n")
    assert list(recorder.asserts.values())[0]["failed"] == 0 and len(recorder.compares) == 1


PAGE = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
ffnbook:
  robustness: true
---
# A page

```{code-cell} ipython3
from myst_nb import glue
share = 0.375
glue("share", share, display=False)
glue("label", "three", display=False)
assert share > 0.5
```

The share is {glue:text}`share:.1%`.

```{code-cell} ipython3
raise RuntimeError("a cell that fails")
```
"""


def test_a_page_run_records_glue_asserts_and_the_failing_cell(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    out = tmp_path / "record.json"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "robustness.py"), "--run", str(page), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    record = json.loads(out.read_text())
    assert record["glued"] == {"share": 0.375, "label": "three"}
    assert list(record["asserts"].values())[0]["failed"] == 1
    assert record["error"]["cell"] == 1 and "a cell that fails" in record["error"]["traceback"]
    assert record["environment"] == {"variables": {}}  # the page imported no torch: nothing else describes it

    other = json.loads(json.dumps(record))
    other["glued"]["share"], other["error"] = 0.625, None
    lines, ok = robustness.report(page, {"one": record, "two": other})
    text = "\n".join(lines)
    assert not ok and "ERROR in one, cell 1" in text and "FAILED ASSERT" in text
    assert "share" in text and "printed: 37.5%, 62.5%" in text  # moved, and printed as the page prints it
    assert "1 print differently" in text


def test_the_front_matter_flag_selects_the_pages_that_train():
    pages = {p.stem for p in robustness.robustness_pages()}
    assert "trained-ffn" in pages
    for page in (ROOT / "docs").glob("*.md"):  # every page that trains a torch model asks for the matrix
        if "tiny_transformer" in page.read_text(encoding="utf-8") and "train" in page.read_text(encoding="utf-8"):
            assert page.stem in pages, f"{page.name} trains with torch but lacks ffnbook: {{robustness: true}}"


def test_a_seed_draw_shifts_the_pages_one_seeds_line_and_nothing_else():
    cells = ["import numpy as np", "n_seeds = 5\nseeds = range(5)\nnot_seeds = range(5)"]
    shifted = robustness.shifted_seeds(cells, 10, "page")
    assert shifted == [cells[0], "n_seeds = 5\nseeds = range(10, 15)\nnot_seeds = range(5)"]
    assert cells[1].endswith("seeds = range(5)\nnot_seeds = range(5)")  # the page's own cells are untouched
    assert list(eval(shifted[1].split("\n")[1].split("= ")[1])) == [10, 11, 12, 13, 14]


@pytest.mark.parametrize("cells", [["x = 1"], ["seeds = range(5)", "seeds = range(3)"]])
def test_a_seed_draw_fails_loudly_without_exactly_one_seeds_line(cells):
    with pytest.raises(SystemExit, match="page needs exactly one line `seeds = range"):
        robustness.shifted_seeds(cells, 5, "page")


def test_every_robustness_page_can_be_drawn_with_other_seeds():
    for page in robustness.robustness_pages():
        shifted = robustness.shifted_seeds(robustness.code_cells(page), 5, page.stem)
        assert shifted != robustness.code_cells(page)


def test_further_seed_draws_are_new_and_do_not_overlap_the_matrixs():
    """--more-seeds: draws the matrix does not run, none sharing a seed with another draw of any page."""
    further = robustness.further_seed_draws(6)
    assert len(further) == 6 and not set(further) & set(robustness.SEED_DRAWS)
    n_seeds = max(
        int(robustness.SEEDS_LINE.search("\n".join(robustness.code_cells(page))).group(1))
        for page in robustness.robustness_pages()
    )
    shifts = sorted([0, *robustness.SEED_DRAWS.values(), *further.values()])
    assert all(b - a >= n_seeds for a, b in zip(shifts, shifts[1:]))  # range(k, k + n_seeds) never overlap
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="count must be a positive int"):
            robustness.further_seed_draws(bad)

"""`make bench` (tools/bench.py) works: its edits change what they are meant to change, its edit
steps run on the tiny book of test_execution_cache and execute what they should, and it times
the training the trained-FFN page does, read from the page itself."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import jupytext
import pytest
from sitecheck import NOTEBOOK_HEADER, ROOT
from test_execution_cache import LEAF_OF, build_env

SPEC = importlib.util.spec_from_file_location("bench", ROOT / "tools" / "bench.py")
bench = sys.modules.setdefault("bench", importlib.util.module_from_spec(SPEC))  # dataclasses look it up
SPEC.loader.exec_module(bench)

CELLS = """
# A page

```{code-cell} ipython3
:tags: [remove-cell]
:other-option: 1
from myst_nb import glue
```

```{code-cell} ipython3
x = 1
```
"""
YAML_OPTIONS = """
```{code-cell} ipython3
---
tags: [hide-input]
---
y = 2
```

````{code-cell} ipython3
z = 3
````
"""
NO_OPTIONS = """
````{code-cell} ipython3
z = 3
````
"""


def _cells(text: str) -> list[tuple[str, dict, str]]:
    return [(c.cell_type, dict(c.metadata), c.source) for c in jupytext.reads(text, fmt="md:myst").cells]


@pytest.mark.parametrize(
    "text",
    [NOTEBOOK_HEADER + CELLS, NOTEBOOK_HEADER + YAML_OPTIONS, NOTEBOOK_HEADER + NO_OPTIONS]
    + [path.read_text() for path in bench.notebook_pages()],
    ids=["option-lines", "yaml-options", "no-options"] + [path.stem for path in bench.notebook_pages()],
)
def test_the_page_edit_adds_a_comment_to_the_first_code_cells_code_and_changes_nothing_else(text):
    before, after = _cells(text), _cells(bench.comment_in_first_code_cell(text))
    first = next(i for i, (kind, _, _) in enumerate(before) if kind == "code")
    kind, metadata, source = before[first]
    assert after[first] == (kind, metadata, "# bench edit\n" + source)  # its options kept, as options
    assert after[:first] + after[first + 1 :] == before[:first] + before[first + 1 :]


def test_the_page_edit_says_when_a_page_has_no_code_cell():
    with pytest.raises(ValueError, match="no code cell"):
        bench.comment_in_first_code_cell("# Prose only\n\nNo code.\n")


# Five incremental builds of the six-page book (14 s on an idle two-core machine), from the
# clean build its modules share (one worker makes it once: tests/conftest.py).
@pytest.mark.build
def test_the_bench_edit_steps_on_the_tiny_book_execute_what_they_edited(built_project):
    """On the tiny book as its clean build (made once per session) left it."""
    project = built_project
    leaf, page = project / "ffnbook" / "leaf_a.py", project / "docs" / "page0.md"
    originals = {path: path.read_bytes() for path in (leaf, page)}
    tiny = bench.Project(project, build_env(project))

    steps = bench.incremental_builds(tiny, project / "_build", leaf, page)
    assert sorted(steps["leaf_pages"]) == sorted(name for name, module in LEAF_OF.items() if module == "leaf_a")
    assert 0 < steps["leaf_exec"] < steps["leaf"]
    assert steps["page_pages"] == ["page0"]
    assert {path: path.read_bytes() for path in originals} == originals  # the edits undone


@pytest.mark.build
def test_the_training_bench_trains_what_the_trained_page_trains():
    """The page's own call (tools/bench.py --training-json, one step): its models, and a lower
    bound on the work that does not exceed the 6 x parameters x tokens estimate it refines."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench.py"), "--training-json", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["steps"] == 1 and result["replicas"] > 0
    assert 0 < result["needed"] <= result["flops"]
    assert result["peak"] > 0 and result["seconds"] > 0

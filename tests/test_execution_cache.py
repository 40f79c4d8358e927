"""The execution cache is fast and never stale (docs/_ext/bookext/execution.py).

Each test builds a small book of its own with the real Makefile and conf.py,
in a temporary copy of the project, so it can edit ffnbook there freely. The
copy's ffnbook is put first on PYTHONPATH, so the Sphinx process and every
kernel import the copy.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sitecheck import NOTEBOOK_HEADER, ROOT, glued_after

pytestmark = pytest.mark.build

N_PAGES = 6  # Sphinx reads in parallel only when more than five pages are outdated

PAGE = NOTEBOOK_HEADER.replace("{", "{{").replace("}", "}}") + """# Page {n}

```{{code-cell}} ipython3
:tags: [remove-cell]
import numpy as np
from myst_nb import glue

from ffnbook.activations import gelu_tanh

glue("value_{n}", float(gelu_tanh(np.array([1.0]))[0]), display=False)
```

The tanh-approximated GELU of one is {{glue:text}}`value_{n}:.6f`.
"""


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the project with a six-page book in docs/."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in ("conf.py", "Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "ffnbook", copy / "ffnbook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    docs = copy / "docs"
    docs.mkdir()
    # The book's build machinery, beside the pages as in the real tree.
    for name in ("_ext", "_static", "_templates"):
        shutil.copytree(ROOT / "docs" / name, docs / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("references.bib", "glossary.yml"):
        shutil.copy2(ROOT / "docs" / name, docs / name)
    names = [f"page{n}" for n in range(N_PAGES)]
    (docs / "index.md").write_text("# Index\n\n```{toctree}\n" + "\n".join(names) + "\n```\n")
    for n in range(N_PAGES):
        (docs / f"page{n}.md").write_text(PAGE.format(n=n))
    return copy


def build(project: Path, build_dir: str = "_build") -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(project))
    result = subprocess.run(
        ["make", "--no-print-directory", "html", f"PY={sys.executable}", "SETUP=",
         f"BUILDDIR={build_dir}"],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )
    return result.returncode, result.stdout + result.stderr


def executed(output: str) -> int:
    return len(re.findall(r"Executing notebook using", output))


def test_noop_rebuild_executes_nothing_and_code_edit_executes_one(project):
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    assert executed(out) == N_PAGES

    rc, out = build(project)
    assert rc == 0, out[-4000:]
    assert executed(out) == 0, out[-4000:]

    page = project / "docs" / "page2.md"
    page.write_text(page.read_text().replace("from myst_nb import glue", "from myst_nb import glue  # edited"))
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    assert executed(out) == 1, out[-4000:]
    assert "page2.md: Executing notebook" in out


def test_editing_ffnbook_re_executes_and_shows_the_new_value(project):
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    site = project / "_build" / "html"
    shown = glued_after(site, "page0", "GELU of one is")
    old = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))
    assert shown == f"{old:.6f}"

    # Change the cubic coefficient of the approximation, as a careless edit might.
    source = project / "ffnbook" / "activations.py"
    text = source.read_text()
    assert "_GELU_TANH_CUBIC = 0.044715" in text
    source.write_text(text.replace("_GELU_TANH_CUBIC = 0.044715", "_GELU_TANH_CUBIC = 0.05"))

    rc, out = build(project)
    assert rc == 0, out[-4000:]
    assert executed(out) == N_PAGES, out[-4000:]
    new = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.05)))
    for n in range(N_PAGES):
        assert glued_after(site, f"page{n}", "GELU of one is") == f"{new:.6f}"


def test_editing_the_extensions_re_renders_every_page_without_executing(project):
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    css = project / "docs" / "_static" / "ffnbook.css"
    css.write_text(css.read_text() + "\n/* edited */\n")
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    assert "re-reading every page" in out
    assert executed(out) == 0


def test_changing_requirements_re_executes_everything(project):
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    requirements = project / "requirements.txt"
    requirements.write_text(requirements.read_text() + "\n# a comment is still a change\n")
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    assert executed(out) == N_PAGES


def test_cold_parallel_builds_do_not_race_on_the_cache_database(project):
    for attempt in range(3):
        rc, out = build(project, build_dir=f"_build_cold{attempt}")
        assert rc == 0, out[-4000:]
        assert "already exists" not in out
        assert executed(out) == N_PAGES


def test_warnings_are_reported_again_after_a_failed_build(project):
    page = project / "docs" / "page1.md"
    page.write_text(page.read_text() + "\nSee {doc}`missing-page`.\n")
    rc, out = build(project)
    assert rc != 0 and "unknown document: 'missing-page'" in out
    # Nothing changed, but the warning must not be forgotten.
    rc, out = build(project)
    assert rc != 0 and "unknown document: 'missing-page'" in out
    assert executed(out) == 0  # pages are re-read, not re-executed

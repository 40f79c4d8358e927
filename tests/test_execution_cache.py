"""A page executes again exactly when something it used changed (docs/_ext/bookext/execution/engine.py).

The build tests (marked ``build``) make a small book of their own with the real Makefile and conf.py, in
a temporary copy of the project, so they can edit ffnbook there freely without
depending on the book's pages. The copy's ffnbook is put first on PYTHONPATH, so the
Sphinx process and every kernel import the copy. Two leaf modules and a data file
are added to the copy's ffnbook; each page imports one leaf module, some pages read
the data file, and every page shows what it found.
"""

from __future__ import annotations

import atexit
import copy
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from sitecheck import NOTEBOOK_HEADER, ROOT, glued_after

from bookext.execution import kernel_template
from bookext.execution.engine import Build
from bookext.execution.kernels import Outcome, Run, execute_notebooks
from bookext.execution.records import MODIFIED_DURING_RUN, RECORD_FORMAT, Checker, RecordStore

# Which leaf module each page imports, and which pages read the data file.
LEAF_OF = {
    "page0": "leaf_a",
    "page1": "leaf_a",
    "page2": "leaf_a",
    "page3": "leaf_b",
    "page4": "leaf_b",
    "page5": "leaf_b",
}  # six: Sphinx reads in parallel
READERS = {"page0", "page3"}
TABLE = "ffnbook/data/leaf_table.csv"

PAGE = (
    NOTEBOOK_HEADER
    + """# {name}

```{{code-cell}} ipython3
:tags: [remove-cell]
from myst_nb import glue
from ffnbook import {leaf}

glue("leaf_{name}", {leaf}.VALUE, display=False)
```

The leaf value is {{glue:text}}`leaf_{name}`.
"""
)

READER = """
```{{code-cell}} ipython3
:tags: [remove-cell]
from importlib import resources

rows = (resources.files("ffnbook") / "data" / "leaf_table.csv").read_text().split()
glue("rows_{name}", len(rows), display=False)
```

The table has {{glue:text}}`rows_{name}` rows.
"""


#: A test-only extension: the build stops writing at page0 when PAUSE_WRITING_AT names a file
#: (it says so there), so that a test can stop a build in its write phase; otherwise inert.
PAUSE = """
import os
import time
from pathlib import Path


def pause(app, pagename, templatename, context, doctree):
    marker = os.environ.get("PAUSE_WRITING_AT")
    if marker and pagename == "page0":
        Path(marker).write_text(str(os.getpid()))
        time.sleep(900)


def setup(app):
    app.connect("html-page-context", pause)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
"""


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path)


def make_project(tmp_path: Path) -> Path:
    """A copy of the project with a six-page book in docs/ and two leaf modules in ffnbook/;
    its conf.py also loads the inert PAUSE extension."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in ("conf.py", "Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "ffnbook", copy / "ffnbook", ignore=shutil.ignore_patterns("__pycache__"))
    for leaf in ("leaf_a", "leaf_b"):
        (copy / "ffnbook" / f"{leaf}.py").write_text('"""A leaf module for the cache tests."""\n\nVALUE = 1\n')
    (copy / TABLE).write_text("a\nb\nc\n")
    docs = copy / "docs"
    docs.mkdir()
    # The book's build machinery, beside the pages as in the real tree.
    for name in ("_ext", "_static", "_templates"):
        shutil.copytree(ROOT / "docs" / name, docs / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("references.bib", "glossary.yml"):
        shutil.copy2(ROOT / "docs" / name, docs / name)
    (docs / "_ext" / "pause_writing.py").write_text(PAUSE)
    conf = copy / "conf.py"
    conf.write_text(conf.read_text() + '\nextensions.append("pause_writing")\n')
    (docs / "index.md").write_text("# Index\n\n```{toctree}\n" + "\n".join(LEAF_OF) + "\n```\n")
    for name, leaf in LEAF_OF.items():
        text = PAGE.format(name=name, leaf=leaf) + (READER.format(name=name) if name in READERS else "")
        (docs / f"{name}.md").write_text(text)
    return copy


def build_env(project: Path) -> dict:
    """The environment of a build of the copy: its ffnbook first, and the commit the reader
    notebooks pin (the copy is no git checkout)."""
    return dict(os.environ, PYTHONPATH=str(project), FFNBOOK_PACKAGE_REF=PINNED)


#: A stand-in commit for the copies' reader notebooks.
PINNED = "0123456789abcdef0123456789abcdef01234567"


def build(project: Path, build_dir: str = "_build") -> tuple[int, str]:
    env = build_env(project)
    result = subprocess.run(
        ["make", "--no-print-directory", "html", f"PY={sys.executable}", "SETUP=", f"BUILDDIR={build_dir}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return result.returncode, result.stdout + result.stderr


def built(project: Path) -> str:
    rc, out = build(project)
    assert rc == 0, out[-4000:]
    return out


def executed(output: str) -> dict[str, str]:
    """The pages this build executed, each with the reason the build gave."""
    return dict(re.findall(r"^ffnbook: executing (\S+) \((.*)\)$", output, flags=re.M))


def shown(project: Path, name: str, phrase: str = "The leaf value is") -> str:
    return glued_after(project / "_build" / "html", name, phrase)


@pytest.mark.build
def test_a_rebuild_with_nothing_changed_executes_nothing_and_a_code_edit_executes_that_page(clean_build, built_project):
    project, out = built_project, clean_build[2]
    assert set(executed(out)) == set(LEAF_OF)  # the clean build executed every page
    assert not (project / "_build" / ".jupyter_cache").exists()  # jupyter-cache is not used

    out = built(project)
    assert executed(out) == {}, out[-4000:]

    page = project / "docs" / "page2.md"
    page.write_text(page.read_text().replace("from myst_nb import glue", "from myst_nb import glue  # edited"))
    out = built(project)
    assert executed(out) == {"page2": "its code changed"}, out[-4000:]

    # Prose is not code: the page is re-rendered, not executed.
    page.write_text(page.read_text().replace("The leaf value is", "The value of the leaf module is"))
    out = built(project)
    assert executed(out) == {}, out[-4000:]
    assert shown(project, "page2", "The value of the leaf module is") == "1"


@pytest.mark.build
def test_editing_a_leaf_module_or_a_data_file_executes_exactly_the_pages_that_used_it(built_project):
    project = built_project
    assert {name: shown(project, name) for name in LEAF_OF} == dict.fromkeys(LEAF_OF, "1")

    leaf = project / "ffnbook" / "leaf_a.py"
    leaf.write_text(leaf.read_text().replace("VALUE = 1", "VALUE = 2"))
    out = built(project)
    importers = {name for name, module in LEAF_OF.items() if module == "leaf_a"}
    assert executed(out) == dict.fromkeys(importers, "ffnbook/leaf_a.py changed"), out[-4000:]
    # Three pages to read: Sphinx's worker processes are not forked (bookext.builds.buildspeed).
    assert "3 pages to read: reading and writing in one process" in out
    # The executed pages show the new value; the others were right to keep the old one.
    assert {name: shown(project, name) for name in LEAF_OF} == {
        name: "2" if name in importers else "1" for name in LEAF_OF
    }

    table = project / TABLE
    table.write_text("a\nb\nc\nd\n")
    out = built(project)
    assert executed(out) == dict.fromkeys(READERS, f"{TABLE} changed"), out[-4000:]
    assert {name: shown(project, name, "The table has") for name in READERS} == dict.fromkeys(READERS, "4")


def test_a_changed_requirements_file_makes_every_record_stale(tmp_path):
    """The fast check of what the build below shows on the six-page book (make test-full)."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("numpy==2.0\n")
    record = {"format": RECORD_FORMAT, "code": "c", "python": sys.version, "files": {}, "folders": {}}
    record["requirements"] = Checker(requirements).file(str(requirements))
    assert Checker(requirements).stale(record, "c") is None
    requirements.write_text("numpy==2.0\n# a comment is still a change\n")
    assert Checker(requirements).stale(record, "c") == "requirements.txt changed"


@pytest.mark.full  # every page executes again (~10 s); make test checks the rule above
@pytest.mark.build
def test_editing_the_requirements_executes_every_page_reading_them_in_parallel(built_project):
    project = built_project
    requirements = project / "requirements.txt"
    requirements.write_text(requirements.read_text() + "\n# a comment is still a change\n")
    out = built(project)
    assert executed(out) == dict.fromkeys(LEAF_OF, "requirements.txt changed"), out[-4000:]
    assert "reading and writing in one process" not in out  # six pages: read in parallel
    assert {name: shown(project, name) for name in LEAF_OF} == dict.fromkeys(LEAF_OF, "1")


@pytest.mark.build
def test_a_missing_damaged_altered_or_mismatched_record_is_discarded_and_its_page_executes(built_project):
    project = built_project
    records = project / "_build" / ".execution"
    (records / "page1.json").unlink()
    (records / "page4.json").write_text('{"format": 1, "docname": "page4", "cells": [')  # cut short
    # A number edited in a record: the page would publish it, were it not for the digest.
    page3 = records / "page3.json"
    glued = '"application/papermill.record/text/plain": "1"'  # how a glued value is recorded
    assert glued in page3.read_text()
    page3.write_text(page3.read_text().replace(glued, glued.replace('"1"', '"7"')))
    # Valid JSON with a valid digest, but outputs for a page with one code cell fewer.
    page5 = json.loads((records / "page5.json").read_text())
    page5["cells"] = page5["cells"][1:]
    RecordStore(records).write("page5", {k: v for k, v in page5.items() if k != "digest"})
    # The record of another page.
    shutil.copy(records / "page2.json", records / "page0.json")
    rc, out = build(project)
    assert rc == 0, out[-4000:]  # healed, under -W
    assert executed(out) == dict.fromkeys(["page0", "page1", "page3", "page4", "page5"], "no usable record"), out
    found = re.findall(r"ffnbook: discarded the execution record of (\S+) \((\S+)\): (.*)$", out, flags=re.M)
    assert all(path == f"_build/.execution/{page}.json" for page, path, _ in found), found
    discarded = {page: why for page, _, why in found}
    assert set(discarded) == {"page0", "page3", "page4", "page5"}, out[-4000:]
    assert "its contents do not match their digest" in discarded["page3"]
    assert "it is the record of 'page2'" in discarded["page0"]
    assert "it is not a whole JSON record" in discarded["page4"]
    assert "does not match the page" in discarded["page5"]
    assert {name: shown(project, name) for name in LEAF_OF} == dict.fromkeys(LEAF_OF, "1")
    assert executed(built(project)) == {}


# make test-full: two more builds of every page; a code edit's re-render is in make test (above).
@pytest.mark.full
@pytest.mark.build
def test_editing_how_pages_look_re_renders_every_page_and_executes_none(built_project):
    project = built_project
    css = project / "docs" / "_static" / "ffnbook.css"
    css.write_text(css.read_text() + "\n/* edited */\n")
    out = built(project)
    assert "re-reading every page" in out
    assert executed(out) == {}

    for edited in ("glossary.yml", "_templates/layout.html", "_ext/bookext/content/mathml.py"):
        path = project / "docs" / edited
        comment = {".yml": "# edited", ".html": "{# edited #}", ".py": "# edited"}[path.suffix]
        path.write_text(path.read_text() + f"\n{comment}\n")
        out = built(project)
        assert "re-reading every page" in out, edited
        assert executed(out) == {}, edited


# make test-full: a clean build of its own and a failing one (~40 s on a loaded machine).
@pytest.mark.full
@pytest.mark.build
def test_warnings_are_reported_again_after_a_failed_build(project):
    page = project / "docs" / "page1.md"
    page.write_text(page.read_text() + "\nSee {doc}`missing-page`.\n")
    rc, out = build(project)
    assert rc != 0 and "unknown document: 'missing-page'" in out
    # Nothing changed, but the warning must not be forgotten.
    rc, out = build(project)
    assert rc != 0 and "unknown document: 'missing-page'" in out
    assert executed(out) == {}  # pages are re-read, not re-executed


# --- the record store under parallel writers ---------------------------------------------------


def _hammer(folder: str, seed: int, rounds: int) -> tuple[int, int]:
    """Write, read and remove records of four pages at random; check every record read back."""
    store, rng = RecordStore(Path(folder)), random.Random(seed)
    reads = writes = 0
    for _ in range(rounds):
        docname = f"page{rng.randrange(4)}"
        action = rng.random()
        if action < 0.45:
            payload = "x" * rng.randrange(1, 300_000)  # large enough that a write takes a while
            store.write(
                docname, {"docname": docname, "payload": payload, "sha": hashlib.sha256(payload.encode()).hexdigest()}
            )
            writes += 1
        elif action < 0.95:
            record = store.read(docname)
            if record is not None:
                assert hashlib.sha256(record["payload"].encode()).hexdigest() == record["sha"]
                reads += 1
        else:
            store.remove(docname)
    return reads, writes


def test_many_processes_writing_and_reading_records_at_once_never_fail(tmp_path):
    processes, rounds = 8, 250
    with ProcessPoolExecutor(processes, mp_context=get_context("fork")) as pool:
        results = list(pool.map(_hammer, [str(tmp_path)] * processes, range(processes), [rounds] * processes))
    reads = sum(r for r, _ in results)
    writes = sum(w for _, w in results)
    # The race was real only if records were read while others were being written.
    assert reads > processes * rounds // 10 and writes > processes * rounds // 10
    assert not list(tmp_path.glob(".writing-*")), "a temporary file was left behind"
    for path in tmp_path.glob("*.json"):
        json.loads(path.read_text())


def test_a_record_reads_back_as_written_and_any_change_to_it_discards_it(tmp_path):
    told = []
    store = RecordStore(tmp_path, discarded=lambda *args: told.append(args))
    record = {"format": 2, "docname": "summary", "cells": [{"outputs": [{"text/plain": "2099712"}]}]}
    store.write("summary", dict(record))
    assert {k: v for k, v in store.read("summary").items() if k != "digest"} == record
    assert told == []

    path = store.path("summary")
    path.write_text(path.read_text().replace("2099712", "2099713"))
    assert store.read("summary") is None
    assert told == [("summary", path, "its contents do not match their digest")]
    assert not path.exists()  # so the page executes and writes a whole new record
    assert store.read("summary") is None and len(told) == 1  # discarded once, told once


def test_a_record_that_does_not_fit_its_page_is_discarded(tmp_path):
    told = []
    build_ = Build(
        RecordStore(tmp_path, discarded=lambda *args: told.append(args)),
        tmp_path,
        [],
        [],
        tmp_path / "requirements.txt",
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1"), nbformat.v4.new_code_cell("2")])
    fits = {
        "format": 2,
        "docname": "p",
        "executed": 1.0,
        "seconds": 0.5,
        "metadata": {},
        "cells": [
            {"execution_count": 1, "outputs": []},
            {"execution_count": 2, "outputs": [{"output_type": "stream", "name": "stdout", "text": "2"}]},
        ],
    }
    build_.store.write("p", fits)
    assert build_.usable_record("p", notebook)["cells"] == fits["cells"]
    for broken, why in [
        ({"cells": fits["cells"][:1]}, "outputs for 1 code cells, the page has 2"),
        (
            {"cells": [fits["cells"][0], {"outputs": [{"text": "2"}]}]},
            "the outputs of code cell 1 are not notebook outputs",
        ),
        ({"seconds": None}, "the execution's time"),
    ]:
        build_.store.write("p", {**fits, **broken})
        assert build_.usable_record("p", notebook) is None
        assert told[-1][0] == "p" and why in told[-1][2] and "does not match the page" in told[-1][2]
        assert not build_.store.path("p").exists()


# --- what a kernel records, and forked kernels are fresh ones -------------------------------


def test_the_probe_records_files_read_written_and_listed_not_the_import_system(tmp_path):
    (tmp_path / "mod_used.py").write_text("VALUE = 1\n")
    (tmp_path / "data.txt").write_text("x")
    (tmp_path / "sub").mkdir()
    script = textwrap.dedent(f"""
        import json, os, sys
        sys.path.insert(0, {str(Path(kernel_template.__file__).parent)!r})
        sys.path.insert(0, {str(tmp_path)!r})
        import kernel_template
        probe = kernel_template.install_probe()
        import mod_used
        open({str(tmp_path / "data.txt")!r}).read()
        open({str(tmp_path / "out.txt")!r}, "w").write("y")
        os.listdir({str(tmp_path / "sub")!r})
        try:
            open({str(tmp_path / "absent.txt")!r})
        except FileNotFoundError:
            pass
        print(probe.report([{str(tmp_path)!r}], []))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    real = os.path.realpath(tmp_path)
    assert report["modules"] == [f"{real}/mod_used.py"]
    # An attempt to open a file that does not exist counts: creating it may change the page.
    assert report["read"] == [f"{real}/absent.txt", f"{real}/data.txt"]
    assert report["written"] == [f"{real}/out.txt"]
    assert report["listed"] == [f"{real}/sub"]  # not tmp_path itself, an import location


def _process_facts_notebook() -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [
        nbformat.v4.new_code_cell(source)
        for source in (
            "import os, sys\nprint(sorted(k for k in dir() if not k.startswith('_')))",
            "print(os.getcwd(), sys.argv[0].endswith('ipykernel_launcher.py'), sys.path)",
            "print(os.environ.get('MPLBACKEND'), os.getppid() != 1, __name__)",
            "import matplotlib\nprint(matplotlib.get_backend(), matplotlib.rcParams['figure.dpi'])",
            "import numpy as np\nprint(np.arange(6).reshape(2, 3) @ np.ones(3))",
            "shared = 'a name defined by this page'",
        )
    ]
    return notebook


def _merged_streams(outputs: list) -> list:
    """Outputs with consecutive chunks of one stream joined, as the build shows them
    (nb_merge_streams): how a kernel chunks its stdout depends on timing, not on the kernel."""
    merged: list = []
    for output in outputs:
        if (
            merged
            and output.get("output_type") == "stream" == merged[-1].get("output_type")
            and output["name"] == merged[-1]["name"]
        ):
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + output["text"]}
        else:
            merged.append(dict(output))
    return merged


def _kernel_notebook(*sources: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in sources],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )


@pytest.mark.parametrize("deaths", [1, 2])
def test_a_kernel_that_dies_before_its_first_reply_is_started_once_more(tmp_path, monkeypatch, deaths):
    """A kernel that exits before answering (a port taken meanwhile: no cell ran) gets one new
    start; a second death is the page's failure, reported as it happened."""
    from bookext.execution import kernels

    starts = []
    ready = kernels.PromptlyReadyClient.wait_for_ready

    async def dying(self, timeout=None):
        starts.append(self.kernel_name)
        if len(starts) <= deaths:
            raise kernels.KernelDiedAtStart("Kernel died before replying to kernel_info")
        return await ready(self, timeout)

    monkeypatch.setattr(kernels.PromptlyReadyClient, "wait_for_ready", dying)
    at_exit = []  # what is left to run at exit: nbclient registers each kernel's clean-up there

    def register(function, *args, **kwargs):
        at_exit.append(function)
        return function

    def unregister(function):
        at_exit[:] = [f for f in at_exit if f != function]

    monkeypatch.setattr(atexit, "register", register)
    monkeypatch.setattr(atexit, "unregister", unregister)
    run = Run("page", _kernel_notebook("print(6 * 7)"), str(tmp_path), 60, False)
    outcome = execute_notebooks([run], jobs=1, roots=[str(tmp_path)], excluded=[], preload=None)["page"]
    assert len(starts) == 2  # never a third start
    # Neither the kernel that died nor the one that ran leaves a clean-up to fail at exit.
    assert [f for f in at_exit if getattr(f, "__func__", None) is NotebookClient._cleanup_kernel] == []
    if deaths == 1:
        assert outcome.error is None and outcome.notebook.cells[0].outputs[0]["text"] == "42\n"
    else:
        assert outcome.error == "KernelDiedAtStart" and "Kernel died before replying" in outcome.traceback


#: A cell that prints its kernel's CPU priority (niceness).
PRIORITY_CELL = "import os\nprint(os.getpriority(os.PRIO_PROCESS, 0))"


@pytest.fixture(scope="module")
def kernel_runs(tmp_path_factory) -> dict:
    """The same pages run twice, in fresh kernels and in kernels forked from a template that
    imported what conf.py preloads (torch included), with the build's one-thread limits: the
    outcomes by mode and page. One pair of runs serves the three kernel tests below (each run
    starts its kernels and imports torch: seconds)."""
    import runpy

    folder = tmp_path_factory.mktemp("kernels")
    (folder / "helper_pkg.py").write_text("def version():\n    import torch\n    return torch.__version__\n")
    preload = runpy.run_path(str(ROOT / "conf.py"))["ffnbook_kernel_preload"]
    assert "torch" in preload and "numpy" in preload
    from bookext.execution.kernel_template import THREAD_VARIABLES

    pages = {
        "facts0": _process_facts_notebook(),
        "facts1": _process_facts_notebook(),
        "uses-torch": _kernel_notebook("import helper_pkg", "print(helper_pkg.version() != '')"),
        "numpy-only": _kernel_notebook("import json, numpy as np", "np.ones(2).sum()"),
        "threads": _kernel_notebook(
            f"import os, torch\nprint([os.environ.get(v) for v in {THREAD_VARIABLES!r}], torch.get_num_threads())"
        ),
        "longest": _kernel_notebook(PRIORITY_CELL),
        "short": _kernel_notebook(PRIORITY_CELL),
    }
    limits = dict.fromkeys(THREAD_VARIABLES, "1")

    def run(preload):
        runs = [
            Run(name, copy.deepcopy(nb), str(folder), 300, False, expected_seconds=60.0 if name == "longest" else 0.0)
            for name, nb in pages.items()
        ]
        return execute_notebooks(runs, jobs=2, roots=[str(folder)], excluded=[], preload=preload, env=limits)

    outcomes = {"fresh": run(None), "forked": run(preload)}
    for mode, by_page in outcomes.items():
        for name, outcome in by_page.items():
            assert outcome.error is None, (mode, name, outcome.traceback)
            assert outcome.forked == (mode == "forked"), (mode, name)
    return outcomes


def test_a_forked_kernel_is_indistinguishable_from_a_fresh_one(kernel_runs):
    fresh, forked = kernel_runs["fresh"], kernel_runs["forked"]
    for name in ("facts0", "facts1"):
        outputs = [[_merged_streams(c.outputs), c.execution_count] for c in fresh[name].notebook.cells]
        assert outputs == [[_merged_streams(c.outputs), c.execution_count] for c in forked[name].notebook.cells]
    # Each page starts with an empty namespace although another page defined a name before.
    assert "shared" not in forked["facts1"].notebook.cells[0].outputs[0]["text"]


def test_the_page_expected_longest_keeps_the_builds_priority_and_the_others_run_lower(kernel_runs):
    """On a busy machine the page the build waits on longest is slowed least: its kernel runs at
    the build's priority, every other page's at BACKGROUND_NICENESS lower, fresh or forked."""
    from bookext.execution.kernels import BACKGROUND_NICENESS

    ours = os.getpriority(os.PRIO_PROCESS, 0)
    for mode, outcomes in kernel_runs.items():
        printed = {name: int(outcomes[name].notebook.cells[0].outputs[0]["text"]) for name in ("longest", "short")}
        assert printed == {"longest": ours, "short": min(ours + BACKGROUND_NICENESS, 19)}, mode


def test_the_probe_records_the_packages_the_page_imported_even_those_the_template_preloaded(kernel_runs):
    """What a reader's notebook installs (torch or not) comes from these lists: a package
    imported by a page's cell or by code it called counts, in a fresh kernel and in one
    forked from a template that loaded torch before the page started; the kernel's own
    imports and the standard library do not."""
    for mode, outcomes in kernel_runs.items():
        assert outcomes["uses-torch"].used["imported"] == ["helper_pkg", "torch"], mode
        assert outcomes["numpy-only"].used["imported"] == ["numpy"], mode


def test_every_kernel_computes_with_one_thread_unless_the_builder_says_otherwise(tmp_path, monkeypatch, kernel_runs):
    """OpenBLAS/OpenMP start a thread per CPU in every kernel: ``-j`` kernels at once then
    oversubscribe the CPUs (np.linalg.pinv 1024 x 128 under load: 10 s instead of 0.09 s),
    and the last digits of a page's sums would depend on the machine's CPUs."""
    from bookext.execution.kernel_template import THREAD_VARIABLES, kernel_threads

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert kernel_threads() == dict.fromkeys(THREAD_VARIABLES, "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # whoever runs the build decides
    assert kernel_threads()["OMP_NUM_THREADS"] == "3"
    # A record made with other settings is stale; one without (made before them) too.
    checker = Checker(tmp_path / "requirements.txt", dict.fromkeys(THREAD_VARIABLES, "1"))
    record = {
        "format": RECORD_FORMAT,
        "code": "c",
        "python": sys.version,
        "requirements": None,
        "threads": dict.fromkeys(THREAD_VARIABLES, "1"),
        "files": {},
        "folders": {},
    }
    assert checker.stale(record, "c") is None
    assert (
        checker.stale({**record, "threads": dict.fromkeys(THREAD_VARIABLES, "2")}, "c")
        == "the kernels' thread settings changed"
    )
    assert checker.stale({k: v for k, v in record.items() if k != "threads"}, "c") is not None
    monkeypatch.delenv("OMP_NUM_THREADS")

    # The limits reach the libraries in a fresh kernel and in a forked one, whose template
    # imported torch (which sizes its pool at import) before any page ran.
    for mode, outcomes in kernel_runs.items():
        outcome = outcomes["threads"]
        text = "".join(o["text"] for o in outcome.notebook.cells[0].outputs if o["output_type"] == "stream")
        assert text == f"{['1'] * len(THREAD_VARIABLES)} 1\n", mode


def test_a_file_modified_while_its_page_ran_is_never_taken_as_unchanged(tmp_path):
    used = tmp_path / "used.py"
    used.write_text("VALUE = 1\n")
    build = Build(RecordStore(tmp_path / "records"), tmp_path, [str(tmp_path)], [], tmp_path / "requirements.txt")
    notebook = nbformat.v4.new_notebook()
    report = {"modules": [str(used)], "read": [], "written": [], "listed": []}
    before = Outcome(notebook, started=time.time() - 60, seconds=1.0, used=report)
    after = Outcome(notebook, started=time.time() + 60, seconds=1.0, used=report)
    assert build.record("p", "code", before)["files"][str(used)] == MODIFIED_DURING_RUN
    assert build.record("p", "code", after)["files"][str(used)] == hashlib.sha256(used.read_bytes()).hexdigest()


def test_a_clean_build_starts_a_page_marked_long_running_first(tmp_path):
    """Without records, the long page must not start last (it did, alphabetically: a clean
    build of the book waited ~6 s longer for trained-ffn); with records, their times decide."""
    from types import SimpleNamespace

    from bookext.execution.engine import UNKNOWN_SECONDS, _run

    config = SimpleNamespace(execution_in_temp=False, execution_timeout=60, execution_allow_errors=False)
    page = tmp_path / "page.md"

    def expected(metadata: dict, recorded=None) -> float:
        notebook = nbformat.v4.new_notebook(metadata=metadata)
        return _run("page", notebook, config, page, recorded).expected_seconds

    assert expected({"ffnbook": {"long_running": True}}) == float("inf")
    assert expected({}) == expected({"ffnbook": {"long_running": "yes"}}) == UNKNOWN_SECONDS
    assert expected({"ffnbook": {"long_running": True}}, recorded=3.5) == 3.5
    assert "long_running: true" in (ROOT / "docs" / "trained-ffn.md").read_text().split("\n---\n")[0]

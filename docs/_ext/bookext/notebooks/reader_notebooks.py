"""Reader notebooks: every executed page as a notebook that runs and reads well anywhere.

The notebook myst-nb executes is the page's MyST source, full of build plumbing
(``from myst_nb import glue``, glue calls, MyST roles and directives). For
each notebook page this part of the extension writes
``<html>/notebooks/<page>.ipynb``, made from three things the build already
has: the page's MyST source, its executed notebook (code and outputs) and its
glue data (``<build>/jupyter_execute/<page>.glue.json``):

* a **setup cell** first, which installs ``ffnbook`` (from the published
  repository, at the commit the site was built from) and, if the page's code
  imported it when it executed (its execution record says), the CPU build of
  PyTorch, each only where it is missing; where everything is
  installed it installs nothing (:mod:`bookext.notebooks.notebook_setup`);
* **code cells** without the plumbing: no ``myst_nb`` import and no glue call;
  a hidden (``remove-cell``) cell is kept only if a later cell uses a name it
  defines or it does something besides defining names; a glued figure is
  drawn by a code cell where the page shows it, followed by its caption;
  folded cells stay folded (``jupyter.source_hidden``);
* **Markdown cells** through :mod:`bookext.notebooks.myst_markdown`: glued values as the
  site shows them, citations author-year with the page's reference list at the
  end, glossary terms and cross-references as links to the published site,
  admonitions as block quotes, dropdowns and self-checks as ``<details>``,
  math left as ``$...$``, headings and figures numbered as on the site.

The converter's parts, by job: :mod:`bookext.notebooks.notebook_cells` (cell surgery: plumbing
out, where each glued figure is drawn, which hidden cells stay),
:mod:`bookext.notebooks.myst_markdown` (MyST to Markdown, with no Sphinx),
:mod:`bookext.notebooks.site_resolver` (what the Sphinx environment resolves: glue, citations,
terms, references, numbers), :mod:`bookext.notebooks.notebook_setup` (the setup cell, pins and
Binder files) and this module (the notebook assembled, and the Sphinx hooks).

The same folder gets a Binder environment of its own (``binder/``: Python,
the package, CPU torch; no test tools). It is what the Pages workflow
publishes (the ``notebooks`` branch, and a tag per built commit), and the launch
buttons (Colab, Binder) point at these notebooks; the download menu offers the same
file (:mod:`bookext.notebooks.downloads`); :mod:`bookext.notebooks.notebook_setup` pins all of it.
A role or directive the converter does not know, or plumbing it cannot
remove, is a build warning that names the page (so ``make html`` fails).
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from bookext.execution.engine import imported_packages
from bookext.notebooks.downloads import is_notebook, mystnb_notebook
from bookext.notebooks.myst_markdown import CodeCell, Converter, directives, heading_count, md_escape, myst_parser
from bookext.notebooks.notebook_cells import cell_metadata, clean_outputs, plan_code_cells
from bookext.notebooks.notebook_setup import launch_urls, notebook_metadata, reader_notebook_uri, setup_cell
from bookext.notebooks.site_resolver import SiteResolver, is_image

logger = logging.getLogger(__name__)


# --- the notebook ---------------------------------------------------------------------------------


def _heading_numbers(app: Sphinx, pagename: str, doctree: nodes.document) -> list[str]:
    numbers = app.env.toc_secnumbers.get(pagename, {})
    suffix = app.config.html_secnumber_suffix
    found = []
    for i, section in enumerate(doctree.findall(nodes.section)):
        anchor = "" if i == 0 else "#" + section["ids"][0]
        number = numbers.get(anchor)
        found.append(".".join(map(str, number)) + suffix if number else "")
    return found


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _code_cell(source: str, outputs: list, metadata: dict) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": metadata, "outputs": outputs, "source": source}


def reader_notebook(app: Sphinx, pagename: str, doctree: nodes.document, executed: dict) -> tuple[dict, list[str]]:
    """The reader's notebook of ``pagename`` and the problems found converting it."""
    cells = [dict(c, source=_text(c.get("source", ""))) for c in executed["cells"]]
    glue_path = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.glue.json"
    glued = json.loads(glue_path.read_text(encoding="utf-8")) if glue_path.exists() else {}
    figure_keys = {k for k, v in glued.items() if is_image(v.get("data", {}))}
    parser = myst_parser(tuple(sorted(app.config.myst_enable_extensions)))
    shown_at = {}  # glue key -> the Markdown cell whose glue directive shows it
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for name, argument, _ in directives(cell["source"], parser):
                if name in ("glue", "glue:figure", "glue:any") and argument:
                    shown_at.setdefault(argument.split()[0], i)
    plan = plan_code_cells(cells, figure_keys, shown_at)
    stripped, keep = plan.stripped, plan.keep
    figures = {key: CodeCell(code) for key, code in plan.figures.items()}

    resolver = SiteResolver(app, pagename, figures)
    markdown_sources = [c["source"] for c in cells if c["cell_type"] == "markdown"]
    headings = _heading_numbers(app, pagename, doctree)
    counted = sum(heading_count(text, parser) for text in markdown_sources)
    converter = Converter(
        resolver, headings if counted == len(headings) else None, tuple(app.config.myst_enable_extensions)
    )
    # PyTorch, where the page's code imported it when it executed (directly or through
    # ffnbook): the kernel's probe saw the import statements (bookext.execution.kernel_template).
    imported = imported_packages(app, pagename)
    if imported is None:
        plan.problems.append("reader notebook: no execution record says which packages the page imported")
    torch = imported is None or "torch" in imported
    out = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": (
                f"*This notebook is the runnable version of [{md_escape(app.env.titles[pagename].astext())}]"
                f"({resolver.url(pagename)}) in {md_escape(app.config.html_title)}. "
                "Run the setup cell first: it installs what is missing.*"
            ),
        },
        _code_cell(setup_cell(app, torch), [], {}),
    ]
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for piece in converter.convert(cell["source"]):
                if isinstance(piece, CodeCell):
                    out.append(_code_cell(piece.source, piece.outputs, {}))
                elif piece.strip():
                    out.append({"cell_type": "markdown", "metadata": {}, "source": piece})
        elif cell["cell_type"] == "code" and keep.get(i):
            tags = cell.get("metadata", {}).get("tags", [])
            out.append(_code_cell(stripped[i].source, clean_outputs(cell.get("outputs", [])), cell_metadata(tags)))
    if resolver.cited:
        out.append({"cell_type": "markdown", "metadata": {}, "source": resolver.references()})
    for n, cell in enumerate(out):
        cell["id"] = f"cell-{n}"
    notebook = {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "ffnbook": {"page": pagename, "needs_torch": torch, **notebook_metadata(app)},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return notebook, plan.problems + resolver.problems


# --- Sphinx hooks -------------------------------------------------------------------------------


def notebook_uri(app: Sphinx, pagename: str) -> str | None:
    """The reader notebook of ``pagename``, if it is a notebook page with an executed notebook."""
    if is_notebook(app, pagename) and mystnb_notebook(app, pagename).exists():
        return reader_notebook_uri(pagename)
    return None


def write_reader_notebook(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Write the page's reader notebook; point the launch buttons at it.

    The download menu offers the same notebook as ``_sources/<page>.ipynb`` (bookext.notebooks.downloads).
    """
    uri = notebook_uri(app, pagename)
    if doctree is None or uri is None:
        return
    # The page as myst-nb wrote it, outputs included: bookext.execution.engine's client put the
    # record's outputs into it, whether the page executed in this build or not.
    executed = json.loads(mystnb_notebook(app, pagename).read_text(encoding="utf-8"))
    notebook, problems = reader_notebook(app, pagename, doctree, executed)
    for problem in problems:
        logger.warning(problem, location=pagename)
    target = Path(app.outdir) / uri
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _point_launch_buttons(app, pagename, context)


def _point_launch_buttons(app: Sphinx, pagename: str, context: dict) -> None:
    urls = launch_urls(app, pagename)
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") not in urls:
                logger.warning(
                    "reader notebook: launch button %r has no reader-notebook address",
                    button.get("text"),
                    location=pagename,
                )
                continue
            button["url"] = urls[button["text"]]


def setup(app: Sphinx) -> dict:
    # What the notebooks install and where they open (the commit, the setup cell, Binder).
    app.setup_extension("bookext.notebooks.notebook_setup")
    # After the theme's launch and download buttons (priority 501) exist.
    app.connect("html-page-context", write_reader_notebook, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

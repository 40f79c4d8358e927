"""The chapter as one PDF: the role ``{chapter-pdf}`Download the chapter as one PDF```.

It links the PDF that ``make pdf`` printed (``<build>/pdf/ffnbook.pdf``) as a download with
its size, in HTML builds made after it; where there is no PDF the role and its paragraph
vanish, so no build links a missing file. The page is read again when the PDF appears or
changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

PDF_NAME = "ffnbook.pdf"


class pdf_link_slot(nodes.Inline, nodes.Element):
    """Where the PDF link goes; removed (with an emptied paragraph) when there is none."""


def pdf_path(app: Sphinx) -> Path:
    """Where `make pdf` writes the PDF: ``<build>/pdf/``, beside the HTML output folder."""
    return Path(app.outdir).parent / "pdf" / PDF_NAME


def note_the_build(app: Sphinx) -> None:
    """Keep where the PDF is and whether this build links it on the environment, which a role can see."""
    app.env.ffnbook_pdf = (pdf_path(app), app.builder.name == "html")


def chapter_pdf_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    pdf, linked = env.ffnbook_pdf
    # The page is read again when the PDF changes (a dependency) or appears (Sphinx would
    # re-read a page whose dependency is missing on every build, so the page waits instead).
    if pdf.is_file():
        env.note_dependency(str(pdf))
    else:
        _waiting(env).add(env.docname)
    slot = pdf_link_slot()
    # Only the site links it: the one-page build that the PDF is printed from does not.
    if linked and pdf.is_file():
        # A leading "/" makes the target relative to the source folder, from any page.
        target = "/" + Path(os.path.relpath(pdf, env.srcdir)).as_posix()
        link = addnodes.download_reference(
            rawtext, "", reftarget=target, refdoc=env.docname, refdomain="", reftype="download", refexplicit=True
        )
        link += nodes.Text(text)
        slot += link
        slot += nodes.Text(" ")
        # Measured, not typed: the class lets the typed-number check tell (tests/test_typed_numbers.py).
        slot += nodes.inline("", f"(PDF, {pdf.stat().st_size / 2**20:.1f} MB)", classes=["ffn-pdf-size"])
    return [slot], []


def _waiting(env) -> set[str]:
    """Pages that link the PDF and were read while there was none."""
    if not hasattr(env, "ffnbook_pdf_waiting"):
        env.ffnbook_pdf_waiting = set()
    return env.ffnbook_pdf_waiting


def read_again_once_the_pdf_exists(app: Sphinx, env, added, changed, removed) -> list[str]:
    return sorted(_waiting(env) - set(removed)) if pdf_path(app).is_file() else []


def forget_page(app: Sphinx, env, docname: str) -> None:
    _waiting(env).discard(docname)


def merge_waiting(app: Sphinx, env, docnames, other) -> None:
    _waiting(env).update(_waiting(other) & set(docnames))


def resolve_pdf_slots(app: Sphinx, doctree: nodes.document) -> None:
    for slot in list(doctree.findall(pdf_link_slot)):
        parent = slot.parent
        if slot.children:
            slot.replace_self(slot.children)
        else:
            parent.remove(slot)
        if isinstance(parent, nodes.paragraph) and not parent.astext().strip():
            parent.parent.remove(parent)


def setup(app: Sphinx) -> dict:
    app.add_node(pdf_link_slot)
    app.add_role("chapter-pdf", chapter_pdf_role)
    app.connect("builder-inited", note_the_build)
    app.connect("doctree-read", resolve_pdf_slots)
    app.connect("env-get-outdated", read_again_once_the_pdf_exists)
    app.connect("env-purge-doc", forget_page)
    app.connect("env-merge-info", merge_waiting)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

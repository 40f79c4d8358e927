"""The reader-notebook part of bookext in-process on a tiny book (tests/roots/test-reader-notebooks):
one notebook page whose MyST uses each kind of token the converter reads (a target, a comment,
a block break, headings, roles, glue, a directive, display math with a label, code), built
with Sphinx's own resolution of terms, pages and equations."""

from __future__ import annotations

import json

TESTROOT = "reader-notebooks"
SITE = "https://example.org/book/"


def notebook(tiny_book) -> dict:
    return json.loads((tiny_book.outdir / "notebooks" / "page.ipynb").read_text(encoding="utf-8"))


def markdown(tiny_book) -> list[str]:
    return [c["source"] for c in notebook(tiny_book)["cells"] if c["cell_type"] == "markdown"]


def test_roles_resolve_as_the_site_resolves_them_and_code_stays_as_written(tiny_book):
    first = markdown(tiny_book)[1]
    assert first.startswith(
        "# The page\n\nThe [FFN](" + SITE + "glossary.html#term-FFN) has width 4,096 "
        "and ratio 4.0; see [Glossary](" + SITE + "glossary.html)."
    )
    assert first.endswith("Code keeps `{term}`FFN`` and $\\{x\\}$ as written; so does \\{term}`FFN`.")


def test_targets_comments_and_breaks_go_headings_and_math_stay(tiny_book):
    text = "\n\n".join(markdown(tiny_book))
    assert "(page-top)=" not in text and "a comment" not in text and "+++" not in text
    assert "## Math\n\n$$\ny = W x\n$$\n\nEquation (1)." in text


def test_a_directive_becomes_a_quote_with_its_roles_resolved_and_code_fences_stay(tiny_book):
    text = "\n\n".join(markdown(tiny_book))
    assert "> **A [FFN](" + SITE + "glossary.html#term-FFN) note**\n>\n> Inside 4096." in text
    assert "```python\nprint('{term}`FFN`')\n```" in text


def test_plumbing_goes_and_without_an_execution_record_the_notebook_installs_torch(tiny_book):
    cells = notebook(tiny_book)["cells"]
    code = [c["source"] for c in cells if c["cell_type"] == "code"]
    assert "glue" not in "\n".join(code[1:]) and code[-1] == "width * ratio"
    assert notebook(tiny_book)["metadata"]["ffnbook"]["needs_torch"] is True
    assert "no execution record says which packages the page imported" in tiny_book._warning.getvalue()

"""Listings a reader can read: ``literalinclude`` of ffnbook's code, as Python a reader
would write it down.

Sphinx's ``literalinclude`` copies the source's lines as they are. Two things in them
are for the API pages, not for a reader of a listing:

* **Roles in docstrings.** ``:func:`~ffnbook.feedforward.ffn``` makes a link on the
  API page; in a listing it is markup. Each role becomes the name it shows, in
  backticks: ``ffn`` (``~`` keeps the last part, ``text <target>`` keeps the text).
* **A method without its class.** ``:pyobject: Block.forward`` gives the method's
  lines, indented for a class the listing does not show. The class's first line and
  ``...`` are put above it, so the indentation reads as Python. A piece cut out of a
  function's body (``:start-at:``) is dedented to its own left margin.

The same text goes to the reader's notebooks (:mod:`bookext.notebooks.reader_notebooks`).
"""

from __future__ import annotations

import ast
import re
import textwrap

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralInclude

ROLE = re.compile(
    r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const|term|ref|doc)"
    r":`(~?)([^`<]*?)(?:\s*<([^`>]*)>)?`"
)


def plain_roles(text: str) -> str:
    """Sphinx roles as the name they show, in backticks.

    >>> plain_roles("Calls :func:`~ffnbook.feedforward.ffn` and :class:`the params <FFNParams>`.")
    'Calls `ffn` and `the params`.'
    >>> plain_roles(":func:`ffnbook.gelu` stays whole; ``x`` too.")
    '`ffnbook.gelu` stays whole; ``x`` too.'
    """

    def shown(m: re.Match) -> str:
        tilde, text, target = m.groups()
        if target is not None:
            return f"`{text.strip()}`"
        return f"`{text.rsplit('.', 1)[-1] if tilde else text}`"

    return ROLE.sub(shown, text)


def with_class(text: str, source: str, pyobject: str) -> str:
    """A method's listing with its class's first line (and ``...`` for the rest) above it."""
    owner = pyobject.split(".")[0]
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == owner:
            header = source.splitlines()[node.lineno - 1]
            indent = re.match(r"\s*", text).group(0)
            return f"{header}\n{indent}...\n\n{text}"
    return text


def readable_listing(text: str, source: str, options: dict) -> str:
    """What a listing shows of ``text``, cut from ``source`` with the directive's ``options``."""
    text = plain_roles(text)
    pyobject = options.get("pyobject", "")
    if "." in pyobject:
        return with_class(text, source, pyobject)
    if "dedent" not in options:
        text = textwrap.dedent(text)
    return text


class ReadableLiteralInclude(LiteralInclude):
    """``literalinclude``, its text made readable by :func:`readable_listing`."""

    def run(self):
        result = super().run()
        _, filename = self.env.relfn2path(self.arguments[0])
        for block in (n for node in result for n in node.findall(nodes.literal_block)):
            if not filename.endswith(".py"):
                continue
            with open(filename, encoding="utf-8") as f:
                source = f.read()
            text = readable_listing(block.astext(), source, self.options)
            block.rawsource = text
            block.children = [nodes.Text(text)]
        return result


def setup(app: Sphinx) -> dict:
    app.add_directive("literalinclude", ReadableLiteralInclude, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

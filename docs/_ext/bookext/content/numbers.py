"""Glued numbers in the book's format: ``{glue:text}`key:.2e``` through
:func:`ffnbook.display.format_number`.

myst-nb's ``glue:text`` role writes a value with Python's ``format``, so a gap that is
exactly zero reads "0.00e+00" and a ratio of two reads "2.0e+00". The book's role is
myst-nb's with one change, the formatting: scientific notation only below 1e-3 and
from a million on, an exact zero as ``0`` (the rule and its reasons are in
:func:`~ffnbook.display.format_number`, which the package's tables use too). It is
registered in myst-nb's ``glue`` domain in place of myst-nb's own, so pages keep
writing ``{glue:text}``; the reader's notebooks format glued values the same way
(:func:`plain_text`).
"""

from __future__ import annotations

import re
from ast import literal_eval

from docutils import nodes
from myst_nb.core.variables import RetrievalError
from myst_nb.ext.glue.roles import PasteTextRole
from myst_nb.ext.glue.utils import glue_warning, retrieve_glue_data
from sphinx.application import Sphinx


def plain_text(text: str, spec: str) -> str:
    """A glued value's ``text/plain`` form, formatted by ``spec`` as the book prints it."""
    # Imported here: importing ffnbook imports NumPy and SciPy (0.4 s of CPU, measured), which
    # a build that reads no page (a no-op) never needs.
    from ffnbook.display import format_number

    try:
        value = literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if spec in ("", "s"):  # no format: a number as Python writes it, but 0.0 as 0
        return format_number(value, "") if isinstance(value, float) else str(value)
    kind = spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format_number(value, spec)


class BookPasteTextRole(PasteTextRole):
    """myst-nb's ``glue:text``, writing numbers with :func:`plain_text`."""

    def run(self):
        key, _, spec = self.text.rpartition(":") if ":" in self.text else ("", "", "")
        if not key:
            key, spec = self.text, "s"
        if "::" in key:  # a value glued on another page: myst-nb resolves it later
            return super().run()
        try:
            result = retrieve_glue_data(self.document, key)
        except RetrievalError:
            return super().run()  # myst-nb's own warning, with its hint
        if "text/plain" not in result.data:
            return super().run()
        try:
            text = plain_text(result.data["text/plain"], spec)
        except Exception as exc:  # noqa: BLE001 - reported like myst-nb's own role
            return [], [glue_warning(f"Failed to format text/plain data: {exc}", self.document, self.line)]
        node = nodes.inline(text, text, classes=["pasted-text"])
        self.set_source_info(node)
        return [node], []


# --- a number stays on one line with its unit and with the "=" before it -------------------------

_UNIT_AFTER = re.compile(r"^\s+(?=[^\W\d_]|%)")  # a word or percent sign follows the number
_RELATION_BEFORE = re.compile(r"([=≈×<>≤≥~])\s+$")


def _replace(old: nodes.Text, text: str) -> None:
    """Put a new text node in ``old``'s place, found by identity: text nodes are strings,
    and docutils' ``replace`` would take the first equal one ("\\n" is in every paragraph)."""
    parent = old.parent
    index = next(i for i, child in enumerate(parent.children) if child is old)
    parent[index] = nodes.Text(text)


def bind_numbers_to_their_words(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """A glued number joined by no-break spaces to the word after it ("46.70 billion",
    "2,099,712 parameters") and to a relation before it ("ε = 2.22e-16"), also one that ends
    a formula: a line break there leaves a number without its unit, or an "=" at a line's end."""
    for number in list(doctree.findall(nodes.inline)):
        if "pasted-text" not in number.get("classes", ()):
            continue
        siblings = number.parent.children
        index = next(i for i, child in enumerate(siblings) if child is number)
        after, following = (siblings[index + 1 : index + 3] + [None, None])[:2]
        if isinstance(after, nodes.Text) and _UNIT_AFTER.match(after):
            _replace(after, _UNIT_AFTER.sub("\u00a0", str(after), count=1))
        elif (  # a soft line break of the source, a text node of its own, then the word
            isinstance(after, nodes.Text)
            and not str(after).strip()
            and isinstance(following, nodes.Text)
            and _UNIT_AFTER.match(" " + str(following))
        ):
            _replace(after, "\u00a0")
        before, formula = siblings[index - 1] if index else None, siblings[index - 2] if index > 1 else None
        if isinstance(before, nodes.Text) and _RELATION_BEFORE.search(before):
            _replace(before, _RELATION_BEFORE.sub("\\1\u00a0", str(before)))
        elif (  # a formula that ends in its relation ("$d_\\text{ff} = $ 2048"), then a space
            isinstance(before, nodes.Text)
            and not str(before).strip()
            and isinstance(formula, nodes.math)
            and _RELATION_BEFORE.search(formula.astext() + " ")
            and len(formula.astext()) <= _SHORT_FORMULA
        ):
            _keep_together(formula, number)


#: A formula this long (LaTeX characters) or shorter stays whole on a line with its number.
_SHORT_FORMULA = 40


def _keep_together(formula: nodes.math, number: nodes.inline) -> None:
    """Formula, no-break space and number in one span that does not wrap (CSS
    ``.ffn-together``): browsers break after a ``<math>`` element even before a no-break
    space (an atomic inline has a break opportunity after it), so only the span holds them."""
    parent = formula.parent
    start = next(i for i, child in enumerate(parent.children) if child is formula)
    together = nodes.inline(classes=["ffn-together"])
    together += [formula, nodes.Text("\u00a0"), number]
    parent[start : start + 3] = [together]


def setup(app: Sphinx) -> dict:
    app.setup_extension("myst_nb")
    app.add_role_to_domain("glue", "text", BookPasteTextRole(), override=True)
    app.connect("doctree-resolved", bind_numbers_to_their_words)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

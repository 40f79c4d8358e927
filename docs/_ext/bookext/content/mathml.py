"""Render LaTeX math to MathML at build time.

Sphinx's default math renderer loads MathJax from a CDN, so math breaks
offline and every page pays for a large script. Browsers render MathML Core
natively, and docutils ships a LaTeX-to-MathML converter, so the HTML can
carry finished math and no script at all. Enable with::

    extensions = [..., "bookext.content.mathml"]
    html_math_renderer = "mathml"

A formula the converter cannot handle is a build warning (so ``-W`` fails the
build) naming the page and the formula, never a silent blank.
"""

from __future__ import annotations

import re

from docutils import nodes
from docutils.utils.math import latex2mathml
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)


def _to_mathml(translator: HTML5Translator, node: nodes.Element, block: bool) -> str:
    latex = node.astext()
    try:
        return latex2mathml.tex2mathml(latex, as_block=block)
    except Exception as err:  # docutils raises SyntaxError and friends
        logger.warning("cannot convert math to MathML (%s): %s", err, latex, location=node)
        return f"<code>{translator.encode(latex)}</code>"


# --- inline formulas that may break across lines ------------------------------------------------

#: After these operators, outside brackets, a long inline formula may break (as TeX breaks
#: inline math after a relation or a binary operator).
BREAK_AFTER = set("=≈≠<>≤≥∝∈≡∼→↦⟹+−±×")
OPENING, CLOSING = set("([{⟨⌊⌈‖|"), set(")]}⟩⌋⌉‖|")
#: A formula with fewer top-level parts stays one piece: it is short.
SPLIT_FROM = 8
_TAG = re.compile(r"<(/?)([a-zA-Z]+)\b[^>]*?(/?)>")
_MO = re.compile(r"<mo\b[^>]*>\s*(.*?)\s*</mo>", re.S)


def _children(markup: str, start: int, end: int) -> list[str]:
    """The markup of each element between ``start`` and ``end`` of ``markup`` at the top level."""
    parts, depth, opened = [], 0, None
    for tag in _TAG.finditer(markup, start, end):
        closing, self_closing = tag.group(1) == "/", tag.group(3) == "/"
        if not closing and depth == 0:
            opened = tag.start()
        depth += 0 if self_closing else (-1 if closing else 1)
        if depth == 0 and opened is not None:
            parts.append(markup[opened : tag.end()])
            opened = None
    return parts


def _top_level_parts(mathml: str) -> tuple[str, list[str], str] | None:
    """``<math ...>``, its children's markup, ``</math>``; None when it is not one element.
    A row between fixed-size brackets (``\\bigl( ... \\bigr)``) counts as its children:
    its brackets do not grow with what they hold, so it may break inside."""
    first = _TAG.search(mathml)
    if first is None or first.group(2) != "math" or not mathml.rstrip().endswith("</math>"):
        return None
    parts = []
    for part in _children(mathml, first.end(), mathml.rstrip().rindex("</math>")):
        opening = _TAG.match(part)
        inner = _children(part, opening.end(), part.rindex("</")) if opening.group(2) == "mrow" else []
        fixed = inner and re.match(r"<mo\b[^>]*\bminsize=", inner[0]) and re.match(r"<mo\b[^>]*\bminsize=", inner[-1])
        parts.extend(inner if fixed else [part])
    return mathml[: first.end()], parts, "</math>"


def breakable_inline(mathml: str) -> str:
    """A long inline formula as several ``<math>`` elements, split after its top-level
    relations and binary operators (outside brackets), with a line-break opportunity
    between them: MathML Core never breaks a ``<math>`` across lines, so a formula longer
    than the rest of the line would otherwise stick out or scroll inside it.

    >>> breakable_inline('<math><mi>y</mi><mo>=</mo><mi>a</mi><mo>(</mo><mi>b</mi><mo>+</mo>'
    ...                  '<mi>c</mi><mo>)</mo><mo>+</mo><mi>d</mi></math>')
    '<math><mi>y</mi><mo>=</mo></math><wbr><math><mi>a</mi><mo>(</mo><mi>b</mi><mo>+</mo><mi>c</mi><mo>)</mo><mo>+</mo></math><wbr><math><mi>d</mi></math>'
    """
    found = _top_level_parts(mathml)
    if found is None or len(found[1]) < SPLIT_FROM:
        return mathml
    head, parts, tail = found
    # Outside brackets where the formula can break there, else inside its outermost ones
    # (a formula that is one bracketed product, such as GELU's tanh approximation).
    pieces = _pieces(parts, 0)
    if len(pieces) == 1:
        pieces = _pieces(parts, 1)
    if len(pieces) == 1:
        return mathml
    return "<wbr>".join(head + "".join(piece) + tail for piece in pieces)


def _pieces(parts: list[str], depth: int) -> list[list[str]]:
    """``parts`` cut after each breaking operator at most ``depth`` brackets deep."""
    pieces, current, brackets = [], [], 0
    for i, part in enumerate(parts):
        current.append(part)
        symbol = _MO.fullmatch(part.strip())
        text = symbol.group(1) if symbol else ""
        if text in OPENING and text not in CLOSING:
            brackets += 1
        elif text in CLOSING and text not in OPENING:
            brackets = max(brackets - 1, 0)
        elif text in BREAK_AFTER and brackets <= depth and i < len(parts) - 1:
            pieces.append(current)
            current = []
    return [*pieces, current] if current else pieces


#: The class of an inline formula in pieces: ffnbook.css lets it flow with the text.
PIECES_CLASS = "ffn-math-pieces"


def visit_inline_math(self: HTML5Translator, node: nodes.math) -> None:
    mathml = _to_mathml(self, node, block=False)
    pieces = breakable_inline(mathml)
    classes = "math" if pieces == mathml else f"math {PIECES_CLASS}"
    self.body.append(self.starttag(node, "span", "", CLASS=classes))
    self.body.append(pieces)
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_display_math(self: HTML5Translator, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math"))
    if node.get("number"):
        from sphinx.util.math import get_node_equation_number

        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, "Link to this equation")
        self.body.append("</span>")
    # Several equations separated by blank lines become one block each.
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        fake = nodes.math_block(part, part)
        fake.source, fake.line = node.source, node.line
        self.body.append(_to_mathml(self, fake, block=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict:
    app.add_html_math_renderer(
        "mathml",
        inline_renderers=(visit_inline_math, None),
        block_renderers=(visit_display_math, None),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Render LaTeX math to MathML at build time.

Sphinx's default math renderer loads MathJax from a CDN, so math breaks
offline and every page pays for a large script. Browsers render MathML Core
natively, and docutils ships a LaTeX-to-MathML converter, so the HTML can
carry finished math and no script at all. Enable with::

    extensions = [..., "bookext.mathml"]
    html_math_renderer = "mathml"

A formula the converter cannot handle is a build warning (so ``-W`` fails the
build) naming the page and the formula, never a silent blank.
"""

from __future__ import annotations

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


def visit_inline_math(self: HTML5Translator, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math"))
    self.body.append(_to_mathml(self, node, block=False))
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

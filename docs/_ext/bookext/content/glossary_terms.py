"""Glossary terms in prose: ``{gls}`text``` or ``{gls}`text <glossary term>```.

A term renders as a link to its glossary entry followed by a hidden ``role="tooltip"``
element holding the definition (parsed as MyST, so math renders). With JavaScript off the
term is just that link. With it, ``readertools.js`` (:mod:`bookext.website.reading_tools`)
shows the tooltip on hover and on keyboard focus (Escape closes it) for the terms the
chosen expertise level explains, and points the link's ``aria-describedby`` at it; other
terms read as plain text.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxRole

from bookext.content.glossary_data import load_glossary
from bookext.content.html_element import element


def _glossary_index() -> dict:
    index = {}
    for term in load_glossary():
        for name in (term.term, *term.aliases):
            index[name.casefold()] = term
    return index


class GlossaryTermRole(SphinxRole):
    """``{gls}`text``` / ``{gls}`text <term>```: a glossary term with a tooltip."""

    def run(self):
        match = re.fullmatch(r"(?s)(.*?)\s*<([^<>]+)>", self.text)
        shown, target = (match.group(1), match.group(2)) if match else (self.text, self.text)
        term = _glossary_index().get(" ".join(target.split()).casefold())
        if term is None:
            msg = self.inliner.reporter.warning(
                f"{target!r} is not in the glossary (docs/glossary.yml)", line=self.lineno
            )
            return [nodes.inline(shown, shown)], [msg]
        tip_id = f"ffn-tip-{self.env.new_serialno('ffn-tip')}"
        xref = addnodes.pending_xref(
            "",
            nodes.inline(shown, shown, classes=["xref", "std", "std-term"]),
            refdomain="std",
            reftype="term",
            reftarget=term.term.lower(),
            refexplicit=True,
            refwarn=True,
            refdoc=self.env.docname,
        )
        definition, messages = self.inliner.parse(term.definition, self.lineno, None, self.inliner.parent)
        tooltip = element(
            "span",
            element("strong", nodes.Text(term.term)),
            nodes.Text(": "),
            *definition,
            class_="ffn-tip",
            role="tooltip",
            id=tip_id,
            hidden=True,
        )
        wrapper = element("span", xref, tooltip, class_=f"ffn-term ffn-level-{term.level}", data_level=term.level)
        return [wrapper], messages


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.content.html_element")
    app.setup_extension("bookext.website.reading_tools")  # readertools.js shows the tooltips
    app.add_role("gls", GlossaryTermRole())
    return {"parallel_read_safe": True, "parallel_write_safe": True}

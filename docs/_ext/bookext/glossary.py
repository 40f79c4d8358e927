"""The ``ffnbook-glossary`` directive: the glossary page, built from docs/glossary.yml.

Each entry becomes a Sphinx glossary term (so ``{term}`` references work,
aliases included) with its level shown as a small label; the definition is
parsed as MyST, so inline math renders.
"""

from __future__ import annotations

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.domains.std import make_glossary_term
from sphinx.util.docutils import SphinxDirective

from bookext.glossary_data import load_glossary

SOURCE = "docs/glossary.yml"


class DataGlossary(SphinxDirective):
    """Render every glossary entry, alphabetically, as a definition list."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        glossary = addnodes.glossary()
        glossary["sorted"] = False  # sorted here, with aliases kept beside their term
        items = nodes.definition_list(classes=["glossary", "ffn-glossary"])
        glossary += items
        std = self.env.domains.standard_domain
        for term in sorted(load_glossary(), key=lambda t: t.term.casefold()):
            item = nodes.definition_list_item(classes=[f"ffn-level-{term.level}"])
            dt = make_glossary_term(self.env, [nodes.Text(term.term)], None, SOURCE, 0, None,
                                    self.state.document)
            node_id = dt["ids"][0]
            for alias in term.aliases:
                std._note_term(alias, node_id, location=dt)
            dt += nodes.inline(term.level, term.level, classes=["ffn-level", f"ffn-level-{term.level}"])
            item += dt
            text = term.definition
            if term.aliases:
                text = "*Also:* " + ", ".join(term.aliases) + ". " + text
            if term.see:
                text += " *See also:* " + ", ".join(f"{{term}}`{t}`" for t in term.see) + "."
            definition = nodes.definition()
            self.state.nested_parse(StringList([text], source=SOURCE), 0, definition)
            item += definition
            items += item
        return [glossary]


def setup(app: Sphinx) -> dict:
    app.add_directive("ffnbook-glossary", DataGlossary)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

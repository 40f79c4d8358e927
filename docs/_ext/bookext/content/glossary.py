"""The ``ffnbook-glossary`` directive: the glossary page, built from docs/glossary.yml.

Each entry becomes a Sphinx glossary term (so ``{term}`` references work,
aliases included) with its level shown as a small label; its other names stand
on a line of their own above the definition, which is parsed as MyST, so inline
math renders. A bar of letters above the list jumps to each letter's first term.
"""

from __future__ import annotations

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.domains.std import make_glossary_term
from sphinx.util.docutils import SphinxDirective

from bookext.content.glossary_data import load_glossary

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
        first_of: dict[str, str] = {}  # letter -> id of the first term under it
        for term in sorted(load_glossary(), key=lambda t: t.term.casefold()):
            item = nodes.definition_list_item(classes=[f"ffn-level-{term.level}"])
            dt = make_glossary_term(self.env, [nodes.Text(term.term)], None, SOURCE, 0, None, self.state.document)
            node_id = dt["ids"][0]
            first_of.setdefault(letter_of(term.term), node_id)
            for alias in term.aliases:
                std._note_term(alias, node_id, location=dt)
            # A space before the level: the text of the term (search results quote it) reads
            # "SwiGLU advanced", not "SwiGLUadvanced".
            dt += nodes.Text(" ")
            dt += nodes.inline(term.level, term.level, classes=["ffn-level", f"ffn-level-{term.level}"])
            item += dt
            definition = nodes.definition()
            if term.aliases:  # other names on a line of their own, before the definition
                self.state.nested_parse(
                    StringList(["*Also:* " + ", ".join(term.aliases)], source=SOURCE), 0, definition
                )
                definition[-1]["classes"].append("ffn-also")
            text = term.definition
            if term.see:
                text += " *See also:* " + ", ".join(f"{{term}}`{t}`" for t in term.see) + "."
            self.state.nested_parse(StringList([text], source=SOURCE), 0, definition)
            item += definition
            items += item
        return [alphabet_bar(first_of), glossary]


def letter_of(term: str) -> str:
    """The letter a term is filed under: its first letter, or "#" for a digit or a sign."""
    first = term.lstrip()[:1].upper()
    return first if first.isalpha() else "#"


def alphabet_bar(first_of: dict[str, str]) -> nodes.Element:
    """A row of links, one per letter that has terms, to the first of them: on a long
    glossary any letter is one tap away. A ``<nav>`` named for what it holds."""
    from bookext.content.html_element import element

    links = []
    for letter in sorted(first_of, key=lambda c: (c != "#", c)):
        links += [nodes.reference(letter, letter, refid=first_of[letter], classes=["ffn-az-letter"]), nodes.Text(" ")]
    return element("nav", element("p", *links[:-1]), class_="ffn-az", aria_label="Glossary by letter")


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.content.html_element")  # the letters bar is made of it
    app.add_directive("ffnbook-glossary", DataGlossary)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The ``ffnbook-glossary`` directive: Sphinx's glossary, filled from ffnbook/data/glossary.yml.

Each entry becomes a normal Sphinx glossary term, so ``{term}`` references
work across the book; the level is shown as the term's classifier. Aliases
are extra term lines of the same entry, and "see" targets become links.
"""

from __future__ import annotations

from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.domains.std import Glossary

from ffnbook.glossary import load_glossary

SOURCE = "ffnbook/data/glossary.yml"


class DataGlossary(Glossary):
    """A glossary whose entries come from the data file, sorted alphabetically."""

    has_content = False
    option_spec = {}

    def run(self):
        lines = []
        for term in load_glossary():
            if lines:
                lines.append("")
            lines.append(f"{term.term} : {term.level}")
            lines.extend(term.aliases)
            definition = term.definition
            if term.see:
                links = ", ".join(f"{{term}}`{target}`" for target in term.see)
                definition += f" See also: {links}."
            lines.append("   " + definition)
        self.content = StringList(lines, source=SOURCE)
        self.options["sorted"] = True
        return super().run()


def setup(app: Sphinx) -> dict:
    app.add_directive("ffnbook-glossary", DataGlossary)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

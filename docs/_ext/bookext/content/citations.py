"""Unambiguous author–year citations: "Touvron et al., 2023a" and "2023b".

sphinxcontrib-bibtex's author–year style writes the first author's surname
(with "et al." for three or more authors) and the year. Two papers by the same
first author in the same year then print the same text, as LLaMA and Llama 2
both did ("Touvron et al., 2023"). After sphinxcontrib-bibtex has parsed the
bibliography, :func:`disambiguate_years` gives every such group a letter after
the year, in the order the papers appeared (by arXiv identifier, then title),
so citations and bibliography entries both read "2023a", "2023b". Entries that
share nothing keep their plain year. Nothing in the pages changes.

Citations print in round brackets, as author–year citations are printed: "(Vaswani et
al., 2017; Shazeer, 2020)" and "Vaswani et al. (2017)". The style is registered with
sphinxcontrib-bibtex under :data:`REFERENCE_STYLE`, which ``conf.py`` names in
``bibtex_reference_style``; the reader notebooks format their citations with the same
style (square brackets would read as links in Markdown).
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from dataclasses import dataclass, field

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

#: The name ``bibtex_reference_style`` gives the style below.
REFERENCE_STYLE = "author_year_round"

#: A year as sphinxcontrib-bibtex prints it, with the letter this module may have added.
_YEAR = re.compile(r"^(\d{4})[a-z]?$")


def _surname(person) -> str:
    return " ".join(person.last_names) or " ".join(person.first_names)


def citation_author(entry) -> tuple[str, ...]:
    """The author part an author–year citation prints, as a comparable tuple.

    One or two authors are named; three or more print as the first author
    followed by "et al.", which the tuple marks with ``"et al."``.
    """
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = tuple(_surname(p) for p in persons)
    if len(names) >= 3:
        return (names[0], "et al.")
    return names or (entry.fields.get("title", ""),)


def _chronology(key_and_entry) -> tuple:
    """Sort key within a group: arXiv identifier (chronological), then title, then key."""
    key, entry = key_and_entry
    return (entry.fields.get("eprint", "~"), entry.fields.get("title", ""), key)


def disambiguate_years(entries) -> dict[str, str]:
    """Give same-author, same-year entries the years "2023a", "2023b", ...

    ``entries`` maps citation keys to pybtex entries; their ``year`` fields are
    rewritten in place, and the mapping ``{key: new year}`` of the entries that
    changed is returned. Running it again gives the same result (a letter it
    added earlier is taken off first).
    """
    groups: dict[tuple, list] = defaultdict(list)
    for key, entry in entries.items():
        year = entry.fields.get("year", "")
        match = _YEAR.match(year)
        if not match:
            raise ExtensionError(f"bibliography entry {key!r} has year {year!r}; expected four digits")
        base = match.group(1)
        entry.fields["year"] = base
        groups[(citation_author(entry), base)].append((key, entry))
    changed = {}
    for (_, base), members in groups.items():
        if len(members) < 2:
            continue
        if len(members) > len(string.ascii_lowercase):
            raise ExtensionError(f"more than 26 entries share the citation of {members[0][0]!r}")
        for letter, (key, entry) in zip(string.ascii_lowercase, sorted(members, key=_chronology)):
            entry.fields["year"] = base + letter
            changed[key] = base + letter
    return changed


@dataclass
class RoundAuthorYearStyle(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's author–year style with round brackets, citations split by "; "."""

    bracket_parenthetical: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")", sep="; "))
    bracket_textual: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")"))


register_plugin("sphinxcontrib.bibtex.style.referencing", REFERENCE_STYLE, RoundAuthorYearStyle)


def _on_builder_inited(app: Sphinx) -> None:
    domain = app.env.get_domain("cite")
    disambiguate_years(domain.bibdata.data.entries)


def setup(app: Sphinx) -> dict:
    # After sphinxcontrib-bibtex's own builder-inited handler has parsed the .bib files.
    app.connect("builder-inited", _on_builder_inited, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

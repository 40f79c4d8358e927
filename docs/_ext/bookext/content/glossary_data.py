"""The chapter's glossary data: one list of terms, each with a definition and a level.

The definitions live in ``docs/glossary.yml``. The glossary page is rendered
from them by :mod:`bookext.content.glossary` and the tooltips by
:mod:`bookext.content.glossary_terms`, so every view of a term reads the same words.

A term's *level* says how expert a reader must be before the term no longer
needs explaining: ``beginner`` terms are explained only to beginners,
``intermediate`` ones to beginners and intermediate readers, ``advanced`` ones
to everybody. The reading tools offer readers the same three names, in the
order of :data:`LEVELS` (``readertools.js`` reads that order from the page), so a
reader at level L sees the tooltips of the terms at level L and above.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

#: Term levels and reader levels alike, from the reader who needs most explained.
LEVELS = ("beginner", "intermediate", "advanced")

#: The one glossary file (beside the pages it serves).
GLOSSARY_FILE = Path(__file__).resolve().parents[3] / "glossary.yml"


@dataclass(frozen=True)
class Term:
    """One glossary entry."""

    term: str
    level: str
    definition: str
    aliases: tuple[str, ...] = field(default_factory=tuple)
    see: tuple[str, ...] = field(default_factory=tuple)


def _parse(entries) -> tuple[Term, ...]:
    if not isinstance(entries, list):
        raise ValueError(f"glossary.yml must hold a list of entries, got {type(entries).__name__}")
    terms, seen = [], {}
    for index, entry in enumerate(entries):
        where = f"glossary.yml entry {index}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be a mapping, got {entry!r}")
        missing = {"term", "level", "definition"} - entry.keys()
        if missing:
            raise ValueError(f"{where} ({entry.get('term', '?')}) lacks {sorted(missing)}")
        unknown = entry.keys() - {"term", "level", "definition", "aliases", "see"}
        if unknown:
            raise ValueError(f"{where} ({entry['term']}) has unknown keys {sorted(unknown)}")
        if entry["level"] not in LEVELS:
            raise ValueError(f"{where} ({entry['term']}) level must be one of {LEVELS}, got {entry['level']!r}")
        term = Term(
            term=str(entry["term"]).strip(),
            level=entry["level"],
            definition=" ".join(str(entry["definition"]).split()),
            aliases=tuple(str(a).strip() for a in entry.get("aliases") or ()),
            see=tuple(str(s).strip() for s in entry.get("see") or ()),
        )
        for name in (term.term, *term.aliases):
            key = name.casefold()
            if key in seen:
                raise ValueError(f"{where}: {name!r} is already used by {seen[key]!r}")
            seen[key] = term.term
        terms.append(term)
    for term in terms:
        for target in term.see:
            if target.casefold() not in seen:
                raise ValueError(f"glossary term {term.term!r} refers to unknown term {target!r}")
    return tuple(terms)


@lru_cache(maxsize=1)
def load_glossary() -> tuple[Term, ...]:
    """Every glossary term, validated, in the file's order."""
    import yaml

    text = GLOSSARY_FILE.read_text(encoding="utf-8")
    # libyaml's safe loader where PyYAML has it (its wheels do): the same data, read in a
    # tenth of the time (55 ms of every build that reads a page with a glossary term).
    return _parse(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))

"""The glossary loader refuses malformed data with a message naming the entry."""

from __future__ import annotations

import pytest

from bookext.content.glossary_data import LEVELS, _parse


def entry(term="ReLU", level="beginner", definition="max(0, x).", **extra):
    return {"term": term, "level": level, "definition": definition, **extra}


def test_valid_entries_parse_with_aliases_and_see():
    terms = _parse([entry(aliases=["rectifier"], see=["GELU"]), entry("GELU", "intermediate")])
    assert terms[0].aliases == ("rectifier",) and terms[0].see == ("GELU",)
    assert {t.level for t in terms} <= set(LEVELS)


@pytest.mark.parametrize(
    "entries, message",
    [
        ([entry(level="expert")], "level must be one of"),
        ([{"term": "ReLU", "level": "beginner"}], r"lacks \['definition'\]"),
        ([entry(), entry("relu")], "'relu' is already used by 'ReLU'"),
        ([entry(see=["Nothing"])], "refers to unknown term 'Nothing'"),
        ([entry(colour="red")], r"unknown keys \['colour'\]"),
        ({"ReLU": "x"}, "must hold a list"),
    ],
)
def test_malformed_glossary_is_refused(entries, message):
    with pytest.raises(ValueError, match=message):
        _parse(entries)

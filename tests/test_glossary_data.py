"""The glossary data file: complete, consistent and short enough to read at a glance.

The file is read with PyYAML directly, independently of bookext.content.glossary_data's
loader, and then once more through the loader, so both agree on it.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from bookext.content.glossary_data import LEVELS, load_glossary

DATA = Path(__file__).resolve().parents[1] / "docs" / "glossary.yml"
MIN_ENTRIES = 45
MIN_PER_LEVEL = 8
MAX_CHARS = 350

#: Terms the chapter relies on; each must be an entry or an alias of one.
REQUIRED = [
    "FFN",
    "position-wise",
    "d_model",
    "d_ff",
    "hidden layer",
    "expansion ratio",
    "activation function",
    "ReLU",
    "GELU",
    "tanh approximation",
    "SiLU",
    "Swish",
    "GLU",
    "ReGLU",
    "GEGLU",
    "SwiGLU",
    "gating",
    "residual connection",
    "residual stream",
    "layer normalisation",
    "pre-norm",
    "post-norm",
    "self-attention",
    "multi-head attention",
    "head",
    "query",
    "key",
    "value",
    "grouped-query attention",
    "multi-query attention",
    "multi-head latent attention",
    "embedding",
    "vocabulary",
    "parameter",
    "FLOP",
    "permutation equivariance",
    "broadcasting",
    "kernel-size-1 convolution",
    "key–value memory",
    "knowledge neuron",
    "mixture of experts",
    "expert",
    "router",
    "top-k routing",
    "load balancing",
    "active parameters",
    "stored parameters",
    "dropout",
    "initialisation",
    "machine epsilon",
    "floating-point rounding",
    "meta device",
    "glue",
]


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def names_of(entry: dict) -> list[str]:
    return [entry["term"], *(entry.get("aliases") or [])]


def sentences(text: str) -> int:
    """Sentence count of a definition, ignoring full stops inside math and code."""
    text = re.sub(r"\$[^$]*\$|`[^`]*`", "X", text)
    return len(re.findall(r"[.!?](?:\s|$)", text.strip()))


def test_enough_entries(entries):
    assert len(entries) >= MIN_ENTRIES


def test_every_entry_has_exactly_the_known_keys(entries):
    for entry in entries:
        assert {"term", "level", "definition"} <= entry.keys() <= {"term", "level", "definition", "aliases", "see"}, (
            entry
        )
        assert isinstance(entry.get("aliases", []), list) and isinstance(entry.get("see", []), list)


def test_terms_and_aliases_are_unique_ignoring_case(entries):
    counts = Counter(name.casefold() for entry in entries for name in names_of(entry))
    assert [name for name, n in counts.items() if n > 1] == []


def test_levels_are_valid_and_balanced(entries):
    levels = Counter(entry["level"] for entry in entries)
    assert set(levels) <= set(LEVELS)
    assert all(levels[level] >= MIN_PER_LEVEL for level in LEVELS), levels


@pytest.mark.parametrize("index", range(MIN_ENTRIES))  # the first entries; the rest below
def test_a_definition_is_one_or_two_sentences(entries, index):
    definition = " ".join(entries[index]["definition"].split())
    assert 0 < len(definition) < MAX_CHARS
    assert 1 <= sentences(definition) <= 2, definition


def test_every_definition_is_short(entries):
    for entry in entries:
        definition = " ".join(str(entry["definition"]).split())
        assert definition, entry["term"]
        assert len(definition) < MAX_CHARS, entry["term"]
        assert 1 <= sentences(definition) <= 2, entry["term"]
        assert definition[-1] in ".!?", entry["term"]


def test_every_see_target_exists(entries):
    known = {name.casefold() for entry in entries for name in names_of(entry)}
    missing = [
        (entry["term"], target)
        for entry in entries
        for target in entry.get("see") or []
        if target.casefold() not in known
    ]
    assert missing == []


def test_no_entry_refers_to_itself(entries):
    for entry in entries:
        own = {name.casefold() for name in names_of(entry)}
        assert not own & {t.casefold() for t in entry.get("see") or []}, entry["term"]


def test_the_chapter_terms_are_covered(entries):
    known = {name.casefold() for entry in entries for name in names_of(entry)}
    assert [term for term in REQUIRED if term.casefold() not in known] == []


def test_math_delimiters_are_balanced(entries):
    for entry in entries:
        assert entry["definition"].count("$") % 2 == 0, entry["term"]
        assert entry["definition"].count("`") % 2 == 0, entry["term"]


def test_names_do_not_break_the_glossary_markup(entries):
    # The glossary directive reads "term : level"; a name containing " : " would split wrongly.
    for entry in entries:
        for name in names_of(entry):
            assert " : " not in name and name == name.strip() and name, name


def test_the_loader_reads_the_same_entries(entries):
    loaded = load_glossary()
    assert [t.term for t in loaded] == [e["term"] for e in entries]
    assert [t.level for t in loaded] == [e["level"] for e in entries]

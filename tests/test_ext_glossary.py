"""The glossary role, its tooltips and the glossary page, built in-process on a tiny book.

tests/roots/test-glossary has three terms of its own (glossary.yml, put in place of
docs/glossary.yml for these tests) and a page that marks them, by name, by alias, with
shown text, in another case, and one term the glossary lacks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx.util.console import strip_colors

from bookext.content import glossary_data

TESTROOT = "glossary"


@pytest.fixture(scope="module", autouse=True)
def tiny_glossary(rootdir):
    """The tiny book's glossary in place of docs/glossary.yml, while this module runs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(glossary_data, "GLOSSARY_FILE", rootdir / "test-glossary" / "glossary.yml")
        glossary_data.load_glossary.cache_clear()
        yield
    glossary_data.load_glossary.cache_clear()


def terms(tiny_page) -> list:
    return tiny_page("index").select("span.ffn-term")


def test_a_term_links_to_its_glossary_entry_and_carries_a_hidden_tooltip(tiny_page):
    relu = terms(tiny_page)[0]
    link = relu.find("a")
    assert link.get_text() == "ReLU"
    assert link["href"] == "glossary.html#term-ReLU"
    tip = relu.find(role="tooltip")
    assert tip.has_attr("hidden") and tip["id"] == "ffn-tip-0"
    assert tip.find("strong").get_text() == "ReLU"
    assert tip.find("math") is not None, "the definition's $...$ renders as MathML"
    assert relu["data-level"] == "beginner"


def test_aliases_shown_text_and_case_lead_to_the_same_entries(tiny_page):
    shown = [t.find("a").get_text() for t in terms(tiny_page)]
    targets = [t.find("a")["href"].split("#")[1] for t in terms(tiny_page)]
    assert shown == ["ReLU", "rectifier", "smooth ones", "ROUTER"]
    assert targets == ["term-ReLU", "term-ReLU", "term-GELU", "term-router"]
    # Tooltips are numbered in reading order, so two builds write the same ids.
    tips = [t.find(role="tooltip")["id"] for t in terms(tiny_page)]
    assert tips == [f"ffn-tip-{i}" for i in range(4)]
    assert [t["data-level"] for t in terms(tiny_page)] == ["beginner", "beginner", "intermediate", "advanced"]


def test_a_term_missing_from_the_glossary_is_a_warning_naming_it_and_the_page(tiny_page, tiny_book):
    warnings = strip_colors(tiny_book.warning.getvalue())
    assert "index.md:6: WARNING: 'squashing function' is not in the glossary (docs/glossary.yml)" in warnings
    assert warnings.count("WARNING") == 1, warnings
    assert "A squashing function is not" in " ".join(tiny_page("index").body.get_text().split())


def test_glossary_page_lists_every_term_with_its_level_aliases_and_see_also(tiny_page):
    page = tiny_page("glossary")
    entries = page.select("dl.ffn-glossary > dt")
    assert [dt["id"] for dt in entries] == ["term-GELU", "term-ReLU", "term-router"]  # alphabetical
    assert [dt.select_one(".ffn-level").get_text() for dt in entries] == ["intermediate", "beginner", "advanced"]
    relu = page.find("dt", id="term-ReLU").find_next_sibling("dd").get_text(" ")
    assert "Also: rectifier" in " ".join(relu.split())
    assert page.find("dt", id="term-ReLU").find_next_sibling("dd").select_one("a[href='#term-GELU']") is not None, (
        "see also links to GELU"
    )
    # An alias is a glossary term too: {term}`rectifier` resolves to ReLU's entry.
    links = tiny_page("index").select("a[href='glossary.html#term-ReLU']")
    plain_refs = [a.get_text() for a in links if not a.find_parent(class_="ffn-term")]
    assert plain_refs == ["rectifier"]


def test_glossary_page_has_a_letter_bar_names_on_their_own_line_and_a_space_before_levels(tiny_page):
    page = tiny_page("glossary")
    bar = page.select_one("nav.ffn-az")
    assert bar["aria-label"] == "Glossary by letter"
    letters = {a.get_text(): a["href"] for a in bar.select("a")}
    assert letters == {"G": "#term-GELU", "R": "#term-ReLU"}  # the first term of each letter
    relu = page.find("dt", id="term-ReLU")
    also = relu.find_next_sibling("dd").find("p")
    assert "ffn-also" in also["class"] and " ".join(also.get_text(" ").split()) == "Also: rectifier"
    # The term's text as search results quote it: a space between the term and its level.
    assert " ".join(relu.get_text().split()).startswith("ReLU beginner")


def test_the_book_glossary_reads_as_pyyaml_own_safe_loader_reads_it(monkeypatch):
    """The glossary is read with libyaml's loader for speed: the terms are those the pure-Python
    safe loader gives, every field of every term."""
    import yaml

    book_glossary = Path(__file__).resolve().parents[1] / "docs" / "glossary.yml"
    monkeypatch.setattr(glossary_data, "GLOSSARY_FILE", book_glossary)
    glossary_data.load_glossary.cache_clear()
    try:
        fast = glossary_data.load_glossary()
    finally:
        glossary_data.load_glossary.cache_clear()
    plain = glossary_data._parse(yaml.safe_load(book_glossary.read_text(encoding="utf-8")))
    assert fast == plain and len(fast) > 50

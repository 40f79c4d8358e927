"""Author–year citations are unambiguous: the same printed citation never names two papers."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from pybtex.database import parse_file
from sitecheck import DOCS, soup_of

from bookext.content.citations import citation_author, disambiguate_years


def entries():
    return dict(parse_file(str(DOCS / "references.bib")).entries)


def test_llama_and_llama_2_get_letters_in_order_of_appearance():
    bib = entries()
    changed = disambiguate_years(bib)
    # LLaMA (arXiv 2302.13971, February 2023) before Llama 2 (arXiv 2307.09288, July 2023).
    assert changed["touvron2023llama"] == "2023a"
    assert changed["touvron2023llama2"] == "2023b"
    assert bib["vaswani2017attention"].fields["year"] == "2017"  # alone in its group: untouched


def test_disambiguation_is_idempotent_and_leaves_no_collision():
    bib = entries()
    first = disambiguate_years(bib)
    assert disambiguate_years(bib) == first
    printed = defaultdict(list)
    for key, entry in bib.items():
        printed[(citation_author(entry), entry.fields["year"])].append(key)
    assert all(len(keys) == 1 for keys in printed.values()), {k: v for k, v in printed.items() if len(v) > 1}


def test_two_authors_differ_from_et_al():
    from pybtex.database import Entry, Person

    two = Entry("article", persons={"author": [Person("Press, Ofir"), Person("Smith, Noah")]})
    three = Entry("article", persons={"author": [Person("Press, Ofir"), Person("A, B"), Person("C, D")]})
    assert citation_author(two) == ("Press", "Smith")
    assert citation_author(three) == ("Press", "et al.")


@pytest.mark.build
def test_every_printed_citation_on_the_site_names_one_paper(site):
    targets = defaultdict(set)
    for page in site.glob("*.html"):
        if page.stem in ("bibliography", "genindex", "search"):
            continue
        for citation in soup_of(site, page.stem).select("span.bibtex-citation"):
            # Textual citations ("Touvron et al. (2023a)") link only the year; the author
            # stands before the bracket. Parenthetical ones link "Touvron et al., 2023a".
            author = " ".join(citation.get_text(" ").split("(")[0].split())
            for link in citation.select('a[href^="bibliography.html#"]'):
                text = " ".join(link.get_text(" ").split())
                if not re.search(r"[A-Za-z]{2}", text):
                    text = f"{author}, {text}"
                targets[text.replace(" ,", ",")].add(link["href"])
    assert targets, "no author-year citation found"
    ambiguous = {text: hrefs for text, hrefs in targets.items() if len(hrefs) > 1}
    assert not ambiguous, ambiguous
    assert any("2023a" in text for text in targets) and any("2023b" in text for text in targets)


@pytest.mark.build
def test_every_citation_on_the_site_is_in_round_brackets(site):
    """One style on every page: (Vaswani et al., 2017) and Vaswani et al. (2017). The reader
    notebooks' formatting once changed the style for the pages written after it."""
    seen = 0
    for page in site.rglob("*.html"):
        name = page.relative_to(site).with_suffix("").as_posix()
        for citation in soup_of(site, name).select("span.bibtex-citation"):
            text = " ".join(citation.get_text(" ").split())
            assert "[" not in text and text.endswith(")") and "(" in text, (name, text)
            seen += 1
    assert seen > 50

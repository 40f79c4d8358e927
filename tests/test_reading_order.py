"""The chapter reads in the order of its table of contents, and every page keeps to its glue prefix.

Each chapter page ends with a paragraph that sends the reader on; the chapter page it links
must be the one that follows in the numbered toctree of docs/index.md, so that inserting a
section cannot leave a page pointing past it. Each page's glue keys start with one prefix of
its own, listed in the page guide (docs/contributing.md), so keys never collide.
"""

from __future__ import annotations

import re

import pytest
from sitecheck import DOCS, chapter_order, editable_soup_of, glue_data

CHAPTER = chapter_order()


def chapter_links(paragraph) -> list[str]:
    """The chapter pages a paragraph links to, in order (glossary and citation links left out)."""
    pages = [a.get("href", "").split("#")[0] for a in paragraph.find_all("a")]
    return [p.removesuffix(".html") for p in pages if p.removesuffix(".html") in CHAPTER]


@pytest.mark.parametrize("page", CHAPTER)
def test_the_closing_paragraph_sends_the_reader_to_the_next_page(site, page):
    article = editable_soup_of(site, page).find("article")
    problems = article.find("section", id="problems")  # the numeric problems follow the text
    if problems is not None:
        problems.decompose()
    closing = article.find_all("p")[-1]
    following = CHAPTER[CHAPTER.index(page) + 1 :][:1]  # nothing after the last page
    assert chapter_links(closing) == following, (
        f"{page}: the closing paragraph links {chapter_links(closing)}, but the table of contents "
        f"continues with {following}: {closing.get_text(' ', strip=True)!r}"
    )


def test_the_table_of_contents_is_read_from_the_index():
    assert len(CHAPTER) == len(set(CHAPTER)) and all((DOCS / f"{p}.md").exists() for p in CHAPTER)


def listed_prefixes() -> list[str]:
    """The glue-key prefixes the page guide lists (the bullet that names them)."""
    guide = (DOCS / "contributing.md").read_text(encoding="utf-8")
    bullet = re.search(r"Every key starts with the page's prefix.*?(?=\n- |\n\n)", guide, re.S)
    assert bullet is not None, "docs/contributing.md no longer lists the glue-key prefixes"
    return re.findall(r"`([a-z]+_)`", bullet.group(0))


def test_every_page_glues_under_one_listed_prefix_of_its_own(site):
    listed = listed_prefixes()
    assert len(listed) == len(set(listed))
    owner = {}
    for page in CHAPTER:
        keys = list(glue_data(site, page))
        prefixes = {key.split("_")[0] + "_" for key in keys}
        assert len(prefixes) == 1, f"{page} glues under several prefixes: {sorted(prefixes)}"
        (prefix,) = prefixes
        assert prefix in listed, f"{page}'s prefix {prefix} is missing from docs/contributing.md"
        assert owner.setdefault(prefix, page) == page, f"{page} and {owner[prefix]} share {prefix}"

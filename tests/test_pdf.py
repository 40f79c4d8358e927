"""`make pdf`: the whole chapter as one PDF, printed from the same executed pages as the site.

The PDF is made once per session with the real Makefile target, in the build
folder of the site under test, so it reuses that build's execution cache: the
numbers in it come from the same runs as the site's. pypdf reads it back.
Skipped, with the reason printed, where Chromium or Playwright is missing.
"""

from __future__ import annotations

import re
import shutil
import unicodedata
from pathlib import Path

import pytest
from sitecheck import DOCS, browser_api, glued, make, soup_of

from ffnbook.display import format_number

# The whole book printed: `make pdf` takes most of a minute (make test-full; the Pages workflow
# also runs `make pdf` before it publishes).
pytestmark = [pytest.mark.build, pytest.mark.full]

browser_api("make pdf")  # it prints the pages with Chromium through Playwright
pypdf = pytest.importorskip("pypdf")

GLUED_NUMBER = re.compile(r"\{glue:text\}`([A-Za-z0-9_]+)(?::([^`]*))?`")
FOOTER = re.compile(r"^\s*\d+ / \d+\s*$", re.M)  # the page number print_pdf.py puts below each page


def chapter_pages() -> list[str]:
    """The chapter's sections, in order, from the numbered toctree of docs/index.md."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    block = re.search(r":caption: The chapter\n(?::[^\n]*\n)*\n(.*?)```", index, re.S).group(1)
    return block.split()


def normalised(text: str) -> str:
    """PDF text as words: ligatures (ﬁ) as letters, any run of whitespace as one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


@pytest.fixture(scope="module")
def pdf(site) -> Path:
    result = make("pdf", DOCS, site.parent)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return site.parent / "pdf" / "ffnbook.pdf"


@pytest.fixture(scope="module")
def pages(pdf) -> list[str]:
    return [page.extract_text() or "" for page in pypdf.PdfReader(pdf).pages]


def test_page_count_is_plausible(pages):
    sections = len(chapter_pages())
    # Each section starts a page, and so do the glossary, the bibliography and the answers;
    # a section runs to a few pages, not to dozens.
    assert sections + 3 <= len(pages) <= 20 * sections, len(pages)


def test_no_page_is_blank(pages):
    blank = [n for n, text in enumerate(pages, 1) if not FOOTER.sub("", text).strip()]
    assert not blank, f"pages with nothing but their number: {blank}"


def test_every_section_title_is_in_the_pdf(site, pages):
    text = normalised(" ".join(pages))
    titles = [
        " ".join(soup_of(site, name).find("h1").get_text(" ").replace("#", "").split()) for name in chapter_pages()
    ]
    for title in titles + ["Glossary", "Bibliography", "Answers to the self-checks"]:
        assert normalised(title) in text, title


def test_the_chapters_glued_numbers_are_in_the_pdf(site, pages):
    """Every number a chapter page glues into its prose, formatted as the page formats it."""
    text = normalised(" ".join(pages))
    checked, missing = 0, []
    for name in chapter_pages():
        source = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        for key, spec in sorted(set(GLUED_NUMBER.findall(source))):
            value = glued(site, name, key)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            # As the book's glue:text role prints it (bookext.content.numbers.plain_text).
            shown = format_number(value, spec) if spec or isinstance(value, float) else str(value)
            checked += 1
            if shown not in text:
                missing.append(f"{name}: {key} = {shown}")
    assert checked >= 100, checked  # the chapter glues hundreds of numbers into its prose
    assert not missing, "\n".join(missing)


def test_self_checks_and_problems_are_numbered_once_and_answered_in_the_appendix(pages):
    text = normalised(" ".join(pages))
    appendix = text[text.rindex("Answers to the self-checks") :]
    questions = len(re.findall(r"Answer: see \"Answers to the self-checks\", number \d+", text))
    assert questions >= len(chapter_pages())  # every section ends with self-checks
    assert len(re.findall(r"\([a-e]\) is right", appendix)) == questions
    # Each entry names its number once: no list number printed before it ("1. Self-check 1").
    assert not re.search(r"\d+\. (Self-check|Problem) \d+", appendix), appendix[:300]
    problems = len(re.findall(r"Answer: see \"Answers to the problems\", number \d+", text))
    assert problems > 0
    assert len(re.findall(r"Problem \d+ \(", appendix)) == problems
    # The site's controls are not printed: the reading-tools bar, the answer buttons.
    for control in ("Download this page", "Clickable references", "Check answer"):
        assert control not in text, control


@pytest.mark.parametrize("with_pdf", [True, False])
def test_the_landing_page_links_the_pdf_only_where_it_was_built(pdf, tmp_path, with_pdf):
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(DOCS / "references.bib", source / "references.bib")
    (source / "index.md").write_text("# Index\n\nIntro.\n\n{chapter-pdf}`Download the PDF`\n")
    build = tmp_path / "build"
    if with_pdf:
        (build / "pdf").mkdir(parents=True)
        shutil.copy(pdf, build / "pdf" / "ffnbook.pdf")
    result = make("html", source, build)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    article = soup_of(build / "html", "index").find("article")
    links = article.select("a.download")
    if with_pdf:
        assert [a.get_text() for a in links] == ["Download the PDF"]
        assert (build / "html" / links[0]["href"]).read_bytes() == pdf.read_bytes()
        assert re.search(r"\(PDF, \d+\.\d MB\)", article.get_text())
    else:
        assert not links and "Download the PDF" not in article.get_text()
        assert not [p for p in article.find_all("p") if not p.get_text(strip=True)]

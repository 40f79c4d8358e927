"""The reference previews, built in-process on a tiny book (tests/roots/test-previews): what
bookext.website.previews writes for each reference (the figure with its caption and image, the
equation, the section's heading and opening paragraph, the page's opening), made inert
and addressed from the referring page; the script only on pages with references."""

from __future__ import annotations

import json
import os

from bs4 import BeautifulSoup

from bookext.website import previews as previews_module

TESTROOT = "previews"


def previews(book, page: str) -> dict:
    return json.loads((book.outdir / "_previews" / f"{page}.json").read_text(encoding="utf-8"))


def fragment(entry: dict) -> BeautifulSoup:
    return BeautifulSoup(entry["html"], "html.parser")


def test_each_reference_gets_a_preview_of_its_kind(quiet_tiny_book):
    found = previews(quiet_tiny_book, "refs")
    kinds = {href: entry["kind"] for href, entry in found.items()}
    assert kinds == {
        "index.html#fig-wide": "figure",
        "index.html#equation-eq-ffn": "equation",
        "index.html#sec-shapes": "section",
        "index.html": "section",
    }


def test_a_figure_preview_has_its_image_and_numbered_caption(quiet_tiny_book):
    figure = fragment(previews(quiet_tiny_book, "refs")["index.html#fig-wide"])
    img = figure.find("img")
    assert img["src"] == "_images/figure.svg" and img["alt"] == "A wide bar." and img["loading"] == "lazy"
    caption = " ".join(figure.find("figcaption").get_text(" ").split())
    assert caption.startswith("Fig. 1") and "caption of the wide figure" in caption
    assert (quiet_tiny_book.outdir / img["src"]).is_file()


def test_from_a_subfolder_the_image_address_climbs_out(quiet_tiny_book):
    img = fragment(previews(quiet_tiny_book, "sub/deep")["../index.html#fig-wide"]).find("img")
    assert img["src"] == "../_images/figure.svg"
    page = quiet_tiny_book.outdir / "sub" / "deep.html"
    assert os.path.isfile(os.path.normpath(page.parent / img["src"]))


def test_an_equation_preview_is_the_equation_and_a_section_preview_its_opening(quiet_tiny_book):
    found = previews(quiet_tiny_book, "refs")
    equation = fragment(found["index.html#equation-eq-ffn"])
    assert "math" in equation.div["class"] and "W_1" in equation.get_text()
    section = fragment(found["index.html#sec-shapes"])
    assert section.find(class_="ffn-preview-heading").get_text() == "Following the shapes"
    paragraphs = [" ".join(p.get_text(" ").split()) for p in section.find_all("p")]
    assert paragraphs[1].startswith("The hidden layer is four times") and len(paragraphs) == 2
    page = fragment(found["index.html"])
    assert page.find(class_="ffn-preview-heading").get_text() == "Targets"
    assert page.find_all("p")[1].get_text().startswith("The opening paragraph of the page")


def test_previews_are_inert_copies(quiet_tiny_book):
    for entry in previews(quiet_tiny_book, "refs").values():
        html = fragment(entry)
        assert not html.find_all(id=True), entry  # no repeated ids
        assert not html.find_all("a"), entry  # links read as text: nothing to tab into
        assert "headerlink" not in entry["html"]


def test_the_script_and_the_address_only_on_pages_with_references(quiet_tiny_book):
    def loads(page):
        soup = BeautifulSoup((quiet_tiny_book.outdir / f"{page}.html").read_text(encoding="utf-8"), "html.parser")
        meta = soup.find("meta", attrs={"name": "ffnbook:previews"})
        return (
            any("previews.js" in s.get("src", "") for s in soup.select("script[src]")),
            meta["content"] if meta else None,
        )

    assert loads("refs") == (True, "_previews/refs.json")
    assert loads("sub/deep") == (True, "../_previews/sub/deep.json")
    assert loads("plain") == (False, None)
    assert not (quiet_tiny_book.outdir / "_previews" / "plain.json").exists()


def test_a_build_that_changes_no_page_writes_no_preview(quiet_tiny_book):
    from bookext.website.previews import write_previews

    path = quiet_tiny_book.outdir / "_previews" / "refs.json"
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10**9, before - 10**9))
    write_previews(quiet_tiny_book, None)  # no page is newer than the previews
    assert path.stat().st_mtime_ns == before - 10**9


def test_a_section_preview_is_clean_text_with_its_formulas_and_whole_sentences():
    """A glossary term's tooltip is not spliced into the sentence, the term reads as its
    word, and a long opening is cut after a whole sentence with its formula as MathML."""
    from bookext.website.previews import PARAGRAPH_MAX, preview_of

    term = (
        '<span class="ffn-term"><a class="reference internal" href="glossary.html#term-ffn">FFN</a>'
        '<span class="ffn-tip" role="tooltip" id="ffn-tip-1" hidden><strong>feed-forward network</strong>: '
        "The second sublayer.</span></span>"
    )
    formula = '<span class="math"><math><mi>x</mi><msub><mi>W</mi><mn>1</mn></msub></math></span>'
    sentence = "A filler sentence that runs on for a while and says little of note. "
    paragraph = f"<p>The {term} maps {formula} back. {sentence * 12}</p>"
    soup = BeautifulSoup(f'<section id="s"><h2>Title</h2>{paragraph}</section>', "html.parser")
    kind, box = preview_of(soup.section, lambda markup: BeautifulSoup(markup, "html.parser"))
    assert kind == "section"
    text = " ".join(box.find_all("p")[1].get_text(" ").split())
    assert text.startswith("The FFN maps") and "second sublayer" not in text and "feed-forward" not in text
    assert not box.select(".ffn-tip, .ffn-term, [role=tooltip]")
    assert box.find("math") is not None and box.find("msub") is not None  # the formula, not its letters
    assert text.endswith("of note. …") and len(text) <= PARAGRAPH_MAX + 2


def _copy_of(book, tmp_path):
    """A copy of the built tiny book, with what write_previews reads of a Sphinx application."""
    import shutil
    from types import SimpleNamespace

    shutil.copytree(book.outdir, tmp_path / "html")
    shutil.copytree(book.doctreedir, tmp_path / "doctrees")
    builder = SimpleNamespace(format="html", name="html")
    return SimpleNamespace(outdir=tmp_path / "html", doctreedir=tmp_path / "doctrees", builder=builder)


def _pages_of(made: list[tuple]) -> list[str]:
    """The pages of recorded calls of page_previews(out, page, parse, ids)."""
    return [page for _out, page, *_lookups in made]


def test_pages_written_again_unchanged_need_no_preview_written(quiet_tiny_book, tmp_path, calls):
    """Sphinx writes its index and search pages on every build, unchanged: that alone parses nothing."""
    from bookext.website.previews import write_previews

    app = _copy_of(quiet_tiny_book, tmp_path)
    parsed = calls(previews_module, "page_previews")
    for page in app.outdir.rglob("*.html"):
        page.touch()
    write_previews(app, None)
    assert _pages_of(parsed) == []


def test_an_edited_target_page_writes_again_the_previews_of_the_pages_that_refer_to_it(
    quiet_tiny_book, tmp_path, calls
):
    from bookext.website.previews import write_previews

    app = _copy_of(quiet_tiny_book, tmp_path)
    parsed = calls(previews_module, "page_previews")
    target = app.outdir / "index.html"
    target.write_text(target.read_text(encoding="utf-8").replace("caption of the wide figure", "edited caption"))
    write_previews(app, None)
    assert sorted(_pages_of(parsed)) == ["refs", "sub/deep"]  # both refer to index; index refers to nothing
    for page, href in (("refs", "index.html#fig-wide"), ("sub/deep", "../index.html#fig-wide")):
        assert "edited caption" in previews(app, page)[href]["html"]


def test_a_referring_page_is_worked_out_again_when_its_links_change_not_its_text(quiet_tiny_book, tmp_path, calls):
    """The execution statistics page changes its numbers on every build that executes a page,
    and refers to every page: its text alone leaves its previews as they are."""
    from bookext.website.previews import write_previews

    app = _copy_of(quiet_tiny_book, tmp_path)
    parsed = calls(previews_module, "page_previews")
    page = app.outdir / "refs.html"
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace("The same figure again", "Once more"))
    write_previews(app, None)
    assert _pages_of(parsed) == []

    soup = BeautifulSoup(html, "html.parser")
    for link in soup.select('article a.reference.internal[href="index.html"]'):
        link.unwrap()  # the reference to the page becomes plain text
    page.write_text(str(soup))
    write_previews(app, None)
    assert _pages_of(parsed) == ["refs"]  # no page refers to it
    assert "index.html" not in previews(app, "refs") and "index.html#fig-wide" in previews(app, "refs")


def test_a_target_previewed_twice_gives_the_same_preview_and_stays_in_its_page():
    """Every page that refers to a definition or a citation shows its preview: the target
    page is parsed once for all of them, so making a preview must not take the target's
    paragraphs out of it (the second referrer then showed the definition's next paragraph)."""
    from bookext.website.previews import preview_of

    page = BeautifulSoup(
        '<dl><dt id="f">f(x)</dt><dd><p>What f does.</p><p><strong>x</strong> – its input.</p></dd></dl>'
        '<div class="citation" id="c"><span class="label">[1]</span><p>Author, Title, 2020.</p></div>',
        "html.parser",
    )
    before = str(page)

    def soup(markup: str) -> BeautifulSoup:
        return BeautifulSoup(markup, "html.parser")

    for target, kind, text in (("f", "definition", "What f does."), ("c", "citation", "Author, Title, 2020.")):
        first, second = (preview_of(page.find(id=target), soup) for _ in (1, 2))
        assert first[0] == second[0] == kind
        assert str(first[1]) == str(second[1]) and text in str(second[1])
    assert str(page) == before


def test_a_target_is_looked_up_by_id_as_the_page_shows_it_first():
    """The previews look targets up in an index of each page's ids, built once per page: the
    element an id names is the first in the page with it, as ``find(id=...)`` gives it."""
    from bookext.website.previews import elements_by_id

    page = BeautifulSoup(
        '<section id="s"><p id="twice">first</p><div><span id="inner">x</span></div></section><p id="twice">second</p>',
        "html.parser",
    )
    index = elements_by_id(page)
    assert set(index) == {"s", "twice", "inner"}
    for name, element in index.items():
        assert element is page.find(id=name)
    assert index["twice"].get_text() == "first"


def test_only_the_article_is_parsed_and_its_tree_is_the_same():
    from bookext.website.previews import article_of

    html = (
        b'<html><head><script>var x = 1;</script></head><body><nav id="n"><a href="x.html">x</a></nav>'
        b'<main><article class="bd-article"><section id="a"><h1>T</h1><p>Text <a href="#a">a</a>.</p>'
        b"</section></article></main><footer>f</footer></body></html>"
    )
    cut = article_of(html)
    assert cut.startswith(b"<article") and cut.endswith(b"</article>")
    whole = BeautifulSoup(html.decode(), "html.parser").find("article")
    assert str(BeautifulSoup(cut.decode(), "html.parser").find("article")) == str(whole)
    assert article_of(b"<html><body><p>no article</p></body></html>") == b"<html><body><p>no article</p></body></html>"

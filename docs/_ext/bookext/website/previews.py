"""Previews of references: a figure, an equation, a section or a citation, without leaving the text.

Hover a reference, or give it keyboard focus, and a preview opens below it: a
reference to a figure shows the figure and its caption, to an equation the
equation, to a section its heading and opening paragraph, to a bibliography entry
the entry, to a glossary term or an API function its definition. On a touch screen
the first tap shows the preview and a second tap follows the link; Escape closes it.

* **What a reader sees elsewhere, from the finished pages.** After the build,
  :func:`write_previews` reads each page that has references, finds each target in
  the page it points to (numbers, MathML and figure files as that page shows them),
  and writes ``_previews/<page>.json``: the reference's address -> a small piece of
  HTML (ids dropped, links made plain text, image addresses made relative to the
  referring page). Nothing from another host; the same origin only.
* **Loaded on first use.** ``previews.js`` fetches the page's JSON the first time a
  reference is hovered, focused or tapped, never before. The script, its stylesheet
  and the ``<meta name="ffnbook:previews">`` naming the JSON are added only to pages
  whose text has a reference (:func:`add_preview_files`); other pages load nothing.
* **Worked out again for what changed**: a page's previews are worked out again when its
  markup (its links), or the HTML of a page one of its references points to (a caption may
  have changed), is not what they were last written from (digests in
  ``<doctrees>/ffnbook-previews.json``); a no-op build parses nothing.
"""

from __future__ import annotations

import copy
import json
import posixpath
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging

from bookext.builds.pagestate import built_pages, code_version, digest, read_record, write_record

logger = logging.getLogger(__name__)

FOLDER = "_previews"
SCRIPT = "previews.js"
STYLE = "previews.css"
META = "ffnbook:previews"
#: The links of a page's text that get a preview (previews.js selects the same).
LINKS = "article a.reference.internal[href]"
#: ...except those inside these: glossary terms (their own tooltip), tables of contents,
#: heading anchors, the previous/next links.
NOT_INSIDE = (".ffn-term", ".toctree-wrapper", ".prev-next-area", "nav", ".ffn-preview")
#: The longest opening paragraph a section preview shows, in characters of text.
PARAGRAPH_MAX = 600


# --- which pages get the script ------------------------------------------------------------------


def _in_toctree_or_term(node: nodes.Node) -> bool:
    while isinstance(node, nodes.Element):
        if isinstance(node, addnodes.toctree) or "toctree-wrapper" in node.get("classes", ()):
            return True
        if "ffn-term" in str(node.get("attrs", {}).get("class", "")):
            return True
        node = node.parent
    return False


def has_references(doctree: nodes.document | None) -> bool:
    """Whether the page's text holds a link to something inside the book."""
    if doctree is None:
        return False
    return any(
        node.get("internal") and (node.get("refuri") or node.get("refid")) and not _in_toctree_or_term(node)
        for node in doctree.findall(nodes.reference)
    )


def add_preview_files(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The script, stylesheet and JSON address, on pages whose text has references only."""
    if app.builder.name != "html" or not has_references(doctree):
        return
    app.add_css_file(STYLE)
    app.add_js_file(SCRIPT, loading_method="defer")
    address = context["pathto"](f"{FOLDER}/{pagename}.json", 1)
    context["metatags"] = context.get("metatags", "") + f'\n<meta name="{META}" content="{address}" />'


# --- the previews, from the finished pages ---------------------------------------------------------


#: What a preview leaves out: heading anchors, scripts, glossary definitions (a term's own
#: tooltip, whose text would be spliced into the sentence) and controls.
LEFT_OUT = "a.headerlink, script, style, button, input, select, textarea, form, .ffn-tip"


def _plain(fragment) -> None:
    """Make a copied fragment inert: no ids (they would repeat the page's), links as text,
    no heading anchors, scripts, controls or glossary tooltips; a glossary term is its
    word alone."""
    for tag in fragment.select(LEFT_OUT):
        tag.decompose()
    for term in fragment.select(".ffn-term"):
        term.unwrap()
    for link in fragment.find_all("a"):
        link.name = "span"
        link.attrs = {"class": link.get("class", [])} if link.get("class") else {}
    for tag in [fragment, *fragment.find_all(True)]:
        for name in [a for a in tag.attrs if a == "id" or a.startswith("on") or a.startswith("aria-")]:
            del tag[name]


def _images_from(fragment, target_page: str, page: str) -> None:
    """Image addresses (an image's and its phone drawing's), relative to the target page,
    made relative to the referring page."""
    for img in fragment.find_all(["img", "source"]):
        attribute = "src" if img.name == "img" else "srcset"
        src = img.get(attribute, "")
        if not src or re.match(r"^[a-z]+:", src) or src.startswith("/"):
            continue
        in_site = posixpath.normpath(posixpath.join(posixpath.dirname(target_page), src))
        img[attribute] = posixpath.relpath(in_site, posixpath.dirname(page) or ".")
        if img.name == "img":
            img["loading"] = "lazy"


def _text_length(tag) -> int:
    return len(" ".join(tag.get_text(" ").split()))


def _clean_copy(tag, soup_factory):
    """A copy of ``tag`` as a preview shows it (:func:`_plain`): its length is what a reader reads."""
    copy = soup_factory(str(tag)).find(tag.name)
    _plain(copy)
    return copy


def _opening(paragraph, limit: int, soup_factory):
    """A long paragraph cut to its whole sentences within ``limit`` characters of text, then
    an ellipsis. Formulas and other inline elements are kept whole or left out, never
    flattened to their characters."""
    from bs4 import NavigableString

    kept, used = [], 0
    for child in list(paragraph.contents):
        text = " ".join(child.get_text(" ").split()) if not isinstance(child, NavigableString) else str(child)
        if used + len(text) <= limit:
            kept.append(child)
            used += len(text)
            continue
        if isinstance(child, NavigableString):  # this text's sentences that still fit
            room = str(child)[: limit - used]
            end = room.rfind(". ")
            if end >= 0:
                kept.append(NavigableString(room[: end + 1]))
        break
    # End at the last sentence's full stop: drop what follows it.
    while kept and not (isinstance(kept[-1], NavigableString) and kept[-1].rstrip().endswith(".")):
        kept.pop()
    out = soup_factory("<p></p>").p
    if not kept:  # not one sentence fits: the words that do
        words = " ".join(paragraph.get_text(" ").split())[:limit]
        kept = [NavigableString(words.rsplit(" ", 1)[0])]
    for piece in kept:
        out.append(piece)
    out.append(" …")
    return out


def preview_of(target, soup_factory):
    """(kind, HTML) for a target element of a finished page, or None if it has no preview."""
    if target.name == "span" and not target.get_text(strip=True):  # a bare label: what follows it
        target = target.find_next_sibling() or target.parent
    if target.name == "figure" or (target.name == "div" and "figure" in target.get("class", [])):
        return "figure", target
    if target.name == "div" and "math" in target.get("class", []):
        return "equation", target
    if target.name == "div" and "citation" in target.get("class", []):
        entry = soup_factory('<div class="ffn-preview-citation"></div>').div
        for part in target.find_all(["p", "span"], recursive=False):
            if "label" not in part.get("class", []):
                entry.append(copy.copy(part))
        return "citation", entry
    if target.name == "dt":
        definition = target.find_next_sibling("dd")
        box = soup_factory('<div class="ffn-preview-definition"><p class="ffn-preview-heading"></p></div>').div
        box.p.append(" ".join(target.get_text(" ").split()).replace(" ( ", "(").replace(" )", ")"))
        first = definition.find("p") if definition is not None else None
        if first is not None:
            box.append(copy.copy(first))  # a copy: the page's parse is shared by its referrers
        return "definition", box
    if target.name == "section":
        heading = target.find(re.compile(r"^h[1-6]$"))
        box = soup_factory('<div class="ffn-preview-section"><p class="ffn-preview-heading"></p></div>').div
        if heading is not None:
            box.p.append(" ".join(heading.get_text(" ").split()).replace("#", "").strip())
        paragraphs = (_clean_copy(p, soup_factory) for p in target.find_all("p", recursive=False))
        first = next((p for p in paragraphs if _text_length(p) > 40), None)
        if first is not None and _text_length(first) <= PARAGRAPH_MAX:
            box.append(first)
        elif first is not None:  # a long opening: its first sentences, up to the limit
            box.append(_opening(first, PARAGRAPH_MAX, soup_factory))
        return "section", box
    return None


def elements_by_id(soup) -> dict[str, object]:
    """A page's elements by id, the first of each id as ``soup.find(id=...)`` finds it: one walk of
    the page for all its referrers instead of one per reference (most of a clean build's
    previews time went into those walks)."""
    index: dict[str, object] = {}
    for tag in soup.find_all(id=True):
        index.setdefault(tag["id"], tag)
    return index


def page_previews(out: Path, page: str, parse, ids: dict[str, dict] | None = None) -> dict[str, dict]:
    """The previews of one page's references: its address -> {kind, html}. ``ids`` holds each
    parsed page's :func:`elements_by_id`, shared between the calls of one build."""
    ids = {} if ids is None else ids
    soup = parse(page)
    previews: dict[str, dict] = {}
    for link in soup.select(LINKS):
        if any(
            link.find_parent(class_=sel[1:]) if sel.startswith(".") else link.find_parent(sel) for sel in NOT_INSIDE
        ):
            continue
        href = link["href"]
        if href in previews or re.match(r"^[a-z]+:", href):
            continue
        path, _, fragment = href.partition("#")
        target_page = (
            posixpath.normpath(posixpath.join(posixpath.dirname(page), path))[: -len(".html")] if path else page
        )
        if not (out / f"{target_page}.html").is_file():
            continue
        target_soup = parse(target_page)
        if fragment:
            if target_page not in ids:
                ids[target_page] = elements_by_id(target_soup)
            target = ids[target_page].get(fragment)
        else:
            article = target_soup.find("article")
            target = article.find("section") if article is not None else None
        if target is None:
            continue
        found = preview_of(target, lambda markup: type(soup)(markup, "html.parser"))
        if found is None:
            continue
        kind, element = found
        fragment_soup = type(soup)(str(element), "html.parser")
        _plain(fragment_soup)
        _images_from(fragment_soup, target_page, page)
        previews[href] = {"kind": kind, "html": str(fragment_soup).strip()}
    return previews


#: What the previews were last written from, in the build's state folder (beside the doctrees):
#: per page with previews, the digest of its markup (tags and attributes, not its text) and of
#: the whole HTML of every page its references point to.
MANIFEST = "ffnbook-previews.json"
TAG = re.compile(rb"<[^>]*>")


def _markup(html: bytes) -> str:
    """The digest of a page's tags and attributes in order, without its text: what decides which
    of its links get a preview (a page's own text never shows in its previews; when the page
    is the target of one of its own links, its whole HTML is recorded as a target's)."""
    return digest(*TAG.findall(html))


def _code_version() -> str:
    """What else a preview depends on: this module's code and the HTML parser's version."""
    import bs4

    return code_version(__file__, extra=bs4.__version__)


def article_of(html: bytes) -> bytes:
    """The page's ``<article>`` (its text), or the whole page if it has none: every reference
    that gets a preview and every target it shows is in the text, and the theme's header,
    sidebars and scripts around it were a third of what each page's parse read. The
    HTML parser builds what it reads as it comes, so the article's tree is the same cut out
    or in place."""
    start, end = html.find(b"<article"), html.rfind(b"</article>")
    return html[start : end + len(b"</article>")] if 0 <= start < end else html


def write_previews(app: Sphinx, exception) -> None:
    """``_previews/<page>.json`` for every page that loads the previews script, worked out again
    only for a page whose markup, or the HTML of a page its references point to, changed
    since: a no-op build parses nothing, and neither does a page whose numbers alone changed
    (the execution statistics); an edit re-reads the edited page and the pages that refer to it."""
    if exception is not None or app.builder.format != "html" or app.builder.name != "html":
        return
    from bs4 import BeautifulSoup

    out = Path(app.outdir)
    folder = out / FOLDER
    manifest_path = Path(app.doctreedir) / MANIFEST
    texts = {name.removesuffix(".html"): path.read_bytes() for name, path in built_pages(out)}
    digests = {name: digest(text) for name, text in texts.items()}
    version = _code_version()
    known = read_record(manifest_path, version)
    cache: dict[str, object] = {}
    ids: dict[str, dict] = {}
    parsed: list[str] = []

    def parse(name: str):
        parsed.append(name)
        if name not in cache:
            text = texts[name] if name in texts else (out / f"{name}.html").read_bytes()
            cache[name] = BeautifulSoup(article_of(text).decode("utf-8"), "html.parser")
        return cache[name]

    def unchanged(entry, markup: str, target: Path) -> bool:
        return (
            isinstance(entry, dict)
            and entry.get("markup") == markup
            and isinstance(entry.get("read"), dict)
            and target.is_file()
            and all(recorded is not None and digests.get(page) == recorded for page, recorded in entry["read"].items())
        )

    folder.mkdir(exist_ok=True)
    pages: dict[str, dict] = {}
    for name, text in texts.items():
        if f'name="{META}"'.encode() not in text:
            continue
        target, markup = folder / f"{name}.json", _markup(text)
        if unchanged(known.get(name), markup, target):
            pages[name] = known[name]
            continue
        parsed.clear()
        found = page_previews(out, name, parse, ids)
        data = json.dumps(found, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != data:
            target.write_text(data, encoding="utf-8")
        # The page is parsed once to find its links; more than once, it is its own target too.
        targets = {page for page in parsed if page != name or parsed.count(name) > 1}
        pages[name] = {"markup": markup, "read": {page: digests.get(page) for page in sorted(targets)}}
    for old in folder.rglob("*.json"):
        if old.relative_to(folder).with_suffix("").as_posix() not in pages:
            old.unlink()
    (folder / ".built").unlink(missing_ok=True)  # the stamp earlier builds left in the site
    write_record(manifest_path, version, pages)


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_preview_files)
    app.connect("build-finished", write_previews, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

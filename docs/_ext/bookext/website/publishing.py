"""What a published copy of the book adds to its pages.

* **Link previews.** Every page gets Open Graph and Twitter-card metadata: its
  title, its meta description (written by :mod:`bookext.website.meta_description`), its
  address and the book's card image (``docs/_static/ffnbook-card.png``, drawn
  by ``tools/make_card.py``), all on the site's own address (``ffnbook_site_url``).
  Metadata only: a reader's browser fetches nothing for it.
* **Nothing from another host, wherever the site is served.** Every page
  carries a content security policy that lets it load scripts, styles, images,
  fonts and data only from its own host. A host that injects a script of its
  own (Read the Docs' Addons) cannot make a page fetch from anywhere else.
* **No inline script but the page's own.** The policy names, by SHA-256, each inline
  script the finished page holds (the theme's, Sphinx's, the book's) and each inline
  event handler (the theme's print and full-screen buttons, with ``'unsafe-hashes'``,
  which allows exactly those handlers); any other inline script (one injected into the
  page) does not run. The hashes are added to the finished page by
  :mod:`bookext.website.postprocess` (:func:`with_script_hashes`), since no hook sees a page's
  final HTML; ``make live`` adds the hash of sphinx-autobuild's reload script
  (``ffnbook_live_reload_host``).
* **The chapter as one PDF.** The role ``{chapter-pdf}`Download the chapter as one PDF```
  links the PDF that ``make pdf`` printed (``<build>/pdf/ffnbook.pdf``) as a
  download with its size, in HTML builds made after it; where there is no PDF
  the role and its paragraph vanish, so no build links a missing file. The page
  is read again when the PDF appears or changes.
* **"Suggest edit" and "Open issue"** in the header's repository menu come from the
  theme's options (``conf.py``: one ``REPOSITORY_URL``); the edit button's icon is
  renamed here to its Font Awesome 6 name, so postprocess can inline it.
* **The 404 page's in-page links.** The 404 page has a ``<base>`` (so that its
  links work at any missing address), under which ``#main-content`` would mean
  the home page. A small script points such links at the address being shown.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

CARD = "ffnbook-card.png"  # in docs/_static
CARD_SIZE = (1200, 630)
CARD_ALT = "The Transformer Feed-Forward Network: expand, activate, compress."
PDF_NAME = "ffnbook.pdf"

# Everything comes from the page's own host; inline scripts only those the finished page
# holds, named by hash (added to script-src by with_script_hashes). 'self' also covers the
# live preview's reload socket on localhost.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'"
)
POLICY_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)" />')
# A <script> without src whose type a browser runs (no type, or a JavaScript one); data
# blocks (type="application/json") are not scripts to a browser.
INLINE_SCRIPT = re.compile(
    r'<script(?![^>]*\bsrc=)(?![^>]*\btype="(?!text/javascript|module)[^"]*")[^>]*>(.*?)</script>', re.S
)
EVENT_HANDLER = re.compile(r'<[a-zA-Z][^>]*?\son[a-z]+="([^"]*)"')


def script_hash(source: str) -> str:
    """A CSP hash source for an inline script or handler: ``'sha256-<base64>'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def with_script_hashes(text: str, page: str, extra: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """The finished page with its policy allowing exactly its inline scripts and handlers
    (and the scripts in ``extra``); a problem when the page has no policy to edit."""
    found = list(POLICY_META.finditer(text))
    if len(found) != 1:
        return text, [f"content security policy: {page} has {len(found)} policies, expected one"]
    scripts = [*INLINE_SCRIPT.findall(text), *extra]
    handlers = [html.unescape(h) for h in EVENT_HANDLER.findall(text)]
    sources = sorted({script_hash(s) for s in scripts} | {script_hash(h) for h in handlers})
    directives = []
    for directive in html.unescape(found[0].group(1)).split(";"):
        name = directive.split()[0] if directive.split() else ""
        if name == "script-src":
            directive = " ".join(["script-src 'self'", *(["'unsafe-hashes'"] if handlers else []), *sources])
        directives.append(directive.strip())
    tag = _meta("Content-Security-Policy", "; ".join(directives), "http-equiv")
    return text[: found[0].start()] + tag + text[found[0].end() :], []


def live_reload_script(app: Sphinx) -> tuple[str, ...]:
    """The script sphinx-autobuild injects into every page it serves (``make live``)."""
    host = app.config.ffnbook_live_reload_host
    if not host:
        return ()
    from sphinx_autobuild.middleware import web_socket_script

    injected = INLINE_SCRIPT.findall(web_socket_script(host))
    if len(injected) != 1:
        raise ValueError(
            "sphinx-autobuild's reload snippet is no longer one inline script: "
            "update bookext.website.publishing.live_reload_script"
        )
    return tuple(injected)


# Under 404.html's <base>, "#main-content" resolves to the site's home page; point
# every in-page link at the address actually shown instead.
IN_PAGE_LINKS_SCRIPT = (
    "<script>document.addEventListener('DOMContentLoaded',function(){"
    "document.querySelectorAll('a[href^=\"#\"]').forEach(function(a){"
    "a.setAttribute('href',location.pathname+location.search+a.getAttribute('href'));});});"
    "</script>"
)


def _site_url(app: Sphinx) -> str:
    url = app.config.ffnbook_site_url
    return url if url.endswith("/") else url + "/"


def _meta(prop: str, value: str, attr: str = "property") -> str:
    return f'<meta {attr}="{prop}" content="{html.escape(value)}" />'


# Icons the book theme names by their Font Awesome 5 alias, which the theme's Font
# Awesome 6 (whose icons postprocess inlines) knows by a new name.
RENAMED_ICONS = {"fas fa-pencil-alt": "fas fa-pencil"}


def _rename_icons(buttons: list) -> None:
    for button in buttons:
        if button.get("icon") in RENAMED_ICONS:
            button["icon"] = RENAMED_ICONS[button["icon"]]
        _rename_icons(button.get("buttons", []))


def add_page_metadata(app: Sphinx, pagename, templatename, context, doctree) -> None:
    _rename_icons(context.get("header_buttons", []))
    metatags = context.get("metatags", "")
    tags = [_meta("Content-Security-Policy", CONTENT_SECURITY_POLICY, "http-equiv")]
    if pagename == "404":
        context["metatags"] = metatags + "\n" + "\n".join(tags) + "\n" + IN_PAGE_LINKS_SCRIPT
        return
    site = _site_url(app)
    title = html.unescape(re.sub(r"<[^>]+>", "", context.get("title") or app.config.project))
    described = re.search(r'<meta name="description" content="([^"]*)"', metatags)
    tags += [
        _meta("og:type", "website" if pagename == app.config.root_doc else "article"),
        _meta("og:site_name", app.config.project),
        _meta("og:title", title),
        _meta("og:url", site + app.builder.get_target_uri(pagename)),
        _meta("og:image", f"{site}_static/{CARD}"),
        _meta("og:image:width", str(CARD_SIZE[0])),
        _meta("og:image:height", str(CARD_SIZE[1])),
        _meta("og:image:alt", CARD_ALT),
        _meta("twitter:card", "summary_large_image", "name"),
    ]
    if described:
        tags.append(_meta("og:description", html.unescape(described.group(1))))
    context["metatags"] = metatags + "\n" + "\n".join(tags)


# --- the chapter as one PDF ---------------------------------------------------------------


class pdf_link_slot(nodes.Inline, nodes.Element):
    """Where the PDF link goes; removed (with an emptied paragraph) when there is none."""


def pdf_path(app: Sphinx) -> Path:
    """Where `make pdf` writes the PDF: ``<build>/pdf/``, beside the HTML output folder."""
    return Path(app.outdir).parent / "pdf" / PDF_NAME


def chapter_pdf_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    app = env.app
    pdf = pdf_path(app)
    # The page is read again when the PDF changes (a dependency) or appears (Sphinx would
    # re-read a page whose dependency is missing on every build, so the page waits instead).
    if pdf.is_file():
        env.note_dependency(str(pdf))
    else:
        _waiting(env).add(env.docname)
    slot = pdf_link_slot()
    # Only the site links it: the one-page build that the PDF is printed from does not.
    if app.builder.name == "html" and pdf.is_file():
        # A leading "/" makes the target relative to the source folder, from any page.
        target = "/" + Path(os.path.relpath(pdf, env.srcdir)).as_posix()
        link = addnodes.download_reference(
            rawtext, "", reftarget=target, refdoc=env.docname, refdomain="", reftype="download", refexplicit=True
        )
        link += nodes.Text(text)
        slot += link
        slot += nodes.Text(" ")
        # Measured, not typed: the class lets the typed-number check tell (tests/test_typed_numbers.py).
        slot += nodes.inline("", f"(PDF, {pdf.stat().st_size / 2**20:.1f} MB)", classes=["ffn-pdf-size"])
    return [slot], []


def _waiting(env) -> set[str]:
    """Pages that link the PDF and were read while there was none."""
    if not hasattr(env, "ffnbook_pdf_waiting"):
        env.ffnbook_pdf_waiting = set()
    return env.ffnbook_pdf_waiting


def read_again_once_the_pdf_exists(app: Sphinx, env, added, changed, removed) -> list[str]:
    return sorted(_waiting(env) - set(removed)) if pdf_path(app).is_file() else []


def forget_page(app: Sphinx, env, docname: str) -> None:
    _waiting(env).discard(docname)


def merge_waiting(app: Sphinx, env, docnames, other) -> None:
    _waiting(env).update(_waiting(other) & set(docnames))


def resolve_pdf_slots(app: Sphinx, doctree: nodes.document) -> None:
    for slot in list(doctree.findall(pdf_link_slot)):
        parent = slot.parent
        if slot.children:
            slot.replace_self(slot.children)
        else:
            parent.remove(slot)
        if isinstance(parent, nodes.paragraph) and not parent.astext().strip():
            parent.parent.remove(parent)


def setup(app: Sphinx) -> dict:
    # `make live` sets it to sphinx-autobuild's host:port, whose reload script the pages then allow.
    app.add_config_value("ffnbook_live_reload_host", "", "html", types=[str])
    app.add_node(pdf_link_slot)
    app.add_role("chapter-pdf", chapter_pdf_role)
    app.connect("doctree-read", resolve_pdf_slots)
    app.connect("env-get-outdated", read_again_once_the_pdf_exists)
    app.connect("env-purge-doc", forget_page)
    app.connect("env-merge-info", merge_waiting)
    # After meta_description's handler (priority 500), whose description is reused.
    app.connect("html-page-context", add_page_metadata, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Nothing from another host, and no inline script but the page's own: a content security policy.

* **Nothing from another host, wherever the site is served.** Every page carries a
  content security policy that lets it load scripts, styles, images, fonts and data only
  from its own host. A host that injects a script of its own (Read the Docs' Addons)
  cannot make a page fetch from anywhere else.
* **No inline script but the page's own.** The policy names, by SHA-256, each inline
  script the finished page holds (the theme's, Sphinx's, the book's) and each inline
  event handler (the theme's print and full-screen buttons, with ``'unsafe-hashes'``,
  which allows exactly those handlers); any other inline script (one injected into the
  page) does not run. The hashes are added to the finished page by
  :mod:`bookext.website.postprocess` (:func:`with_script_hashes`), since no hook sees a
  page's final HTML; ``make live`` adds the hash of sphinx-autobuild's reload script
  (``ffnbook_live_reload_host``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re

from sphinx.application import Sphinx

from bookext.website.meta_tags import append_meta_tags, meta_tag

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
    tag = meta_tag("Content-Security-Policy", "; ".join(directives), "http-equiv")
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
            "update bookext.website.security_policy.live_reload_script"
        )
    return tuple(injected)


def add_security_policy(app: Sphinx, pagename, templatename, context, doctree) -> None:
    append_meta_tags(context, [meta_tag("Content-Security-Policy", CONTENT_SECURITY_POLICY, "http-equiv")])


def setup(app: Sphinx) -> dict:
    # `make live` sets it to sphinx-autobuild's host:port, whose reload script the pages then allow.
    app.add_config_value("ffnbook_live_reload_host", "", "html", types=[str])
    # After the meta description (priority 500), as the link previews that follow it.
    app.connect("html-page-context", add_security_policy, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""What a published copy adds (bookext.website's security_policy, link_previews, notfound and
header_buttons; bookext.content.chapter_pdf): link previews, the
repository's edit and issue links, a same-host content policy, and 404 in-page links.

The addresses come from the one place that sets them, conf.py (SITE_URL,
REPOSITORY_URL), read here independently of the build.
"""

from __future__ import annotations

import html
import re
import runpy
from urllib.parse import urlparse

import pytest
from sitecheck import ROOT, soup_of

pytestmark = pytest.mark.build

CARD = "_static/ffnbook-card.png"


@pytest.fixture(scope="module")
def conf() -> dict:
    return runpy.run_path(str(ROOT / "conf.py"))


def published_base(site) -> str:
    """The site address the build used, as robots.txt names it."""
    return re.search(r"Sitemap: (\S+)sitemap\.xml", (site / "robots.txt").read_text()).group(1)


def content_pages(site) -> list[str]:
    return sorted(p.stem for p in site.glob("*.html") if p.stem != "404")


def meta(soup, key: str) -> str | None:
    tag = soup.find("meta", attrs={"property": key}) or soup.find("meta", attrs={"name": key})
    return tag["content"] if tag else None


def test_every_page_has_a_link_preview_with_a_local_card(site):
    from PIL import Image

    base = published_base(site)
    with Image.open(site / CARD) as card:
        assert card.size == (1200, 630) and card.format == "PNG"
    for name in content_pages(site):
        soup = soup_of(site, name)
        assert meta(soup, "og:url") == f"{base}{name}.html", name
        assert meta(soup, "og:image") == base + CARD, name
        assert meta(soup, "og:description") == meta(soup, "description"), name
        title = meta(soup, "og:title")
        assert title and title in soup.title.get_text(), name
        assert meta(soup, "twitter:card") == "summary_large_image"
        # On the site's own address, so a preview never depends on another host.
        assert urlparse(meta(soup, "og:image")).netloc == urlparse(base).netloc


def test_edit_and_issue_links_come_from_the_one_repository_address(site, conf):
    repo = conf["REPOSITORY_URL"]
    for name in ("position-independence", "compute", "glossary"):
        hrefs = [a.get("href", "") for a in soup_of(site, name).find_all("a")]
        assert f"{repo}/edit/main/docs/{name}.md" in hrefs, name
        assert any(h.startswith(f"{repo}/issues/new") for h in hrefs), name
        assert repo in hrefs, name


def test_every_page_restricts_loads_to_its_own_host(site):
    for path in sorted(site.glob("*.html")):
        head = path.read_text(encoding="utf-8").split("</head>")[0]
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', head)
        assert policy, path.name
        content = html.unescape(policy.group(1))
        assert "default-src 'self'" in content and "http" not in content, path.name
        # Before anything it governs is loaded.
        first_load = re.search(r"<(script|link)[^>]+(src|href)=", head)
        assert first_load is None or policy.start() < first_load.start(), path.name


def test_no_inline_script_runs_unless_the_page_names_it_by_hash(site):
    """The policy allows no 'unsafe-inline': every inline script and handler the page holds
    is named by its SHA-256 (recomputed here), and nothing else."""
    import base64
    import hashlib

    def sha(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    pages = sorted(site.glob("*.html")) + sorted(site.glob("api/*.html"))
    handlers_seen = 0
    for path in pages:
        soup = soup_of(site, path.relative_to(site).with_suffix("").as_posix())
        policy = html.unescape(
            re.search(
                r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', path.read_text(encoding="utf-8")
            ).group(1)
        )
        script_src = next(d.split() for d in policy.split(";") if d.split()[:1] == ["script-src"])
        assert "'unsafe-inline'" not in policy.split("style-src")[0], path.name
        inline = [
            s.string or ""
            for s in soup.find_all("script")
            if not s.get("src") and s.get("type") in (None, "text/javascript", "module")
        ]
        handlers = [v for tag in soup.find_all(True) for k, v in tag.attrs.items() if k.startswith("on")]
        handlers_seen += len(handlers)
        expected = {sha(text) for text in inline + handlers}
        assert set(script_src[1:]) - {"'self'", "'unsafe-hashes'"} == expected, path.name
        assert ("'unsafe-hashes'" in script_src) == bool(handlers), path.name
    # No inline handler at all: the theme's print and full-screen buttons name their action
    # (bookext.website.postprocess), so no page's policy needs 'unsafe-hashes'.
    assert handlers_seen == 0


# --- in a browser ------------------------------------------------------------------------

# What a host's injection looks like (Read the Docs adds a script to every page it serves),
# here pointing at another host.
INJECTED = (
    '<script async src="https://addons.example.org/addons.js"></script>'
    '<link rel="stylesheet" href="https://fonts.example.org/font.css">'
)


def test_a_script_injected_by_the_host_cannot_reach_another_host(browser, server):
    context = browser.new_context()
    page = context.new_page()
    sent, blocked = [], []
    page.on("request", lambda r: sent.append(r.url) if urlparse(r.url).hostname not in ("127.0.0.1", None) else None)
    page.on(
        "requestfailed", lambda r: blocked.append(r.url) if "csp" in (r.failure or "").lower() else None
    )  # Chromium: "csp"

    def inject(route):
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace("</head>", INJECTED + "</head>"))

    page.route("**/position-independence.html", inject)
    page.goto(server + "position-independence.html")
    page.wait_for_load_state("load")
    styled = page.evaluate("getComputedStyle(document.body).fontFamily")
    context.close()
    # The browser stops both before they leave it (the page's policy), not the network.
    assert len(sent) == 2 and sorted(blocked) == sorted(sent), (sent, blocked)
    assert "sans" in styled or "serif" in styled  # the site's own stylesheets still apply


def test_the_404_pages_skip_link_stays_on_the_missing_address(browser, server, site):
    published = re.search(r'<base href="(/[^"]*)"', (site / "404.html").read_text()).group(1)
    missing = server.rstrip("/") + published + "no/such/page.html"
    context = browser.new_context()
    page = context.new_page()
    page.goto(missing)
    page.evaluate("window.ffnNotReloaded = true")
    page.keyboard.press("Tab")  # the skip link is the first thing on the page
    assert page.evaluate("document.activeElement.textContent").strip().lower().startswith("skip")
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash === '#main-content'", timeout=5000)
    url, same_page = page.url, page.evaluate("window.ffnNotReloaded === true")
    context.close()
    assert url == missing + "#main-content" and same_page


VIOLATIONS = """window.ffnViolations = [];
document.addEventListener('securitypolicyviolation',
  e => window.ffnViolations.push(e.violatedDirective + ' ' + (e.sample || e.blockedURI)));"""


def test_the_pages_own_inline_scripts_run_and_an_injected_one_does_not(browser, server):
    context = browser.new_context()
    context.add_init_script(VIOLATIONS)
    page = context.new_page()

    def inject(route):
        response = route.fetch()
        route.fulfill(
            response=response,
            body=response.text().replace("</body>", "<script>window.ffnInjected = true;</script></body>"),
        )

    page.route("**/compute.html", inject)
    found = {}
    for name in ("index.html", "compute.html", "search.html", "404.html", "api/moe.html"):
        page.goto(server + name)
        page.wait_for_load_state("load")
        found[name] = {
            # The theme's inline scripts ran: the colour mode is set before the page is drawn,
            # and the page knows its name.
            "mode": page.evaluate("document.documentElement.dataset.mode"),
            "pagename": page.evaluate("DOCUMENTATION_OPTIONS.pagename"),
            "injected": page.evaluate("window.ffnInjected === true"),
            "violations": page.evaluate("window.ffnViolations"),
        }
    # The theme's full-screen button: an inline handler the policy names.
    page.goto(server + "index.html")
    page.locator("button.btn-fullscreen-button").first.dispatch_event("click")
    page.wait_for_timeout(200)
    after_click = page.evaluate("window.ffnViolations")
    context.close()
    assert {n: f["mode"] for n, f in found.items()} == dict.fromkeys(found, "auto")
    assert found["compute.html"]["pagename"] == "compute" and found["api/moe.html"]["pagename"] == "api/moe"
    assert not found["compute.html"]["injected"]
    assert [v.split()[0] for v in found["compute.html"]["violations"]] == ["script-src-elem"]
    assert all(not f["violations"] for n, f in found.items() if n != "compute.html"), found
    assert after_click == []

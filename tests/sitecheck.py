"""Helpers for tests that build the book and read the built pages."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def make_html(source: Path, build: Path) -> subprocess.CompletedProcess:
    """Run the real `make html` on ``source`` into ``build``, capturing its output."""
    return subprocess.run(
        ["make", "--no-print-directory", "html", f"SOURCEDIR={source}", f"BUILDDIR={build}",
         f"PY={sys.executable}", "SETUP="],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )


def soup_of(site: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((site / f"{name}.html").read_text(), "html.parser")


def page_text(site: Path, name: str) -> str:
    """The article's visible text, whitespace collapsed."""
    return " ".join(soup_of(site, name).find("article").get_text(" ").split())


def glued_after(site: Path, name: str, phrase: str) -> str:
    """The first glued value that follows ``phrase`` within one paragraph of the page."""
    soup = soup_of(site, name)
    for span in soup.find_all("span", class_="pasted-text"):
        span.replace_with(f"\u27e6{span.get_text()}\u27e7")  # mark glued values: ⟦value⟧
    for block in soup.find_all(["p", "li", "td"]):
        text = " ".join(block.get_text(" ").split())
        match = re.search(re.escape(phrase) + r"[^\u27e6]*\u27e6([^\u27e7]*)\u27e7", text)
        if match:
            return match.group(1)
    raise AssertionError(f"no glued value after {phrase!r} on {name}.html")


def number(text: str) -> float:
    """Parse a glued number as shown ("2,099,712", "1.05e-15", "66.7%")."""
    text = text.strip().replace(",", "").replace("\u2212", "-")
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def figures(site: Path, name: str) -> list:
    """The <img> elements inside figures of a page."""
    return [img for fig in soup_of(site, name).find_all("figure") for img in fig.find_all("img")]

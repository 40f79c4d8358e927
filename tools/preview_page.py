"""Build a few pages of the book quickly, with stand-ins for the rest.

    .venv/bin/python tools/preview_page.py anatomy [width ...]

Copies the named pages (plus index, bibliography and references.bib) into a
temporary source folder, writes a one-line stand-in for every other page in
the index's toctrees so cross-references resolve, and runs the real
`make html` on it. Prints the build's output and where the HTML is. Only the
named pages execute, so a preview takes seconds instead of a full build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ALWAYS = ("index", "bibliography", "glossary", "api")  # cheap pages that other pages link into


def toctree_pages() -> list[str]:
    index = (DOCS / "index.md").read_text()
    pages = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", index, flags=re.S):
        pages += [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.startswith(":")]
    return pages


def stand_in(name: str) -> str:
    """A page with the same title and labels as ``name``, and no code."""
    page = DOCS / f"{name}.md"
    if not page.exists():
        return f"# {name}\n\n(Not written yet.)\n"
    text = page.read_text()
    labels = re.findall(r"^\((\S+)\)=$", text, flags=re.M)
    title = next((ln for ln in text.splitlines() if ln.startswith("# ")), f"# {name}")
    body = "".join(f"({label})=\n" for label in labels) + title + "\n\n(Stand-in for preview.)\n"
    return body


def main(names: list[str]) -> int:
    if not names:
        print(__doc__)
        return 2
    work = Path(tempfile.mkdtemp(prefix="ffnbook-preview-"))
    source = work / "src"
    source.mkdir()
    (work / "ffnbook").symlink_to(ROOT / "ffnbook")  # pages literalinclude ../ffnbook/...
    shutil.copy(DOCS / "references.bib", source)
    for name in toctree_pages():
        if name in names or name in ALWAYS:
            shutil.copy(DOCS / f"{name}.md", source)
        else:
            (source / f"{name}.md").write_text(stand_in(name))
    for name in ALWAYS:
        shutil.copy(DOCS / f"{name}.md", source)
    shutil.copytree(DOCS / "api", source / "api")  # the API page's toctree lists them
    result = subprocess.run(
        ["make", "--no-print-directory", "html", f"SOURCEDIR={source}", f"BUILDDIR={work}/_build"],
        cwd=ROOT,
    )
    print(f"\nPreview HTML: {work}/_build/html/index.html")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

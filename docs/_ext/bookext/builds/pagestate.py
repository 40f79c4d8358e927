"""What a step that reads every built page made of each, kept for the next build.

Sphinx writes again only the pages that changed, but a step run when the build finishes
(``build-finished``) sees every page of the site; redone for all of them, those steps were
most of a rebuild that changed nothing. Each keeps, beside the doctrees (so ``make clean``
and a fresh build forget it), a JSON record of what it made of each page and the digest of
what it made it from, and redoes its work for a page only when that digest changed. A
record carries the ``version`` of what else the step depends on (its code, a font, a
script): of another version, it is ignored, and the work done again for every page.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from bookext.execution.records import write_atomically


def digest(*parts: bytes) -> str:
    """The SHA-256 of ``parts`` (kept apart by a NUL byte), in hex."""
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def code_version(*files: str | Path, extra: str = "") -> str:
    """The digest of the source ``files`` (a module's ``__file__``) and ``extra``."""
    return digest(*(Path(f).read_bytes() for f in files), extra.encode())


def built_pages(out: Path) -> Iterator[tuple[str, Path]]:
    """(name, path) of every HTML page of the site in ``out``, by name: ``sub/page.html``."""
    for path in sorted(out.rglob("*.html")):
        if "_static" not in path.relative_to(out).parts:
            yield path.relative_to(out).as_posix(), path


def read_record(path: Path, version: str) -> dict:
    """The pages of the record at ``path``; none if it is missing, unreadable or of another version."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict) or record.get("version") != version:
        return {}
    pages = record.get("pages")
    return pages if isinstance(pages, dict) else {}


def write_record(path: Path, version: str, pages: dict) -> None:
    write_atomically(path, json.dumps({"version": version, "pages": pages}, sort_keys=True))

"""Which output files a build changed since post-processing last saw them.

An incremental build rewrites only the pages it re-read (and a few it writes every
time: genindex, search ...); Sphinx re-copies a static file only when it differs from
its source. Every other file in the output folder still holds exactly the bytes that
the last build's post-processing left, so post-processing it again is wasted work.

:class:`Ledger` remembers, per file, the SHA-256 of the bytes post-processing left and
whatever it wants to keep about the file (say, the CSS classes a page uses, which a
stylesheet trim needs even when the page itself is skipped)::

    ledger = Ledger(Path(app.doctreedir) / "postprocessed.json")
    for page in pages:
        kept = ledger.seen(page)  # None: new bytes (or never seen): process the page
        if kept is None:
            ... rewrite the page ...
            kept = {"classes": sorted(classes_on_this_page)}
            ledger.keep(page, kept)
        ... use kept ...
    ledger.save()

The ledger lives beside the doctrees, not in the published folder. A missing or
unreadable ledger means every file is processed (when in doubt, process).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


_UMASK = os.umask(0o022)
os.umask(_UMASK)


def digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes; None when it does not exist or cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` whole: readers see the old file or the new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".writing-", suffix=path.suffix)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # an ordinary file, not mkstemp's owner-only one
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Ledger:
    """What post-processing left in each file last time, and what it kept about it."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entries = {}
        self._before = entries if isinstance(entries, dict) else {}
        self._now: dict[str, dict] = {}

    def seen(self, file: Path) -> dict | None:
        """What was kept about ``file`` if it still holds the bytes post-processing left; else None."""
        entry = self._before.get(str(file))
        if not isinstance(entry, dict) or entry.get("sha256") != digest(file):
            return None
        self._now[str(file)] = entry
        return entry.get("kept", {})

    def keep(self, file: Path, kept: dict | None = None) -> None:
        """Remember ``file``'s bytes as post-processing leaves them now, with ``kept`` (JSON data)."""
        self._now[str(file)] = {"sha256": digest(file), "kept": kept or {}}

    def save(self) -> None:
        """Write the files seen or kept in this build (and only those)."""
        write_atomically(self.path, json.dumps(self._now))

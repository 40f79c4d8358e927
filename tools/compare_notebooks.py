"""Compare the reader notebooks of two builds, byte for byte.

    python tools/compare_notebooks.py BEFORE_HTML AFTER_HTML

Every ``.ipynb`` under each html folder (``notebooks/``, ``_sources/``) and every file
inside the notebook archives (``*.zip``) is compared; the script prints each file that
differs, is missing or is new, with the first differing cell, and exits 1 when any does.
Used to check that a change of the reader-notebook converter leaves its output unchanged.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path


def files(html: Path) -> dict[str, bytes]:
    found = {str(p.relative_to(html)): p.read_bytes() for p in sorted(html.rglob("*.ipynb"))}
    for archive in sorted(html.rglob("*.zip")):
        with zipfile.ZipFile(archive) as zf:
            for name in sorted(zf.namelist()):
                found[f"{archive.relative_to(html)}!{name}"] = zf.read(name)
    return found


def first_difference(before: bytes, after: bytes) -> str:
    try:
        old, new = json.loads(before), json.loads(after)
    except ValueError:
        return ""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return ""
    for i, (a, b) in enumerate(zip(old.get("cells", []), new.get("cells", []))):
        if a.get("source") != b.get("source"):
            return f"cell {i}:\n--- before\n{''.join(a.get('source', ''))}\n--- after\n{''.join(b.get('source', ''))}"
        if a != b:
            return f"cell {i}: the same source, other outputs or metadata"
    if old.get("metadata") != new.get("metadata"):
        return f"metadata: {old.get('metadata')} -> {new.get('metadata')}"
    return "cell count" if len(old.get("cells", [])) != len(new.get("cells", [])) else ""


def main(before: str, after: str) -> int:
    old, new = files(Path(before)), files(Path(after))
    differ = 0
    for name in sorted(old.keys() | new.keys()):
        if name not in new or name not in old:
            print(f"{'missing' if name not in new else 'new'}: {name}")
            differ += 1
        elif old[name] != new[name]:
            print(f"differs: {name}\n{first_difference(old[name], new[name])}\n")
            differ += 1
    print(f"{len(old.keys() | new.keys())} files compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

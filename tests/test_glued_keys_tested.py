"""Every glued number is tested: each key a page glues is named by a test, or sits in the
commented allow-list tests/glue_allowlist.py (each entry says why it has no test).

A key counts as named when a test's source holds it as a string, or an f-string of a test
matches it (``f"moe_{name}_experts"``). The allow-list only shrinks: a key that is tested
or no longer glued must leave it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from glue_allowlist import NOT_YET_TESTED
from sitecheck import glue_data

TESTS = Path(__file__).resolve().parent


def glued_keys(site: Path) -> dict[str, str]:
    """Every key the built book glued -> its page."""
    keys = {}
    for path in sorted((site.parent / "jupyter_execute").rglob("*.glue.json")):
        page = path.relative_to(site.parent / "jupyter_execute").as_posix().removesuffix(".glue.json")
        keys.update(dict.fromkeys(glue_data(site, page), page))
    return keys


def named_by_tests() -> tuple[set[str], list[re.Pattern]]:
    """The strings the tests hold, and their f-strings as patterns."""
    strings, patterns = set(), []
    for path in TESTS.glob("*.py"):
        if path.name == "glue_allowlist.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            elif isinstance(node, ast.JoinedStr):
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else r"[A-Za-z0-9_]+" for v in node.values]
                if any(isinstance(v, ast.Constant) and "_" in v.value for v in node.values):
                    patterns.append(re.compile("".join(parts)))
    return strings, patterns


def untested(site: Path) -> dict[str, str]:
    strings, patterns = named_by_tests()
    return {
        key: page
        for key, page in glued_keys(site).items()
        if key not in strings and not any(p.fullmatch(key) for p in patterns)
    }


def test_every_glued_key_is_named_by_a_test_or_allowed_with_a_reason(site):
    missing = {k: p for k, p in untested(site).items() if k not in NOT_YET_TESTED}
    shown = "\n".join(f"  {page}: {key}" for key, page in sorted(missing.items(), key=lambda i: i[::-1]))
    assert not missing, (
        "glued keys no test names: test them (sitecheck.glued(site, page, key) against "
        f"an independent recomputation), or list them with a reason in tests/glue_allowlist.py:\n{shown}"
    )


def test_the_allow_list_only_shrinks(site):
    left = untested(site)
    stale = sorted(set(NOT_YET_TESTED) - set(left))
    assert not stale, f"tested now, or no longer glued: remove from tests/glue_allowlist.py: {stale}"

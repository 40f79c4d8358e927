"""What a reader sees, checked in the pages' sources (fast: no build).

* Code cells a reader sees hold no build plumbing: no ``myst_nb`` import and no
  glue call (they go in cells tagged ``remove-cell``; the values are in the prose).
* Self-checks do not give their answer away by its length: the right option is
  not much longer than the longest wrong one, and across the book it is the longest
  in about as many questions as chance would make it.
"""

from __future__ import annotations

import re

import pytest
import yaml
from sitecheck import DOCS

PAGES = sorted(DOCS.glob("*.md"))
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
SELF_CHECK = re.compile(r"^```\{self-check\}\n(.*?)^```", re.S | re.M)


def visible_cells(text: str):
    for match in CELL.finditer(text):
        body = match.group(1)
        tags = re.search(r"^:tags:\s*\[(.*?)\]", body, re.M)
        if tags and {"remove-cell", "remove-input"} & {t.strip() for t in tags.group(1).split(",")}:
            continue
        yield text.count("\n", 0, match.start()) + 1, body


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_glue_plumbing_in_the_code_a_reader_sees(page):
    found = [
        f"{page.name}:{line + i}: {code.strip()}"
        for line, body in visible_cells(page.read_text(encoding="utf-8"))
        for i, code in enumerate(body.split("\n"), start=1)
        if re.search(r"\bmyst_nb\b|^\s*glue\(", code)
    ]
    assert not found, "move these into a cell tagged remove-cell (docs/contributing.md):\n" + "\n".join(found)


def shown_length(text: str) -> int:
    """About how many characters an option takes on the page: math and code as they
    read (``$d_\\text{model}$`` as "dmodel", ``\\times`` as one sign), not their source."""
    text = re.sub(r"\\(?:text|operatorname|mathrm|mathbf)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\[A-Za-z]+", "x", text)  # a command draws one sign
    text = re.sub(r"[${}^_`\\]", "", text)
    text = re.sub(r"\{[a-z]+\}", "", text)  # a role's name
    return len(" ".join(text.split()))


#: Pages whose self-checks another branch is rewriting; checked again as soon as that work lands.
SELF_CHECKS_BEING_REWRITTEN: set[str] = set()


def self_checks():
    for page in PAGES:
        if page.name in SELF_CHECKS_BEING_REWRITTEN:
            continue
        text = page.read_text(encoding="utf-8")
        for match in SELF_CHECK.finditer(text):
            data = yaml.safe_load(match.group(1))
            right = [shown_length(o["text"]) for o in data["options"] if o.get("correct")]
            wrong = [shown_length(o["text"]) for o in data["options"] if not o.get("correct")]
            yield f"{page.name}:{text.count(chr(10), 0, match.start()) + 1}", right[0], wrong


#: How much longer than the longest wrong option the right one may be.
LONGER_AT_MOST = 1.15


def test_the_right_option_is_not_the_long_one():
    checks = list(self_checks())
    assert len(checks) > 40
    tells = [
        f"{where}: right {right} characters, longest wrong {max(wrong)}"
        for where, right, wrong in checks
        if right > LONGER_AT_MOST * max(wrong)
    ]
    assert not tells, "the right option stands out by its length:\n" + "\n".join(tells)
    # With three options of like length the right one is the longest in about a third.
    longest = sum(right > max(wrong) for _, right, wrong in checks)
    assert longest <= 0.4 * len(checks), f"the right option is the longest in {longest} of {len(checks)}"
    shortest = sum(right < min(wrong) for _, right, wrong in checks)
    assert shortest <= 0.4 * len(checks), f"the right option is the shortest in {shortest} of {len(checks)}"


DISPLAY_MATH = re.compile(r"\$\$(.*?)\$\$|^```\{math\}[^\n]*\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_display_equations_set_fractions_at_display_size(page):
    """``\\tfrac`` sets a fraction at the size of the text's; in a display equation the
    fraction is the equation's subject and is written ``\\frac`` (``\\dfrac``)."""
    text = page.read_text(encoding="utf-8")
    found = [
        f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}: {' '.join((m.group(1) or m.group(2)).split())}"
        for m in DISPLAY_MATH.finditer(text)
        if r"\tfrac" in (m.group(1) or m.group(2))
    ]
    assert not found, "write \\frac in display math:\n" + "\n".join(found)

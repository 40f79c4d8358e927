"""Checking a reader's numeric answer: how a typed number is read, and when it counts as right.

Every chapter page ends with problems whose answers the page computes with
ffnbook. On the site a reader types a number into the problem and the page's
script (``docs/_static/problems.js``) says at once whether it is right; this
module is the same reader and the same rule in Python, so the two can be
tested against each other and a notebook reader can check an answer too:

>>> check_answer("1.2B", 1_200_000_000, ROUNDED)
True
>>> check_answer("1.3e9", 1_200_000_000, ROUNDED)
False

Accepted forms: plain (``1200000000``, ``1.2e9``), grouped by thousands
(``1,200,000,000``, ``1 200 000 000``, ``1_200_000_000``), a power of ten
(``1.2x10^9``, ``1.2*10**9``, ``1.2×10⁹``), a scale word or letter (``1.2B``,
``1.2 billion``, ``350M``, ``4k``, ``1.5T``), a byte unit (``16 GB``,
``14.9 GiB``), a fraction (``8/3``) and a percentage (``67%``). A trailing
unit word that names the problem's unit (``176M parameters``) is allowed.
"""

from __future__ import annotations

import math
import re

from ffnbook._checks import require_instance, require_number

#: The tolerance of an answer that may be rounded. Any answer rounded to three
#: significant figures is within half a percent of the exact value, since rounding moves
#: the first three digits (at least 100) by at most 0.5.
ROUNDED = 0.005
#: The tolerance of an answer that must be exact (an integer from a rule or a count).
EXACT = 0.0
#: The tolerances a problem may use. The reader is told which one applies.
TOLERANCES = (EXACT, ROUNDED)

# Scale letters and words. Letters are case-sensitive where case carries meaning
# (M is a million; m is milli in SI, so it is not accepted).
_SCALES = {
    "k": 1e3, "K": 1e3, "thousand": 1e3,
    "M": 1e6, "million": 1e6, "mn": 1e6,
    "B": 1e9, "G": 1e9, "bn": 1e9, "billion": 1e9,
    "T": 1e12, "trillion": 1e12,
    "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "KiB": 2.0**10, "kiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40,
}
_WORDS = {"thousand", "million", "billion", "trillion"}  # also in any case
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_PLAIN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_GROUPED = re.compile(r"[+-]?\d{1,3}([, _])\d{3}(?:\1\d{3})*(?:\.\d+)?")
_POWER = re.compile(r"(?:(.+?)\s*[x*×·]\s*)?10\s*(?:\^|\*\*)\s*([+-]?\d+)")
_POWER_SUPERSCRIPT = re.compile(r"(?:(.+?)\s*[x*×·]\s*)?10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


class AnswerError(ValueError):
    """A typed answer that cannot be read as a number; the message says why."""


#: The most characters of a reader's text an error message repeats (a long paste stays out of the page).
QUOTED_MAX = 20


def _quoted(text: str) -> str:
    """``text`` between single quotes, cut to :data:`QUOTED_MAX` characters with an ellipsis."""
    return "'" + (text if len(text) <= QUOTED_MAX else text[: QUOTED_MAX - 1] + "…") + "'"


def _unit_words(unit: str) -> set[str]:
    words = {w.casefold() for w in unit.split()} if unit else set()
    return words | {w[:-1] for w in words if w.endswith("s")} | {w + "s" for w in words}


def _mantissa(text: str) -> float:
    if _PLAIN.fullmatch(text):
        return float(text)
    grouped = _GROUPED.fullmatch(text)
    if grouped:
        return float(re.sub(r"[, _]", "", text))
    if "," in text:
        raise AnswerError("commas group thousands (1,200,000); a decimal point is a point (1.5)")
    raise AnswerError(f"{_quoted(text)} is not a number")


def parse_answer(text: str, unit: str = "") -> float:
    """The number ``text`` means, as the problems' script reads it; AnswerError if none.

    ``unit``: the problem's unit ("parameters", "FLOPs"): a trailing word naming it is
    ignored.

    >>> parse_answer("1,200,000,000"), parse_answer("1.2e9"), parse_answer("1.2B")
    (1200000000.0, 1200000000.0, 1200000000.0)
    >>> parse_answer("8/3") == 8 / 3, parse_answer("67%")
    (True, 0.67)
    """
    require_instance(text, "text", str, "the typed answer (a str)")
    require_instance(unit, "unit", str, "the problem's unit (a str, '' for none)")
    s = text.strip().replace("\u2212", "-").replace("\u2013", "-")
    s = re.sub(r"[\u00a0\u2007\u2009\u202f]", " ", s)
    words = s.split()
    if len(words) > 1 and words[-1].casefold() in _unit_words(unit):
        s = " ".join(words[:-1])
    if not s:
        raise AnswerError("text is empty: type a number first")
    if "/" in s:
        top, _, bottom = s.partition("/")
        if "/" in bottom:
            raise AnswerError("a fraction has one slash (8/3)")
        numerator, denominator = parse_answer(top), parse_answer(bottom)
        if denominator == 0:
            raise AnswerError("the fraction divides by zero")
        return numerator / denominator
    scale = 1.0
    if s.endswith("%"):
        s, scale = s[:-1].rstrip(), 0.01
    else:
        suffix = re.fullmatch(r"(.*?)\s*([A-Za-z]+)", s)
        if suffix and suffix.group(1):
            word = suffix.group(2)
            factor = _SCALES.get(word) or (_SCALES[word.casefold()] if word.casefold() in _WORDS else None)
            if factor is None:
                raise AnswerError(f"{_quoted(word)} is not a scale this page reads (k, M, B or billion, T, GB, GiB)")
            if word == "B" and unit.casefold() == "bytes":
                raise AnswerError("B alone could mean bytes or billions here: write 1.2e9, 1.2 billion or 1.2 GB")
            s, scale = suffix.group(1), factor
            if re.search(r"[eE^*⁰¹²³⁴⁵⁶⁷⁸⁹]", s):
                raise AnswerError("write a power of ten or a scale word, not both")
    power = _POWER.fullmatch(s) or _POWER_SUPERSCRIPT.fullmatch(s)
    if power:
        exponent = int(power.group(2).translate(_SUPERSCRIPT))
        value = (_mantissa(power.group(1)) if power.group(1) else 1.0) * 10.0**exponent
    else:
        value = _mantissa(s)
    value *= scale
    if not math.isfinite(value):
        raise AnswerError("the number is too large")
    return value


def is_within(value: float, answer: float, tolerance: float) -> bool:
    """Whether ``value`` counts as ``answer``: within ``tolerance`` of it, relatively.

    An exact tolerance (0) still allows the last bits a decimal-to-binary reading can
    move (a relative 1e-12), so ``176.160768M`` is ``176160768``.
    """
    value, answer = require_number(value, "value"), require_number(answer, "answer")
    tolerance = require_number(tolerance, "tolerance", low=0)
    return abs(value - answer) <= max(tolerance, 1e-12) * abs(answer)


def check_answer(text: str, answer: float, tolerance: float, unit: str = "") -> bool:
    """Whether the typed ``text`` is ``answer`` within ``tolerance`` (AnswerError if unreadable)."""
    require_number(answer, "answer")
    require_number(tolerance, "tolerance", low=0)
    return is_within(parse_answer(text, unit), answer, tolerance)

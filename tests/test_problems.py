"""ffnbook.problems: how a typed answer is read and when it counts as right.

The same reader runs in the browser (docs/_static/problems.js); tests/test_problems_browser.py
holds the two to each other. Here: every accepted form against its value written out, the
refusals with their reasons, and the tolerances' promise (three significant figures pass).
"""

from __future__ import annotations

import math
import random

import pytest

from ffnbook.problems import EXACT, ROUNDED, TOLERANCES, AnswerError, check_answer, is_within, parse_answer

#: (typed, unit, value): every form the problems accept, with its value worked out by hand.
ACCEPTED = [
    ("1200000000", "", 1.2e9),
    ("1.2e9", "", 1.2e9),
    ("1.2E9", "", 1.2e9),
    ("12e-1", "", 1.2),
    ("1,200,000,000", "", 1.2e9),
    ("1 200 000 000", "", 1.2e9),
    ("1_200_000_000", "", 1.2e9),
    ("1\u202f200\u202f000", "", 1.2e6),
    ("1,234.5", "", 1234.5),
    ("1.2B", "", 1.2e9),
    ("1.2 billion", "", 1.2e9),
    ("1.2 Billion", "", 1.2e9),
    ("1.2bn", "", 1.2e9),
    ("1.2G", "", 1.2e9),
    ("350M", "", 3.5e8),
    ("350 million", "", 3.5e8),
    ("4k", "", 4e3),
    ("4K", "", 4e3),
    ("4 thousand", "", 4e3),
    ("1.5T", "", 1.5e12),
    ("2 trillion", "", 2e12),
    ("16 GB", "bytes", 16e9),
    ("16GB", "", 16e9),
    ("2 TB", "", 2e12),
    ("512 MB", "", 512e6),
    ("3 kB", "", 3e3),
    ("1 GiB", "bytes", 2.0**30),
    ("2 MiB", "", 2.0**21),
    ("1 KiB", "", 1024.0),
    ("1 TiB", "", 2.0**40),
    ("1.2x10^9", "", 1.2e9),
    ("1.2 x 10^9", "", 1.2e9),
    ("1.2*10**9", "", 1.2e9),
    ("1.2×10^9", "", 1.2e9),
    ("1.2·10^9", "", 1.2e9),
    ("1.2×10⁹", "", 1.2e9),
    ("10^9", "", 1e9),
    ("10⁻³", "", 1e-3),
    ("5×10⁻²", "", 0.05),
    ("8/3", "", 8 / 3),
    ("2/3", "", 2 / 3),
    ("1.2B/4", "", 3e8),
    ("67%", "", 0.67),
    ("0.5 %", "", 0.005),
    ("−3", "", -3.0),
    ("+3", "", 3.0),
    (".5", "", 0.5),
    ("5.", "", 5.0),
    ("  42  ", "", 42.0),
    ("176M parameters", "parameters", 1.76e8),
    ("176M parameter", "parameters", 1.76e8),
    ("8000 numbers", "numbers", 8000.0),
    ("1.2e9 bytes", "bytes", 1.2e9),
    ("28 pairs", "pairs", 28.0),
]

#: (typed, unit, the start of the reason): what is refused, and why.
REFUSED = [
    ("", "", "text is empty: type a number first"),
    ("   ", "", "text is empty: type a number first"),
    ("abc", "", "'abc' is not a number"),
    ("1..2", "", "'1..2' is not a number"),
    ("1,5", "", "commas group thousands"),
    ("1,20,000", "", "commas group thousands"),
    ("1.2m", "", "'m' is not a scale"),
    ("3 apples", "", "'apples' is not a scale"),
    ("1.2 GB parameters", "", "'parameters' is not a scale"),
    ("1.2B", "bytes", "B alone could mean bytes or billions"),
    ("1.2e9B", "", "write a power of ten or a scale word, not both"),
    ("10^9 million", "", "write a power of ten or a scale word, not both"),
    ("1/2/3", "", "a fraction has one slash"),
    ("1/0", "", "the fraction divides by zero"),
    ("1e400", "", "the number is too large"),
    ("110^9", "", "'110^9' is not a number"),
    # A long paste is quoted by its first 19 characters and an ellipsis, not whole.
    ("1..2" * 600, "", "'1..21..21..21..21..…' is not a number"),
    ("12 " + "x" * 30, "", "'xxxxxxxxxxxxxxxxxxx…' is not a scale"),
]


@pytest.mark.parametrize("typed, unit, value", ACCEPTED)
def test_each_accepted_form_reads_as_its_value(typed, unit, value):
    assert math.isclose(parse_answer(typed, unit), value, rel_tol=1e-15)


@pytest.mark.parametrize("typed, unit, reason", REFUSED)
def test_each_refused_form_says_why(typed, unit, reason):
    with pytest.raises(AnswerError) as caught:
        parse_answer(typed, unit)
    assert str(caught.value).startswith(reason)


def test_three_significant_figures_always_pass_the_rounded_tolerance():
    rng = random.Random(0)
    for _ in range(20_000):
        answer = rng.uniform(1, 10) * 10.0 ** rng.randint(-6, 15)
        rounded = float(f"{answer:.3g}")  # what a reader who rounds types
        assert is_within(rounded, answer, ROUNDED), (answer, rounded)
        assert check_answer(f"{answer:.3e}", answer, ROUNDED)


def test_the_rounded_tolerance_refuses_a_two_figure_answer_that_is_off():
    assert check_answer("1.2B", 1.2e9, ROUNDED) and check_answer("1.205B", 1.2e9, ROUNDED)
    assert not check_answer("1.21B", 1.2e9, ROUNDED)  # 0.83 % off
    assert not check_answer("1.3e9", 1.2e9, ROUNDED)
    assert not check_answer("-1.2e9", 1.2e9, ROUNDED)


def test_an_exact_answer_must_be_exact_but_any_form_of_it_counts():
    assert TOLERANCES == (EXACT, ROUNDED) and EXACT == 0
    for typed in ("176160768", "176,160,768", "1.76160768e8", "176.160768M", "176160768 parameters"):
        assert check_answer(typed, 176160768, EXACT, "parameters"), typed
    assert not check_answer("176160769", 176160768, EXACT)
    assert not check_answer("176.2M", 176160768, EXACT)


def test_bad_arguments_name_the_parameter():
    with pytest.raises(TypeError, match="text must be"):
        parse_answer(12)
    with pytest.raises(TypeError, match="unit must be"):
        parse_answer("12", unit=None)
    with pytest.raises(ValueError, match="answer must be a finite number, got nan"):
        is_within(1.0, float("nan"), ROUNDED)
    with pytest.raises(TypeError, match="tolerance must be a finite number >= 0, got bool"):
        is_within(1.0, 1.0, True)
    with pytest.raises(ValueError, match="tolerance must be a finite number >= 0"):
        is_within(1.0, 1.0, -0.1)

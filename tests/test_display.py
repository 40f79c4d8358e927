"""The book's number format and tables (ffnbook.display), against what a reader expects:
scientific notation only where it helps, zeros as 0, numbers right and words left."""

from __future__ import annotations

import math

import pytest

from ffnbook.display import MarkdownTable, format_number


@pytest.mark.parametrize("value", [1.05e-15, 2.2e-16, 9.99e-4, 3.14e23, 1e6, -4.4e-16])
def test_scientific_notation_stays_where_it_helps(value):
    shown = format_number(value, ".2e")
    assert shown == format(value, ".2e")


@pytest.mark.parametrize("value", [1e-3, 0.0123, 0.99, 2.0, 12.5, 999.0, 12345.0, 987654.0, -0.5])
def test_from_a_thousandth_to_a_million_numbers_are_plain_digits_of_the_same_precision(value):
    shown = format_number(value, ".2e")
    assert "e" not in shown
    # The same three significant digits as .2e asked for: the shown number is the value
    # rounded to them, and it has no more digits than that beyond its integer part.
    assert float(shown.replace(",", "")) == pytest.approx(float(f"{value:.2e}"), rel=1e-12)
    digits = shown.replace(",", "").replace("-", "").replace(".", "").lstrip("0")
    assert len(digits) <= max(3, len(str(int(abs(value)))))


def test_exact_zeros_read_as_zero():
    assert format_number(0.0, ".1e") == "0"
    assert format_number(-0.0, ".3e") == "0"
    assert format_number(0.0, "") == "0"
    assert format_number(0.0, ".3g") == "0"
    assert format_number(0, "d") == "0"
    # A fixed number of decimals is kept: a column of 0.50, 0.00 lines up.
    assert format_number(0.0, ".2f") == "0.00"


def test_other_formats_and_values_are_pythons():
    assert format_number(1234567, ",d") == "1,234,567"
    assert format_number(0.4567, ".1%") == "45.7%"
    assert format_number("GPT-2", "s") == "GPT-2"
    assert format_number(math.inf, ".2e") == "inf"
    assert format_number(True, "") == "True"


def test_tables_align_numbers_right_and_words_left():
    rows = [
        {"model": "GPT-2 small", "d": 768, "share": 0.455, "gap": 0.0, "note": "—", "mult": "1.3"},
        {"model": "LLaMA 7B", "d": 4096, "share": 0.6, "gap": 1.1e-16, "note": "tied", "mult": "—"},
    ]
    table = MarkdownTable(
        rows,
        [
            ("model", "model", "s"),
            ("d_model", "d", ",d"),
            ("FFN", "share", ".1%"),
            ("gap", "gap", ".1e"),
            ("note", "note", "s"),
            ("multiplier", "mult", str),
        ],
    )
    header, rule, first, second = table._repr_markdown_().split("\n")
    assert rule == "| :--- | ---: | ---: | ---: | :--- | ---: |"
    assert first == "| GPT-2 small | 768 | 45.5% | 0 | — | 1.3 |"
    assert second == "| LLaMA 7B | 4,096 | 60.0% | 1.1e-16 | tied | — |"

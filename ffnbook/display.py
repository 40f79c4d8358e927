"""Small display objects that myst-nb renders in the built pages, and the book's number format."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ._checks import describe, require_instance, require_sequence

#: The smallest size written in plain digits although the format asks for scientific
#: notation; below it the notation helps (1.1e-16 reads better than 0.00000000000000011).
FIXED_FROM = 1e-3
#: The size from which scientific notation is kept again (3.14e+23 FLOPs).
FIXED_BELOW = 1e6


def format_number(value, spec: str) -> str:
    """``format(value, spec)``, as the book prints numbers.

    A number asked for in scientific notation (``spec`` ends in ``e`` or ``E``)
    keeps it only where it helps, below :data:`FIXED_FROM` and from
    :data:`FIXED_BELOW` on. In between it is written in plain digits with the same
    number of significant digits (digits grouped by commas). An exact zero is ``0``,
    not ``0.0e+00``, in scientific and general formats and with no format at all
    (``str(0.0)`` is ``0.0``); a fixed format (``.2f``, ``.1%``) keeps its digits.
    Every other ``spec`` is Python's own.

    >>> format_number(1.05e-15, ".2e"), format_number(0.0, ".1e"), format_number(-0.0, "")
    ('1.05e-15', '0', '0')
    >>> format_number(0.0, ".2f"), format_number(0.25, "")
    ('0.00', '0.25')
    >>> format_number(2.0, ".1e"), format_number(0.99, ".1e"), format_number(0.00123, ".2e")
    ('2.0', '0.99', '0.00123')
    >>> format_number(12345.0, ".2e"), format_number(3.14e23, ".2e"), format_number(1234, ",d")
    ('12,300', '3.14e+23', '1,234')
    """
    require_instance(spec, "spec", str, "a format spec (str) such as '.2e'")
    try:
        format(value, spec)
    except (TypeError, ValueError) as error:
        raise ValueError(f"spec {spec!r} cannot format {describe(value)}: {error}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return format(value, spec)
    if value == 0 and (spec == "" or spec[-1] in "eEgG"):
        return "0"
    match = re.fullmatch(r"(?P<head>.*?)(?:\.(?P<precision>\d+))?(?P<type>[eE])", spec)
    if match is None or match["head"] not in ("", ","):
        return format(value, spec)
    if not FIXED_FROM <= abs(value) < FIXED_BELOW:
        return format(value, spec)
    significant = int(match["precision"] if match["precision"] is not None else 6) + 1
    # The value rounded to that many significant digits, then its decimals from its size.
    rounded = float(format(value, f".{significant - 1}e"))
    if not FIXED_FROM <= abs(rounded) < FIXED_BELOW:
        return format(value, spec)
    decimals = max(0, significant - 1 - math.floor(math.log10(abs(rounded))))
    return format(rounded, f",.{decimals}f")


def readable(cls):
    """Class decorator: a named tuple of results that Jupyter shows one field per line
    once it is longer than a line, floats to six significant digits (its ``repr``, and
    so its exact values, stay as they are).

    >>> from typing import NamedTuple
    >>> @readable
    ... class Gap(NamedTuple):
    ...     max_abs_diff: float
    ...     relative_to_largest: float
    ...     in_eps_of_largest: float
    ...     positions_compared: int
    >>> from IPython.lib.pretty import pretty
    >>> print(pretty(Gap(1.0547118733938987e-15, 1.405882410293109e-15, 6.3315314991227805, 5)))
    Gap(
        max_abs_diff=1.05471e-15,
        relative_to_largest=1.40588e-15,
        in_eps_of_largest=6.33153,
        positions_compared=5)
    >>> @readable
    ... class Change(NamedTuple):
    ...     changed_position: float
    ...     other_positions: float
    >>> print(pretty(Change(1.1182646742075208, 0.0)))  # one line when it fits
    Change(changed_position=1.11826, other_positions=0.0)
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise TypeError(f"cls must be a NamedTuple class, got {describe(cls)}")

    def _repr_pretty_(self, p, cycle) -> None:
        name = type(self).__name__
        if cycle:
            p.text(f"{name}(...)")
            return
        with p.group(4, f"{name}(", ")"):
            for i, field in enumerate(self._fields):
                if i:
                    p.text(",")
                    p.breakable()
                else:
                    p.breakable("")
                value = getattr(self, field)
                p.text(f"{field}=")
                p.pretty(float(f"{value:.6g}") if isinstance(value, float) else value)

    cls._repr_pretty_ = _repr_pretty_
    return cls


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Text that is a number as shown ("1,234", "0.50", "12.5%", "1.1e-16", "—" for none).
_NUMERIC_TEXT = re.compile(r"[-+\u2212]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?%?|\u2014|-|")


def _escape(text: str) -> str:
    """Text safe inside a Markdown table cell: ``|`` escaped (GFM tables honour ``\\|`` even inside code
    spans), line breaks turned into spaces."""
    return text.replace("|", "\\|").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def _column(column, label: str) -> tuple:
    """One ``(header, key, format)`` triple: a text header, a key, and a format spec or a function."""
    if not isinstance(column, (tuple, list)) or len(column) != 3:
        raise TypeError(f"{label} must be a (header, key, format) triple, got {describe(column)}")
    header, key, fmt = column
    if not isinstance(header, str):
        raise TypeError(f"{label}'s header must be text, got {describe(header)}")
    if not (isinstance(fmt, str) or callable(fmt)):
        raise TypeError(f"{label}'s format must be a format spec (str) or a function, got {describe(fmt)}")
    return tuple(column)


class MarkdownTable:
    """A table that Jupyter and myst-nb display as Markdown.

    ``columns`` is a list of ``(header, key, format)`` triples: each row's
    ``row[key]`` is shown through ``format`` (a format spec such as ``",d"``,
    written by :func:`format_number`, or a function returning text). A column
    of numbers is right-aligned, so digits line up; a column of words is
    left-aligned, as text is read.

    >>> t = MarkdownTable([{"name": "a", "n": 1234, "r": 0.5}],
    ...                   [("name", "name", "s"), ("n", "n", ",d"), ("ratio", "r", ".2f")])
    >>> print(t._repr_markdown_())
    | name | n | ratio |
    | :--- | ---: | ---: |
    | a | 1,234 | 0.50 |

    A ``|`` in a cell is escaped, so it cannot split the cell, and a line break
    becomes a space:

    >>> print(MarkdownTable([{"a": "x|y"}], [("a|b", "a", "s")])._repr_markdown_())
    | a\\|b |
    | :--- |
    | x\\|y |
    """

    def __init__(self, rows: Sequence[dict], columns: Sequence[tuple[str, str, str | Callable]]):
        rows = require_sequence(rows, "rows", expected="a list of dicts, one per row",
                                item=lambda r, label: require_instance(r, label, dict, "a dict"))
        columns = require_sequence(columns, "columns", expected="a list of (header, key, format) triples",
                                   item=_column)
        for header, key, _ in columns:
            missing = [i for i, row in enumerate(rows) if key not in row]
            if missing:
                raise ValueError(f"column {header!r} needs key {key!r}, missing in rows {missing}")
        self.rows = rows
        self.columns = columns
        self._cells = [[self._cell(row[key], fmt, header, i) for header, key, fmt in columns]
                       for i, row in enumerate(rows)]  # formatted now, so a bad format fails here, not on display

    @staticmethod
    def _cell(value, fmt, header: str = "", row: int = 0) -> str:
        try:
            text = fmt(value) if callable(fmt) else format_number(value, fmt)
        except (TypeError, ValueError) as error:
            raise ValueError(f"column {header!r} cannot format row {row}'s value {value!r} with {fmt!r}: {error}") \
                from None
        if not isinstance(text, str):
            raise TypeError(f"column {header!r}: its format function returned {type(text).__name__}, not text")
        return _escape(text)

    def _is_numeric(self, column: int) -> bool:
        """Whether a column holds numbers: every value is one, or is shown as one."""
        key = self.columns[column][1]
        return all(_is_number(row[key]) or (row[key] is None or isinstance(row[key], str))
                   and _NUMERIC_TEXT.fullmatch(cells[column].strip()) is not None
                   for row, cells in zip(self.rows, self._cells))

    def _repr_markdown_(self) -> str:
        align = ["---:" if self._is_numeric(j) else ":---" for j in range(len(self.columns))]
        lines = [
            "| " + " | ".join(_escape(h) for h, _, _ in self.columns) + " |",
            "| " + " | ".join(align) + " |",
        ]
        for cells in self._cells:
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def __repr__(self) -> str:  # plain-text fallback, e.g. in a terminal
        return self._repr_markdown_()

"""Small display objects that myst-nb renders in the built pages."""

from __future__ import annotations

from typing import Callable, Sequence

from ._checks import describe, require_instance, require_sequence


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
    ``row[key]`` is shown through ``format`` (a format spec such as ``",d"``
    or a function returning text).

    >>> t = MarkdownTable([{"n": 1234, "r": 0.5}], [("n", "n", ",d"), ("ratio", "r", ".2f")])
    >>> print(t._repr_markdown_())
    | n | ratio |
    | ---: | ---: |
    | 1,234 | 0.50 |

    A ``|`` in a cell is escaped, so it cannot split the cell, and a line break
    becomes a space:

    >>> print(MarkdownTable([{"a": "x|y"}], [("a|b", "a", "s")])._repr_markdown_())
    | a\\|b |
    | ---: |
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
            text = fmt(value) if callable(fmt) else format(value, fmt)
        except (TypeError, ValueError) as error:
            raise ValueError(f"column {header!r} cannot format row {row}'s value {value!r} with {fmt!r}: {error}") \
                from None
        if not isinstance(text, str):
            raise TypeError(f"column {header!r}: its format function returned {type(text).__name__}, not text")
        return _escape(text)

    def _repr_markdown_(self) -> str:
        lines = [
            "| " + " | ".join(_escape(h) for h, _, _ in self.columns) + " |",
            "| " + " | ".join("---:" for _ in self.columns) + " |",
        ]
        for cells in self._cells:
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def __repr__(self) -> str:  # plain-text fallback, e.g. in a terminal
        return self._repr_markdown_()

"""Small display objects that myst-nb renders in the built pages."""

from __future__ import annotations

from typing import Callable, Sequence


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
    """

    def __init__(self, rows: Sequence[dict], columns: Sequence[tuple[str, str, str | Callable]]):
        if not rows:
            raise ValueError("a table needs at least one row")
        for header, key, _ in columns:
            missing = [i for i, row in enumerate(rows) if key not in row]
            if missing:
                raise KeyError(f"column {header!r} needs key {key!r}, missing in rows {missing}")
        self.rows = list(rows)
        self.columns = list(columns)

    @staticmethod
    def _cell(value, fmt) -> str:
        return fmt(value) if callable(fmt) else format(value, fmt)

    def _repr_markdown_(self) -> str:
        lines = [
            "| " + " | ".join(h for h, _, _ in self.columns) + " |",
            "| " + " | ".join("---:" for _ in self.columns) + " |",
        ]
        for row in self.rows:
            cells = (self._cell(row[key], fmt) for _, key, fmt in self.columns)
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def __repr__(self) -> str:  # plain-text fallback, e.g. in a terminal
        return self._repr_markdown_()

"""The words of a numeric problem that the page, the reader notebook and the PDF share.

No Sphinx here: :mod:`bookext.content.problems` (the page) and :mod:`bookext.notebooks.myst_markdown`
(the notebook) both render these pieces, so a problem says the same thing everywhere.
"""

from __future__ import annotations

from typing import Literal

Piece = tuple[Literal["text", "glued", "code"], str]


def answer_text(value: int | float, spec: str | None = None, exact: bool = False) -> str:
    """The answer as the verdict, the notebook and the PDF show it: ``spec`` is a format
    spec; by default an int's digits are grouped and a float has four significant figures,
    but an ``exact`` answer (no tolerance) that is a whole number shows all its digits:
    rounded, it would be a value the problem refuses.

    >>> answer_text(176160768), answer_text(4.5e9), answer_text(2 / 3, ".1%")
    ('176,160,768', '4.5e9', '66.7%')
    >>> answer_text(12288.0), answer_text(12288.0, exact=True)
    ('1.229e4', '12,288')
    """
    if spec is None and exact and float(value).is_integer():
        value = int(value)
    if spec is None:
        spec = "," if isinstance(value, int) else ".4g"
    text = format(value, spec)
    if "e" in text and spec.endswith("g"):  # 4.123e+09 -> 4.123e9
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def examples(answer: int | float, unit: str) -> tuple[str, ...]:
    """Forms the answer field reads, as examples of a number of the answer's kind."""
    if abs(answer) >= 1e4:
        return ("1.2e9", "1,200,000,000", "1.2 GB" if unit == "bytes" else "1.2B")
    if abs(answer) < 1:
        return ("0.75", "3/4", "75%")
    return ("12.5", "25/2", "1.25e1")


def rule(answer: int | float, tolerance: float, unit: str) -> list[Piece]:
    """What counts as right, and how to type it: text, the glued tolerance, code examples."""
    pieces: list[Piece] = [("text", f"Answer in {unit}; " if unit else "")]
    if tolerance:
        pieces += [
            ("text", "right within " if unit else "Right within "),
            ("glued", f"±{tolerance * 100:g}%"),
            ("text", " of the value this page computed. Type it as "),
        ]
    else:
        pieces.append(
            ("text", ("only" if unit else "Only") + " the exact value this page computed is right. Type it as ")
        )
    shapes = examples(answer, unit)
    for i, example in enumerate(shapes):
        pieces.append(("code", example))
        pieces.append(("text", ", " if i < len(shapes) - 2 else " or " if i == len(shapes) - 2 else "."))
    return [p for p in pieces if p[1]]

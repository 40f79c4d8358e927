"""Listings of the package's code (bookext.content.listings): roles become names, a method shows
its class, a cut-out piece is dedented; and the directive does it in a real build."""

from __future__ import annotations

import textwrap

from bookext.content.listings import plain_roles, readable_listing

SOURCE = textwrap.dedent('''\
    class Block(nn.Module):
        """A block; see :class:`~ffnbook.tiny_transformer.CausalSelfAttention`."""

        def forward(self, x):
            """Run :func:`ffnbook.ffn` on ``x``; :meth:`the norm <Block.norm>` first."""
            for step in range(3):
                x = x + 1
            return x
    ''')


def test_roles_read_as_the_names_they_show():
    assert plain_roles(":class:`~a.b.C`, :py:func:`a.f`, :data:`the table <a.TABLE>`") == "`C`, `a.f`, `the table`"
    assert plain_roles("no roles, ``code`` and `x`") == "no roles, ``code`` and `x`"


def test_a_method_is_shown_inside_its_class():
    method = "\n".join(SOURCE.splitlines()[3:8]) + "\n"
    shown = readable_listing(method, SOURCE, {"pyobject": "Block.forward"})
    lines = shown.splitlines()
    assert lines[:3] == ["class Block(nn.Module):", "    ...", ""]
    assert lines[3] == "    def forward(self, x):"
    assert '"""Run `ffnbook.ffn` on ``x``; `the norm` first."""' in shown
    compile(shown, "listing", "exec")  # valid Python as shown


def test_a_piece_of_a_body_is_dedented_to_its_own_margin():
    piece = "        for step in range(3):\n            x = x + 1\n"
    assert readable_listing(piece, SOURCE, {"start-at": "for step"}) == "for step in range(3):\n    x = x + 1\n"
    # An explicit :dedent: is the author's choice, left to Sphinx.
    assert readable_listing(piece, SOURCE, {"dedent": 4}) == piece

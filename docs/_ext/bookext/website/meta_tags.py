"""A ``<meta>`` tag for a page's head, its value escaped (the policy and the link previews)."""

from __future__ import annotations

import html


def meta_tag(name: str, value: str, attr: str = "property") -> str:
    return f'<meta {attr}="{name}" content="{html.escape(value)}" />'


def append_meta_tags(context: dict, tags: list[str]) -> None:
    """Add ``tags`` to the end of the page's ``metatags``, one a line."""
    context["metatags"] = context.get("metatags", "") + "\n" + "\n".join(tags)

"""The header's repository menu ("Suggest edit", "Open issue"), with icons the theme still knows.

The buttons come from the theme's options (``conf.py``: one ``REPOSITORY_URL``). The book
theme names the edit button's icon by its Font Awesome 5 alias, which the theme's Font
Awesome 6 (whose icons :mod:`bookext.website.postprocess` inlines as SVG) knows by a new
name: it is renamed here.
"""

from __future__ import annotations

from sphinx.application import Sphinx

RENAMED_ICONS = {"fas fa-pencil-alt": "fas fa-pencil"}


def _rename_icons(buttons: list) -> None:
    for button in buttons:
        if button.get("icon") in RENAMED_ICONS:
            button["icon"] = RENAMED_ICONS[button["icon"]]
        _rename_icons(button.get("buttons", []))


def rename_header_icons(app: Sphinx, pagename, templatename, context, doctree) -> None:
    _rename_icons(context.get("header_buttons", []))


def setup(app: Sphinx) -> dict:
    # After the book theme's handler (priority 500) has put the buttons in the context.
    app.connect("html-page-context", rename_header_icons, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

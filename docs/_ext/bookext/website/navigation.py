"""The sidebar toggles, finished: ``docs/_static/navigation.js``.

The drawers and the desktop sidebar are the themes' own: pydata-sphinx-theme opens
a modal ``<dialog>`` for each toggle under 992 px and closes it on Escape or a tap
beside it; sphinx-book-theme hides and shows the sidebar above. (That they work at
all depends on ``navbar_persistent`` in ``conf.py``: see the comment there.) The
script (deferred, about 1 KiB gzipped, no dependency) adds what the themes leave undone:

* **Focus for keyboard readers.** sphinx-book-theme blurs a toggle on every click, to
  drop its tooltip; a keyboard reader was left with the focus on the page's body
  (a second Enter did nothing, a screen reader lost its place). After a toggle pressed
  with Enter or Space the focus stays on it, and comes back to it when its drawer
  closes.
* **A close button in each drawer.** The themes' drawers close only on Escape or a tap
  on the dimmed page beside them, neither of which a phone reader is told about; a
  labelled 44 px button in a row of its own at the drawer's top closes it too.
* **A section link closes its drawer.** A link in the page's contents scrolled the
  page behind the still open drawer, so a tap seemed to do nothing; now the drawer
  closes and the reader sees the section.

``tests/test_browser_navigation.py`` checks all of it in Chromium, with touch and
with the keyboard.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict:
    app.add_js_file("navigation.js", loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}

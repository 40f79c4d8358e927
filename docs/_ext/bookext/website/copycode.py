"""Copy buttons on the site's code cells: ``docs/_static/copycode.js`` and a few CSS rules.

The script (deferred, about 1 KiB, 0.5 KiB gzip-compressed, no dependency, no
network) adds a "Copy" button to every code block of a page's article except
cell outputs. The button is a real ``<button>`` (keyboard reachable, named
"Copy code") in a bar of its own above the code, so it never covers a line. It
copies the block's code, and for a session with prompts (``>>>`` and ``...``,
or a shell's ``$``) only the lines a reader types, without prompts or output;
it shows "Copied" and says it to screen readers through a ``role="status"`` live
region. The clipboard API needs a secure context, which HTTPS hosting,
``localhost`` and ``file://`` all are.
sphinx-copybutton was not used: it loads clipboard.js besides its own script
and an icon image per button, and reports a copy only in a CSS tooltip
(``data-tooltip``), which screen readers are not told about.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict:
    app.add_js_file("copycode.js", loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}

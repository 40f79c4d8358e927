"""Executing the book's pages: when a page's code runs again, and how it runs.

* :mod:`bookext.execution.engine` -- the Sphinx side and the rules: one build's state, which
  pages execute and when (beside reading), and the event handlers.
* :mod:`bookext.execution.records` -- the policy, pure functions and files only: what a page's
  outputs depend on, why a record is stale, the record store.
* :mod:`bookext.execution.kernels` -- the processes: fresh kernels forked from a warm template,
  several at a time; every jupyter_client override.
* :mod:`bookext.execution.kernel_template` -- the template kernel's own code, and the probe that
  records, inside each kernel, what the page used.
* :mod:`bookext.execution.mystnb_adapter` -- the one place that plugs into myst-nb (its ``cache``
  mode client, reading a page as myst-nb will); the engine hands it what it needs, so it never
  imports the engine.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.execution.engine")
    return {"parallel_read_safe": True, "parallel_write_safe": True}

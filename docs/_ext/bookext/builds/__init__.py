"""Builds of one build folder: one at a time, an incremental one like a clean one, small ones fast.

* :mod:`bookext.builds.buildlock` -- one build at a time in a build folder.
* :mod:`bookext.builds.incremental` -- an incremental or interrupted build publishes what a
  clean one would.
* :mod:`bookext.builds.buildspeed` -- fewer forks and collections in a small rebuild; figures
  numbered only after a page was read.
* :mod:`bookext.builds.pagestate` -- what a step that reads every built page made of each, kept
  for the next build, so it redoes its work only for pages that changed (no handlers: the
  steps of :mod:`bookext.website` use it).
"""

from __future__ import annotations

from sphinx.application import Sphinx

PARTS = ("incremental", "buildlock", "buildspeed")


def setup(app: Sphinx) -> dict:
    for part in PARTS:
        app.setup_extension(f"bookext.builds.{part}")
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""docs/contributing.md's table of the book's Sphinx event handlers is the code's: every
handler bookext.setup() connects, with its priority, in the order Sphinx calls them."""

from __future__ import annotations

import importlib
import re

from sitecheck import DOCS

#: The events in the order a build emits them (per page events where they first occur).
EVENT_ORDER = [
    "config-inited",
    "builder-inited",
    "env-get-outdated",
    "env-before-read-docs",
    "env-purge-doc",
    "doctree-read",
    "env-merge-info",
    "env-updated",
    "env-get-updated",
    "write-started",
    "doctree-resolved",
    "html-page-context",
    "html-collect-pages",
    "build-finished",
]


class Recorder:
    """Stands for the Sphinx application: records what bookext's setup() functions connect."""

    def __init__(self) -> None:
        self.handlers: list[tuple[str, int, str]] = []
        self.extensions: set[str] = set()
        self.confdir = "."

    def connect(self, event: str, handler, priority: int = 500) -> None:
        self.handlers.append((event, priority, f"{handler.__module__}.{handler.__qualname__}"))

    def setup_extension(self, name: str) -> None:
        # The book's parts only: a part may set up myst-nb first, whose handlers are not the book's.
        if name.split(".")[0] == "bookext" and name not in self.extensions:
            self.extensions.add(name)
            importlib.import_module(name).setup(self)

    def __getattr__(self, name):  # add_config_value, add_node, add_role...: nothing to record
        return lambda *args, **kwargs: None


def connected() -> list[tuple[str, int, str]]:
    app = Recorder()
    app.setup_extension("bookext")

    def when(row):
        event = row[0]
        return (EVENT_ORDER.index(event) if event in EVENT_ORDER else len(EVENT_ORDER), event, row[1])

    return sorted(app.handlers, key=when)  # stable: equal priorities keep the order of setup


def test_the_handler_table_lists_every_handler_bookext_connects():
    text = (DOCS / "contributing.md").read_text(encoding="utf-8")
    table = re.search(
        r"<!-- handlers:[^>]*-->\n\| event \| priority \| handler \|\n\| --- \| --- \| --- \|\n"
        r"(.*?)<!-- /handlers -->",
        text,
        re.S,
    )
    assert table, "docs/contributing.md lost its handler table"
    documented = [
        tuple(cell.strip().strip("`") for cell in line.strip("|").split("|"))
        for line in table.group(1).strip().split("\n")
    ]
    expected = [(event, str(priority), handler) for event, priority, handler in connected()]
    assert documented == expected, "update the table in docs/contributing.md:\n" + "\n".join(
        f"| `{e}` | {p} | `{h}` |" for e, p, h in expected
    )

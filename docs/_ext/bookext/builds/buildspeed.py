"""Eight costs of Sphinx and its theme that dominate a small rebuild, and what the book does about them.

* **Worker processes.** Sphinx 9 reads and writes with forked workers (``-j``) whatever the
  number of pages; each worker is a fork of the main process whose environment is pickled
  back afterwards. For a rebuild that re-reads a few pages (an edit to one module of
  ffnbook: the page that imports it and its API page) that costs more than it saves
  (measured: 0.9 s of a 7.7 s rebuild). Earlier Sphinx versions read in parallel only above
  five pages; the book restores that rule, for reading and writing. The book's own
  execution is not affected: it sizes its kernel pool from ``-j`` before this runs.
  When pages are written in parallel, Sphinx forks ``-j`` minus one workers and keeps the
  main process to resolve each page's doctree for them; with ``-j 2`` that is a single
  worker, and a clean build wrote its 38 pages on about one core (3.4 s). The book gives
  writing ``-j`` workers beside the main process.
* **Garbage collection.** Every build, even one with nothing to do, unpickles the doctree
  of every page (Sphinx numbers the figures across the whole book) and the collector keeps
  traversing the environment it loaded, which is alive until the end. The objects alive
  when the build starts are frozen out of collection (``gc.freeze``), the youngest
  generation is collected less often during the build, and the final collection at exit
  is skipped (measured: a no-op rebuild 3.0 s → 1.7 s). Garbage with reference cycles is
  still collected during the build, only less often; when the build finishes the settings
  are restored and the frozen objects handed back to the collector, so a process that
  runs several builds (the tests) does not keep them.
* **Figure numbers.** To number the figures across the book, Sphinx unpickles and walks the
  doctree of every page on every build, even one that read no page (measured: 1.1-1.3 s of
  CPU of a no-op rebuild's 6, on a loaded machine). The numbers depend only on the pages'
  doctrees and tables of contents, which change only when a page is read or removed; the
  saved environment holds the numbers the last such build found. The book numbers the
  figures only in a build that read or removed a page and changed what the numbering walks
  (:func:`renumbered_pages`): each page read leaves its outline (sections, numbered figures,
  tables of contents, in order, by id: :func:`numbering_outline`), and when every page read
  has the outline it had, the numbers are the saved ones. A leaf-module edit re-reads a page
  and its API page and changes neither's figures (measured on the book: 1.5 s of a ~10 s
  rebuild spent walking every page).

* **Templates.** Every build compiles the theme's ~40 Jinja templates from their source
  before writing its first page, even a no-op build that writes only the index and search
  pages (measured: 0.58 s of a no-op's 5.8 s under the profiler). The HTML builders keep the
  compiled templates in ``<doctrees>/jinja-bytecode`` (Jinja's own file cache, written
  atomically, keyed by each template's source: an edited template is compiled again).

* **The chapter list, drawn twice.** Before writing a page, pydata-sphinx-theme renders each
  template of each header, footer and sidebar slot to drop those that come out empty, then
  renders the page, so the primary sidebar's chapter list (the book theme's
  ``sbt-sidebar-nav.html``, the whole table of contents, the slowest template; never empty)
  was drawn twice per page written (measured: 2.75 s of a leaf-edit rebuild's 13.8 s under the
  profiler went to that check). The book takes the list out of the sidebar's templates just
  before the check and puts it back, last as the theme has it, just after
  (:func:`sidebar_nav_out_of_the_empty_check`); if the theme stops listing it last, the build
  fails, naming the sidebar it found.

* **Toctree parents.** Sphinx writes again every page whose toctree lists a page it writes,
  since the child's title or sections may have changed: a leaf-module edit re-reads
  mixture-of-experts and api/moe, writes them and the execution-statistics page, and so wrote
  index and api too (0.60 s of a 6.1 s leaf-edit rebuild; make bench's leaf-edit overhead,
  medians of 3 on an idle machine: 4.6 s before, 4.3 s after). What a parent draws of
  a child is its title and its table of contents (``env.titles``, ``env.tocs``) and, with
  numbered sections, their numbers. The book keeps each listed page's title, contents and
  section numbers as they were before reading (:func:`toc_fingerprint`); where they come out
  the same, the page's entry in ``env.files_to_rebuild`` is held back from the write (after
  the environment was saved, which keeps it) and put back when the build finishes
  (:func:`toctree_parents_only_when_a_title_changed`). Every page's navigation draws the
  same titles, so a title that changes still rewrites only the parents, as before.

* **The chapter list's copies.** To draw the chapter list (``toctree(titles_only=True)``),
  Sphinx deep-copies every listed page's whole table of contents, every section and, on the
  API pages, every documented object, then keeps only each page's title and the toctrees
  under it: ~50 ms per page written (py-spy). In a leaf-edit rebuild (py-spy, one run each) that
  drawing took 260 ms of samples before and too little to sample after; its six pages took
  1.10-1.44 s to write before and 1.12-1.16 s after (three interleaved runs each, idle
  machine), so most of what it saves there hides in the noise. The book hands Sphinx those
  titles-only tables of contents, cut once per build (:func:`titles_only_toc`, Sphinx's own
  rule), for the duration of a titles-only call (:func:`chapter_list_from_titles`); every
  other call sees the full ones. The first chapter list drawn in each process is also drawn
  Sphinx's way and the two compared: if they differ, the build fails, naming the page.

* **pybtex's plugins.** pybtex finds each plugin (a style, a backend) by scanning every
  installed package's entry points, on every lookup, and sphinxcontrib-bibtex looks one up
  per citation it resolves: 31 lookups, 0.26 s of a leaf-edit rebuild. The book looks up
  the plugins its citations use once per build, in one scan (:data:`PYBTEX_PLUGINS`), and
  puts each in pybtex's registry of run-time plugins, which pybtex consults first, as the
  class its entry point names: the lookups return what they returned, without the scan.

What it saves, the first three together (``make html`` with nothing to do, this module set up or
left out of :mod:`bookext.builds`, medians of 3 after a settling build, load 2.3-3.6 on two
shared cores): 4.3 s of CPU (4.3 s wall) with it, 6.6 s of CPU (8.4 s wall) without, so
2.3 s of CPU and 4.1 s of waiting per no-op rebuild: kept, against about 130 lines that
rely on Sphinx internals (``app.events.listeners``, ``TocTreeCollector``'s numbering
methods, ``app.parallel``, ``env.tocs`` during a titles-only ``toctree()``) and pybtex's
(its run-time plugin registry), a change in which fails the build
(:func:`number_figures_only_after_reading`, :func:`pybtex_plugins_found_once`) or
tests/test_ext_buildspeed.py.
"""

from __future__ import annotations

import atexit
import gc
from pathlib import Path

import jinja2
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.domains.std import StandardDomain
from sphinx.environment.collectors.toctree import TocTreeCollector
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Above this many pages to read, Sphinx's worker processes pay for themselves.
MOST_PAGES_READ_IN_ONE_PROCESS = 5

#: Allocations between collections of the youngest generation during a build (Python: 700).
BUILD_GC_THRESHOLD = 100_000


def one_process_for_few_pages(app: Sphinx, env, docnames: list[str]) -> None:
    if app.parallel > 1 and len(docnames) <= MOST_PAGES_READ_IN_ONE_PROCESS:
        logger.info("ffnbook: %d pages to read: reading and writing in one process", len(docnames))
        app.parallel = 1


def as_many_writers_as_jobs(app: Sphinx, builder) -> None:
    if builder.parallel_ok and app.parallel > 1:
        app.parallel += 1  # Sphinx writes with parallel - 1 workers


def collect_less(app: Sphinx) -> None:
    app.ffnbook_gc_threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(BUILD_GC_THRESHOLD, *app.ffnbook_gc_threshold[1:])


def collect_as_before(app: Sphinx, exception) -> None:
    threshold = getattr(app, "ffnbook_gc_threshold", None)
    if threshold is None:
        return
    gc.set_threshold(*threshold)
    gc.unfreeze()


def number_figures_only_after_reading(app: Sphinx) -> None:
    """Take the ``env-get-updated`` handler of Sphinx's table-of-contents collector, which
    numbers sections and figures, so that :func:`renumbered_pages` calls it when a page was
    read or removed; fail the build if Sphinx no longer has exactly one such handler."""
    handlers = [
        listener
        for listener in app.events.listeners.get("env-get-updated", ())
        if isinstance(getattr(listener.handler, "__self__", None), TocTreeCollector)
    ]
    if len(handlers) != 1:
        raise ExtensionError(
            "bookext.builds.buildspeed: expected one env-get-updated handler of Sphinx's TocTreeCollector, "
            f"found {len(handlers)}: Sphinx changed (see number_figures_only_after_reading)"
        )
    app.disconnect(handlers[0].id)
    app.ffnbook_toc_collector = handlers[0].handler.__self__
    app.ffnbook_pages_read = False
    app.ffnbook_purged = {}
    app.ffnbook_tocs_before = {}
    app.ffnbook_numbers_before = {}


def note_page_read_or_removed(app: Sphinx, env, docname: str) -> None:
    """Sphinx purges every page it is about to read, and every removed page: keep what the
    numbering knew of it (before the collector's own purge handler drops its numbers)."""
    app.ffnbook_pages_read = True
    outlines = getattr(env, "ffnbook_numbering_outlines", {})
    app.ffnbook_purged[docname] = (outlines.pop(docname, None), env.toc_fignumbers.get(docname))


def toc_fingerprint(env, docname: str) -> tuple | None:
    """What a toctree that lists ``docname`` draws of it: its title, its table of contents and
    their section numbers."""
    if docname not in env.titles or docname not in env.tocs:
        return None
    numbers = sorted(env.toc_secnumbers.get(docname, {}).items())
    return env.titles[docname].pformat(), env.tocs[docname].pformat(), numbers


def note_tocs_before_reading(app: Sphinx, env, docnames: list[str]) -> None:
    """env-before-read-docs: what the pages about to be read look like in a toctree, and every
    page's section numbers (a page not read keeps its title and contents, not its numbers)."""
    app.ffnbook_tocs_before = {name: toc_fingerprint(env, name) for name in docnames}
    app.ffnbook_numbers_before = dict(env.toc_secnumbers)


def toctree_parents_only_when_a_title_changed(app: Sphinx, builder) -> None:
    """write-started: hold back the toctree parents of each page whose title, contents and
    section numbers are as they were before reading (Sphinx adds the parents next)."""
    env = builder.env
    read, app.ffnbook_tocs_before = app.ffnbook_tocs_before, {}
    numbers, app.ffnbook_numbers_before = app.ffnbook_numbers_before, {}
    app.ffnbook_held_parents = {}
    for docname in list(env.files_to_rebuild):
        if docname in read:
            same = read[docname] is not None and read[docname] == toc_fingerprint(env, docname)
        else:
            same = numbers.get(docname) == env.toc_secnumbers.get(docname)  # not read: it was there before
        if same:
            app.ffnbook_held_parents[docname] = env.files_to_rebuild.pop(docname)


def parents_back(app: Sphinx, exception) -> None:
    """build-finished: the environment's toctree parents as they were."""
    app.env.files_to_rebuild.update(getattr(app, "ffnbook_held_parents", {}))
    app.ffnbook_held_parents = {}


def numbering_outline(env, node) -> tuple:
    """What Sphinx's figure numbering reads of a page (``TocTreeCollector.assign_figure_numbers``
    walks exactly these): its sections, its captioned enumerable nodes (figures, tables, code
    blocks, equations) and its tables of contents, nested and in order, by id."""
    outline = []
    for child in node.children:
        if isinstance(child, nodes.section):
            outline.append(("section", child["ids"][0] if child["ids"] else "", numbering_outline(env, child)))
        elif isinstance(child, addnodes.toctree):
            outline.append(("toctree", tuple(name for _, name in child["entries"])))
        elif isinstance(child, nodes.Element):
            figtype = next(
                (
                    kind
                    for domain in env.domains.sorted()
                    if (kind := domain.get_enumerable_node_type(child))
                    and (not isinstance(domain, StandardDomain) or domain.get_numfig_title(child))
                ),
                None,
            )
            if figtype and child["ids"]:
                outline.append(("figure", figtype, child["ids"][0]))
            outline.extend(numbering_outline(env, child))
    return tuple(outline)


def remember_outline(app: Sphinx, doctree) -> None:
    if not hasattr(app.env, "ffnbook_numbering_outlines"):
        app.env.ffnbook_numbering_outlines = {}
    app.env.ffnbook_numbering_outlines[app.env.docname] = numbering_outline(app.env, doctree)


def merge_outlines(app: Sphinx, env, docnames, other) -> None:
    """Outlines of pages read by Sphinx's worker processes."""
    if not hasattr(env, "ffnbook_numbering_outlines"):
        env.ffnbook_numbering_outlines = {}
    theirs = getattr(other, "ffnbook_numbering_outlines", {})
    env.ffnbook_numbering_outlines.update({name: theirs[name] for name in docnames if name in theirs})


def renumbered_pages(app: Sphinx, env) -> list[str]:
    """The pages whose section or figure numbers changed: Sphinx's collector, after a page was
    read or removed and its outline changed (or was never seen); otherwise the sections alone
    are numbered again (from the tables of contents: cheap) and the figures keep the numbers
    the saved environment holds."""
    collector = app.ffnbook_toc_collector
    purged, app.ffnbook_purged = app.ffnbook_purged, {}
    if not app.ffnbook_pages_read:
        return collector.assign_section_numbers(env)
    app.ffnbook_pages_read = False
    outlines = getattr(env, "ffnbook_numbering_outlines", {})
    if not env.config.numfig or any(old is None or outlines.get(name) != old for name, (old, _) in purged.items()):
        return collector.get_updated_docs(app, env)
    for name, (_, numbers) in purged.items():
        if numbers is not None:
            env.toc_fignumbers[name] = numbers
    return collector.assign_section_numbers(env)


def templates_compiled_once(app: Sphinx) -> None:
    """builder-inited: the HTML builders' Jinja environment keeps compiled templates on disk."""
    environment = getattr(getattr(app.builder, "templates", None), "environment", None)
    if environment is None:  # a builder without HTML templates
        return
    folder = Path(app.doctreedir) / "jinja-bytecode"
    folder.mkdir(parents=True, exist_ok=True)
    environment.bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))


#: The book theme's chapter list, the last template of its primary sidebar.
SIDEBAR_NAV = "sbt-sidebar-nav.html"
#: pydata-sphinx-theme's empty-template check is an html-page-context handler of priority 500.
THEME_EMPTY_CHECK_PRIORITY = 500


def sidebar_nav_out_of_the_empty_check(app: Sphinx, pagename: str, templatename: str, context, doctree) -> None:
    """html-page-context, just before the theme's check: the chapter list leaves the sidebar."""
    sidebars = context.get("sidebars")
    if app.config.html_theme != "sphinx_book_theme" or not sidebars:  # another theme; a page without a sidebar
        return
    if sidebars[-1] != SIDEBAR_NAV:
        raise ExtensionError(f"buildspeed: the primary sidebar no longer ends with {SIDEBAR_NAV}: {sidebars}")
    context["sidebars"] = sidebars[:-1]
    context["ffnbook_sidebar_nav_held"] = True


def sidebar_nav_back(app: Sphinx, pagename: str, templatename: str, context, doctree) -> None:
    """html-page-context, just after the theme's check: the chapter list is back, last."""
    if context.pop("ffnbook_sidebar_nav_held", False):
        context["sidebars"] = [*context["sidebars"], SIDEBAR_NAV]


def titles_only_toc(toc: nodes.Element) -> nodes.Element:
    """A page's table of contents as Sphinx draws it titles only (``_entries_from_toctree``):
    each top-level entry keeps its title and, in place of its sub-list, only the toctrees
    found in it; without any, no sub-list. Copies only what it keeps. An entry Sphinx cuts
    only after resolving ``only`` directives (a sub-list holding one) is left whole for it."""
    kept = toc.copy()
    for top_level in toc.children:
        whole = not isinstance(top_level, nodes.list_item) or len(top_level) < 2
        if whole or next(top_level[1].findall(addnodes.only), None) is not None:
            kept += top_level.deepcopy()
            continue
        entry = top_level.copy()
        entry += top_level[0].deepcopy()
        if subtrees := list(top_level[1].findall(addnodes.toctree)):
            sublist = top_level[1].copy()
            sublist += [subtree.deepcopy() for subtree in subtrees]
            entry += sublist
        entry += [child.deepcopy() for child in top_level[2:]]
        kept += entry
    return kept


def new_chapter_lists(app: Sphinx, builder) -> None:
    """write-started: this build's tables of contents are cut again when first needed."""
    app.ffnbook_titles_only_tocs = None
    app.ffnbook_chapter_list_checked = False


def chapter_list_from_titles(app: Sphinx, pagename: str, templatename: str, context, doctree) -> None:
    """html-page-context: the page's ``toctree()`` draws a titles-only list from titles-only
    tables of contents (see the module's docstring); the first one in this process is checked."""
    draw = context.get("toctree")
    if draw is None:
        return
    env = app.env

    def toctree(**kwargs):
        if not kwargs.get("titles_only"):
            return draw(**kwargs)
        if getattr(app, "ffnbook_titles_only_tocs", None) is None:
            app.ffnbook_titles_only_tocs = {name: titles_only_toc(toc) for name, toc in env.tocs.items()}
        full, env.tocs = env.tocs, app.ffnbook_titles_only_tocs
        try:
            drawn = draw(**kwargs)
        finally:
            env.tocs = full
        if not getattr(app, "ffnbook_chapter_list_checked", False):
            if drawn != draw(**kwargs):
                raise ExtensionError(
                    f"buildspeed: on {pagename}, the chapter list drawn from titles-only tables of "
                    "contents differs from Sphinx's own: Sphinx changed its titles-only rule "
                    "(see titles_only_toc)"
                )
            app.ffnbook_chapter_list_checked = True
        return drawn

    context["toctree"] = toctree


#: The pybtex plugins the book's citations look up, as (group, name): sphinxcontrib-bibtex's two
#: backends, the name, label and sorting styles of the "plain" bibliography style and the names
#: of the author-year references; the bibliography style itself is ``bibtex_default_style``.
PYBTEX_PLUGINS = (
    ("pybtex.backends", "plaintext"),
    ("pybtex.backends", "docutils"),
    ("pybtex.style.names", "plain"),
    ("pybtex.style.names", "last"),
    ("pybtex.style.labels", "number"),
    ("pybtex.style.sorting", "author_year_title"),
)


def pybtex_plugins_found_once(app: Sphinx) -> None:
    """builder-inited, before sphinxcontrib-bibtex sets up its reference styles: each plugin of
    :data:`PYBTEX_PLUGINS` put in pybtex's registry of run-time plugins, which its lookups
    consult first, as the class its entry point names (or its alias's, where pybtex looks
    next); one registered at run time stays. pybtex's ``register_plugin`` would scan the
    entry points once per plugin itself."""
    if "sphinxcontrib.bibtex" not in app.extensions:
        return
    from importlib.metadata import entry_points

    from pybtex import plugin

    registry = getattr(plugin, "_RUNTIME_PLUGINS", None)
    if not isinstance(registry, dict):
        raise ExtensionError("buildspeed: pybtex.plugin no longer has its _RUNTIME_PLUGINS registry: pybtex changed")
    installed = entry_points()  # one scan for all of them
    for group, name in [*PYBTEX_PLUGINS, ("pybtex.style.formatting", app.config.bibtex_default_style)]:
        for search in (group, f"{group}.aliases"):
            if found := list(installed.select(group=search, name=name)):
                registry.setdefault(search, {}).setdefault(name, found[0].load())
                break


def setup(app: Sphinx) -> dict:
    # After bookext.execution.engine's handler (priority 500), which sizes its kernel pool from -j.
    app.connect("env-before-read-docs", one_process_for_few_pages, priority=900)
    app.connect("env-before-read-docs", note_tocs_before_reading)
    app.connect("write-started", as_many_writers_as_jobs)
    app.connect("write-started", toctree_parents_only_when_a_title_changed)
    app.connect("builder-inited", collect_less)
    app.connect("builder-inited", number_figures_only_after_reading)
    app.connect("builder-inited", templates_compiled_once)
    # Before sphinxcontrib-bibtex's own handlers (priority 500) look up the reference styles' names.
    app.connect("builder-inited", pybtex_plugins_found_once, priority=400)
    app.connect("html-page-context", sidebar_nav_out_of_the_empty_check, priority=THEME_EMPTY_CHECK_PRIORITY - 1)
    app.connect("html-page-context", sidebar_nav_back, priority=THEME_EMPTY_CHECK_PRIORITY + 1)
    app.connect("write-started", new_chapter_lists)
    app.connect("html-page-context", chapter_list_from_titles)
    # Before the table-of-contents collector's own purge handler (priority 500) drops the numbers.
    app.connect("env-purge-doc", note_page_read_or_removed, priority=100)
    # After every other handler that may still change the page's doctree.
    app.connect("doctree-read", remember_outline, priority=999)
    app.connect("env-merge-info", merge_outlines)
    app.connect("env-get-updated", renumbered_pages)
    app.connect("build-finished", parents_back, priority=998)
    app.connect("build-finished", collect_as_before, priority=999)
    # The interpreter's last collection would traverse everything the build left: skip it.
    atexit.unregister(gc.freeze)  # once per process, however many builds it runs
    atexit.register(gc.freeze)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Contracts with upstream: what the book's Sphinx extension (docs/_ext/bookext) relies on in
other projects beyond their documented API, one test per dependency, in ``make check``.

A version bump that breaks one fails here in seconds and names the contract, instead of
failing (or, worse, silently changing) a full build. Each test says which part of bookext
relies on it; when a test fails, follow that part to the new upstream code.
"""

from __future__ import annotations

import inspect

import pytest


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


# --- myst-nb ---------------------------------------------------------------------------------


def test_myst_nb_looks_up_its_cache_mode_client_by_name_on_each_call():
    """bookext.execution.mystnb_adapter replaces ``NotebookClientCache`` in myst_nb.core.execute with its own
    client (the records), which works because ``create_client`` reads the module's name."""
    import myst_nb.core.execute as execute

    assert callable(execute.create_client)
    assert "NotebookClientCache" in inspect.getsource(execute.create_client)
    assert issubclass(execute.NotebookClientCache, execute.base.NotebookClientBase)


def test_myst_nbs_client_base_has_what_the_recorded_client_uses():
    """bookext.execution.mystnb_adapter.recorded_client_class(): start_client, and the attributes it reads and sets."""
    from myst_nb.core.execute.base import ExecutionError, NotebookClientBase

    assert issubclass(ExecutionError, Exception)
    assert "start_client" in vars(NotebookClientBase)
    for name in ("notebook", "path", "nb_config", "logger", "exec_metadata"):
        assert isinstance(getattr(NotebookClientBase, name, None), property) or name in inspect.getsource(
            NotebookClientBase.__init__
        ), name


def test_myst_nbs_reader_and_config_as_the_execution_plan_uses_them():
    """bookext.execution.mystnb_adapter.notebook_of reads a page as myst-nb's parser does, before reading."""
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    assert _parameters(create_nb_reader)[:4] == ["path", "md_config", "nb_config", "content"]
    assert callable(nb_node_to_dict)
    fields = set(NbParserConfig.__dataclass_fields__)
    assert {
        "kernel_rgx_aliases",
        "metadata_key",
        "execution_mode",
        "execution_excludepatterns",
        "execution_timeout",
        "execution_allow_errors",
        "execution_in_temp",
        "execution_raise_on_error",
        "execution_show_tb",
    } <= fields
    assert callable(NbParserConfig.copy)


def test_myst_nb_copies_its_stylesheet_with_one_function():
    """bookext.builds.incremental runs it before the pages are written (myst-nb runs it at build-finished)."""
    from myst_nb.sphinx_ext import add_global_html_resources

    assert _parameters(add_global_html_resources) == ["app", "exception"]


def test_myst_nbs_hidden_cell_node_carries_its_prompts():
    """bookext.website.accessible_markup renders myst-nb's folded cells itself (accessible summary)."""
    from myst_nb.sphinx_ import HideCodeCellNode

    assert "prompt_show" in inspect.getsource(HideCodeCellNode) or "prompt_show" in inspect.getsource(
        __import__("myst_nb.sphinx_", fromlist=["x"])
    )


def test_myst_nbs_glue_pieces_the_book_reuses():
    """bookext.content.figurealt (glue figures' alt text) and bookext.notebooks.reader_notebooks (glued text)."""
    from myst_nb.core.variables import format_plain_text
    from myst_nb.ext.glue.directives import PasteFigureDirective
    from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data

    assert format_plain_text("1234.5", ",.1f") == "1,234.5"
    assert callable(PasteFigureDirective.run) and issubclass(RetrievalError, Exception)
    assert _parameters(retrieve_glue_data)[:2] == ["document", "key"]


# --- jupyter_client ----------------------------------------------------------------------------


def test_jupyter_clients_private_hooks_the_kernel_pool_overrides():
    """bookext.execution.kernels.manager_class overrides two private coroutines of AsyncKernelManager, and
    PromptlyReadyClient calls two private methods of the client."""
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.provisioning import LocalProvisioner

    assert _parameters(AsyncKernelManager._async_finish_shutdown) == ["self", "waittime", "pollinterval", "restart"]
    assert inspect.iscoroutinefunction(AsyncKernelManager._async_pre_start_kernel)
    assert "self.provisioner" in inspect.getsource(AsyncKernelManager._async_pre_start_kernel)
    assert inspect.iscoroutinefunction(AsyncKernelClient._async_is_alive)
    assert callable(AsyncKernelClient._handle_kernel_info_reply)
    assert inspect.iscoroutinefunction(LocalProvisioner.launch_kernel)
    for name in ("pid", "pgid", "process", "connection_info"):
        assert name in inspect.getsource(LocalProvisioner), name


def test_nbclient_asks_for_signal_handlers_and_goes_on_when_the_loop_refuses():
    """bookext.execution.kernels.ExecutorLoop refuses signal handlers, so that a signal stops every page at
    once (StopOnSignal) rather than one kernel (nbclient's handler, one per client, each replacing
    the last). nbclient's ``async_setup_kernel`` asks for SIGINT and SIGTERM handlers and must take
    the RuntimeError as "not possible here" (as it does outside the main thread), on entering and
    on leaving."""
    import asyncio
    import signal

    import nbformat
    from nbclient import NotebookClient

    from bookext.execution.kernels import ExecutorLoop

    asked = []

    class RecordingLoop(ExecutorLoop):
        def add_signal_handler(self, sig, callback, *args):
            asked.append(sig)
            return super().add_signal_handler(sig, callback, *args)

    class RunningKernel:  # a kernel manager whose kernel is running: nothing is started
        has_kernel = True

    client = NotebookClient(nbformat.v4.new_notebook(), km=RunningKernel())
    client.kc = object()  # a connected client: none is made
    entered = []

    async def setup_and_leave() -> None:
        async with client.async_setup_kernel():
            entered.append(True)

    with asyncio.Runner(loop_factory=RecordingLoop) as runner:
        runner.run(setup_and_leave())
    assert asked and set(asked) <= {signal.SIGINT, signal.SIGTERM}  # refused at the first
    assert entered == [True]


def test_nbclient_registers_its_kernel_clean_up_at_exit_and_releases_a_kernel_that_failed_to_start(
    monkeypatch,
):
    """bookext.execution.kernels unregisters ``client._cleanup_kernel`` from atexit once nbclient
    has released the client's kernel manager (``km`` None): nbclient registers exactly that bound
    method when it sets up a kernel, and after a kernel client that fails to start it cleans
    the kernel up itself and lets the manager go (its clean-up at exit would then fail)."""
    import asyncio
    import atexit

    import nbformat
    from nbclient import NotebookClient

    registered = []
    monkeypatch.setattr(atexit, "register", lambda function, *a, **k: registered.append(function))
    monkeypatch.setattr(atexit, "unregister", lambda function: None)

    class FailingChannels:
        def start_channels(self):
            raise RuntimeError("the kernel died before its first reply")

        def stop_channels(self):
            pass

    class StartedKernel:  # a started kernel whose client cannot connect
        has_kernel = True

        def client(self):
            return FailingChannels()

        def is_alive(self):
            return False

        def cleanup_resources(self):
            pass

    client = NotebookClient(nbformat.v4.new_notebook(), km=StartedKernel())

    async def set_up() -> None:
        async with client.async_setup_kernel(cleanup_kc=True):
            pass

    with pytest.raises(RuntimeError, match="died before its first reply"):
        asyncio.run(set_up())
    assert client._cleanup_kernel in registered
    assert client.km is None


# --- Sphinx ------------------------------------------------------------------------------------


def test_sphinxs_search_indexer_keeps_index_entries_where_the_book_restores_them():
    """bookext.builds.incremental restores each page's index entries (sphinx-doc/sphinx#12599)."""
    from sphinx.search import IndexBuilder
    from sphinx.util.index_entries import split_index_msg

    source = inspect.getsource(IndexBuilder)
    for name in (
        "self._index_entries",
        "self._titles",
        "self._mapping",
        "self._title_mapping",
        "env._search_index_index_entries",
    ):
        assert name in source, name
    assert split_index_msg("single", "a; b") == ["a", "b"]
    # The bug the workaround is for: loading a saved index does not bring the entries back.
    # When this fails, Sphinx fixed it: remove the index-entry part of bookext.builds.incremental.
    assert "indexentries" not in inspect.getsource(IndexBuilder.load)


def test_sphinx_saves_the_environment_before_writing_and_says_what_it_writes_next_time_by_source_date():
    """Why bookext.builds.incremental journals the pages a build reads."""
    from sphinx.builders import Builder
    from sphinx.builders.html import StandaloneHTMLBuilder

    build = inspect.getsource(Builder.build)
    assert build.index("pickle.dump(self.env") < build.index("self.write(")
    assert "doc2path(docname)" in inspect.getsource(StandaloneHTMLBuilder.get_outdated_docs)


def test_sphinxs_events_the_book_connects_to_exist():
    from sphinx.builders import html
    from sphinx.events import core_events

    for name in (
        "config-inited",
        "builder-inited",
        "env-get-outdated",
        "env-before-read-docs",
        "env-purge-doc",
        "env-merge-info",
        "doctree-read",
        "env-updated",
        "write-started",
        "build-finished",
    ):
        assert name in core_events, name
    for name in ("html-page-context", "html-collect-pages"):  # the HTML builder's own
        assert f"app.add_event('{name}')" in inspect.getsource(html.setup), name


def test_sphinxs_literalinclude_reader_and_math_numbering():
    """bookext.notebooks.reader_notebooks (literalinclude in notebooks), bookext.content.mathml (equation numbers)."""
    from sphinx.directives.code import LiteralIncludeReader
    from sphinx.util.math import get_node_equation_number

    assert _parameters(LiteralIncludeReader)[:3] == ["filename", "options", "config"]
    assert callable(LiteralIncludeReader.read) and callable(get_node_equation_number)


# --- myst-parser ------------------------------------------------------------------------------------


def test_myst_parsers_markdown_it_tokens_the_reader_notebooks_read():
    """bookext.notebooks.myst_markdown reads MyST with ``create_md_parser(MdParserConfig(...))`` and relies
    on these token types and fields: a role's name in ``meta`` with its content, a directive's
    ``{name} argument`` in a fence's ``info``, a block's source lines in ``map``."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    parser = create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence"}), RendererHTML)
    text = "(t)=\n% c\n+++\n# H\n\nA {gls}`FFN`.\n\n:::{note} Title\nx\n:::\n\n$$\ny\n$$ (eq-y)\n"
    tokens = parser.parse(text)
    top = [(t.type, t.map) for t in tokens if t.level == 0 and t.map is not None]
    assert top == [
        ("myst_target", [0, 1]),
        ("myst_line_comment", [1, 2]),
        ("myst_block_break", [2, 3]),
        ("heading_open", [3, 4]),
        ("paragraph_open", [5, 6]),
        ("colon_fence", [7, 10]),
        ("math_block_label", [11, 14]),
    ]
    [role] = [c for t in tokens if t.type == "inline" for c in t.children if c.type == "myst_role"]
    assert (role.meta["name"], role.content) == ("gls", "FFN")
    fence = next(t for t in tokens if t.type == "colon_fence")
    assert (fence.info, fence.content) == ("{note} Title", "x\n")
    # A directive's ":key: value" option lines, read as myst-parser reads them.
    from myst_parser.parsers.directives import is_option_line
    from myst_parser.parsers.options import options_to_items

    assert is_option_line(":alt: A plot.") and not is_option_line(":::{note}")
    items, _ = options_to_items('alt: A plot.\nstart-at: "    for x:"\nopen:')
    assert items == [("alt", "A plot."), ("start-at", "    for x:"), ("open", "")]


# --- sphinxcontrib-bibtex and pybtex ---------------------------------------------------------------


def test_bibtex_reference_style_pieces_the_book_uses():
    """bookext.content.citations (author-year in round brackets) and reader_notebooks (citations as text)."""
    from pybtex.backends.markdown import Backend
    from sphinxcontrib.bibtex.domain import SphinxReferenceInfo
    from sphinxcontrib.bibtex.plugin import register_plugin
    from sphinxcontrib.bibtex.style.referencing import BracketStyle, format_references
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

    assert {"builder", "fromdocname", "todocname", "citation_id", "title", "pre_text", "post_text"} <= set(
        SphinxReferenceInfo._fields
    )
    assert _parameters(format_references)[:3] == ["style", "role_name", "references"]
    assert callable(register_plugin) and callable(Backend.format_str)
    assert "bracket_parenthetical" in AuthorYearReferenceStyle.__dataclass_fields__
    assert {"left", "right"} <= set(BracketStyle.__dataclass_fields__)


# --- the themes ----------------------------------------------------------------------------------


def test_the_book_themes_javascript_buttons_are_the_only_inline_handlers():
    """bookext.website.security_policy names each inline handler by hash; these are the theme's."""
    from pathlib import Path

    import sphinx_book_theme

    theme = Path(sphinx_book_theme.__file__).parent
    buttons = (theme / "theme" / "sphinx_book_theme" / "macros" / "buttons.html").read_text()
    assert 'onclick="{{ javascript }}"' in buttons
    headers = (theme / "header_buttons" / "__init__.py").read_text()
    assert '"javascript": "window.print()"' in headers and '"javascript": "toggleFullScreen()"' in headers


def test_sphinx_autobuild_injects_one_inline_reload_script():
    """bookext.website.security_policy.live_reload_script hashes it for `make live`."""
    from sphinx_autobuild.middleware import web_socket_script

    assert web_socket_script("h:1").count("<script>") == 1


@pytest.mark.parametrize("module", ["pydata_sphinx_theme", "sphinx_book_theme"])
def test_the_theme_ships_what_postprocess_reads(module):
    """bookext.website.postprocess reads fontawesome.js (icons as SVG) and trims the theme's CSS."""
    from pathlib import Path

    import pydata_sphinx_theme

    static = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"
    assert (static / "scripts" / "fontawesome.js").is_file()
    assert (static / "styles" / "pydata-sphinx-theme.css").is_file()
    __import__(module)


def test_the_books_layout_repeats_pydata_themes_css_block_but_for_the_theme_line():
    """docs/_templates/layout.html replaces pydata-sphinx-theme's block ``css`` to change
    one statement of its first script (how ``data-theme`` is set); the rest of the block
    must stay the theme's, so a theme release that changes the block fails here."""
    import re
    from pathlib import Path

    import pydata_sphinx_theme

    def css_block(path: Path) -> str:
        text = path.read_text(encoding="utf-8")
        return re.search(r"\{%-? block css %\}(.*?)\{%-? endblock css %\}", text, flags=re.S).group(1)

    def without_theme_line(block: str) -> str:
        block = re.sub(r"\{#.*?#\}|<!--.*?-->", "", block, flags=re.S)
        block = re.sub(r"document\.documentElement\.dataset\.theme = [^;]*;", "", block)
        return " ".join(block.replace("{{-", "{{").split())

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "layout.html"
    book = Path(__file__).resolve().parents[1] / "docs" / "_templates" / "layout.html"
    assert "dataset.theme" in css_block(theme)
    assert without_theme_line(css_block(book)) == without_theme_line(css_block(theme))


def test_the_themes_theme_css_only_imports_sphinxs_basic_css():
    """docs/_templates/static/webpack-macros.html links basic.css in place of the
    theme's styles/theme.css, which must therefore hold nothing else; and the theme's
    macro must still link theme.css, or the replacement silently does nothing."""
    import re
    from pathlib import Path

    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    css = (theme / "static" / "styles" / "theme.css").read_text(encoding="utf-8")
    assert re.sub(r"/\*.*?\*/", "", css, flags=re.S).split() == ["@import", '"../basic.css";']
    macros = (theme / "static" / "webpack-macros.html").read_text(encoding="utf-8")
    assert "pathto('_static/styles/theme.css', 1) }}?digest=" in macros

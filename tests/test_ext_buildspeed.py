"""bookext.builds.buildspeed: fewer collections during a build, and the collector as before after it."""

from __future__ import annotations

import gc

import pytest
from docutils import nodes
from sphinx import addnodes

from bookext.builds import buildspeed


def test_a_build_collects_less_and_leaves_the_collector_as_it_found_it(make_app, rootdir, tmp_path):
    """During the build the objects alive at its start are frozen and the youngest generation
    is collected less often; afterwards both are undone, so a process running many builds
    (this test session) keeps no frozen garbage."""
    import shutil

    srcdir = tmp_path / "pages"
    shutil.copytree(rootdir / "test-pages", srcdir)
    before = gc.get_threshold()
    app = make_app(
        "html",
        srcdir=srcdir,
        freshenv=True,
        confoverrides={
            "extensions": ["myst_nb", "sphinx_design", "bookext.website.page_assets", "bookext.builds.buildspeed"]
        },
    )
    during = {}

    def look(app_, env):
        during["threshold"], during["frozen"] = gc.get_threshold(), gc.get_freeze_count()

    app.connect("env-updated", look)
    app.build()
    assert during["threshold"][0] == buildspeed.BUILD_GC_THRESHOLD > before[0]
    assert during["frozen"] > 10_000  # Sphinx, the extensions and the loaded environment
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert (app.outdir / "index.html").exists()


class FakeApp:
    def __init__(self, parallel: int) -> None:
        self.parallel = parallel


@pytest.mark.parametrize(("jobs", "pages", "expected"), [(2, 1, 1), (2, 5, 1), (2, 6, 2), (1, 3, 1), (4, 40, 4)])
def test_worker_processes_only_above_five_pages(jobs, pages, expected):
    app = FakeApp(jobs)
    buildspeed.one_process_for_few_pages(app, None, [f"page{i}" for i in range(pages)])
    assert app.parallel == expected


def test_figures_are_numbered_again_only_after_a_page_changed_its_figures(make_app, rootdir, tmp_path, calls):
    """Sphinx numbers the figures by walking every page's doctree; a rebuild that read no page
    keeps the numbers it saved, one that read a page with the figures it had keeps them too,
    and one that read a page with a new figure numbers them again."""
    import shutil

    from sphinx.environment.collectors.toctree import TocTreeCollector

    srcdir = tmp_path / "previews"
    shutil.copytree(rootdir / "test-previews", srcdir)
    walks = calls(TocTreeCollector, "assign_figure_numbers")
    extensions = ["myst_parser", "bookext.website.previews", "bookext.builds.buildspeed"]

    def build():
        app = make_app("html", srcdir=srcdir, confoverrides={"extensions": extensions})
        app.build()
        return app

    first = build()
    assert len(walks) == 1 and first.env.toc_fignumbers["index"]["figure"] == {"fig-wide": (1,)}
    again = build()  # nothing changed
    assert len(walks) == 1 and again.env.toc_fignumbers == first.env.toc_fignumbers
    page = srcdir / "index.md"
    page.write_text(page.read_text().replace("(sec-shapes)=", "A new sentence, no figure.\n\n(sec-shapes)="))
    reworded = build()  # the page is read again, its outline is what it was
    assert "A new sentence" in (reworded.outdir / "index.html").read_text(encoding="utf-8")
    assert len(walks) == 1 and reworded.env.toc_fignumbers == first.env.toc_fignumbers
    assert "Fig. 1" in (reworded.outdir / "index.html").read_text(encoding="utf-8")
    figure = "```{figure} figure.svg\n:name: fig-new\n:alt: A bar.\n\nA new first figure.\n```\n\n"
    page.write_text(page.read_text().replace("(sec-shapes)=", figure + "(sec-shapes)="))
    edited = build()
    assert len(walks) == 2
    assert edited.env.toc_fignumbers["index"]["figure"] == {"fig-new": (1,), "fig-wide": (2,)}
    assert "Fig. 2" in (edited.outdir / "index.html").read_text(encoding="utf-8")


def test_templates_are_compiled_once_and_again_when_one_changes(make_app, rootdir, tmp_path, calls):
    """The second build loads every template it compiled in the first from the doctree folder;
    a template whose source changed is compiled again, and the page shows the change."""
    import shutil

    import jinja2

    srcdir = tmp_path / "pages"
    shutil.copytree(rootdir / "test-pages", srcdir)
    (srcdir / "_templates").mkdir(exist_ok=True)
    (srcdir / "_templates" / "layout.html").write_text('{% extends "!layout.html" %}{% block body %}A{% endblock %}')
    overrides = {"extensions": ["myst_nb", "bookext.builds.buildspeed"], "templates_path": ["_templates"]}

    def build() -> list[str]:
        """The named templates the build compiled (Sphinx's static ``*_t`` files are rendered
        from strings, which no cache keeps)."""
        compiled = calls(jinja2.Environment, "compile")
        app = make_app("html", srcdir=srcdir, freshenv=True, confoverrides=overrides)
        app.build()
        return [args[2] for args in compiled if len(args) > 2 and args[2]]

    assert build()  # the first build compiles
    assert any((tmp_path / "pages" / "_build" / "doctrees" / "jinja-bytecode").iterdir())
    assert build() == []  # the second loads them all
    (srcdir / "_templates" / "layout.html").write_text('{% extends "!layout.html" %}{% block body %}B{% endblock %}')
    assert build() == ["layout.html"]  # only the edited template
    assert "B" in (srcdir / "_build" / "html" / "index.html").read_text(encoding="utf-8")


def test_the_chapter_list_is_drawn_once_per_page_and_where_the_theme_draws_it(make_app, rootdir, tmp_path, monkeypatch):
    """The theme's empty-template check never renders the chapter list; every page's sidebar is
    what it is without buildspeed, the chapter list last."""
    import inspect
    import runpy
    import shutil

    import pydata_sphinx_theme.utils
    from bs4 import BeautifulSoup

    from bookext.builds.buildspeed import SIDEBAR_NAV

    checked = []
    check = pydata_sphinx_theme.utils._update_and_remove_templates

    def spy(*args, **kwargs):
        call = inspect.signature(check).bind(*args, **kwargs).arguments  # by keyword or by position
        checked.append((call["section"], list(call["templates"])))
        return check(*args, **kwargs)

    monkeypatch.setattr(pydata_sphinx_theme.utils, "_update_and_remove_templates", spy)
    extensions = runpy.run_path(str(rootdir / "test-theme" / "conf.py"))["extensions"]

    def sidebars(with_buildspeed: bool) -> dict[str, str]:
        srcdir = tmp_path / f"theme-{with_buildspeed}"
        shutil.copytree(rootdir / "test-theme", srcdir)
        more = ["bookext.builds.buildspeed"] if with_buildspeed else []
        app = make_app("html", srcdir=srcdir, freshenv=True, confoverrides={"extensions": [*extensions, *more]})
        checked.clear()
        app.build()
        pages = {p.stem: BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser") for p in app.outdir.glob("*.html")}
        return {
            name: str(soup.select_one(".bd-sidebar-primary"))
            for name, soup in pages.items()
            if soup.select_one(".bd-docs-nav")
        }

    plain = sidebars(False)
    assert any(section == "sidebars" and SIDEBAR_NAV in templates for section, templates in checked)
    held = sidebars(True)
    sections = [templates for section, templates in checked if section == "sidebars"]
    assert sections and all(SIDEBAR_NAV not in templates for templates in sections)
    assert held == plain and len(held) >= 3


def test_a_toctree_parent_is_written_again_only_when_a_child_it_lists_changed_its_title(make_app, tmp_path, calls):
    """A page read again with the title and sections it had leaves its toctree's page as it
    was; a new title, or a new section, writes that page again, which shows it."""
    from sphinx.builders.html import StandaloneHTMLBuilder

    srcdir = tmp_path / "toctree"
    srcdir.mkdir()
    (srcdir / "conf.py").write_text("")
    (srcdir / "index.md").write_text("# Book\n\n```{toctree}\nchild\nother\n```\n")
    (srcdir / "other.md").write_text("# Other\n\nText.\n")
    child = srcdir / "child.md"
    child.write_text("# Child\n\nFirst words.\n\n## Part\n\nMore.\n")
    extensions = ["myst_parser", "bookext.builds.buildspeed"]

    def build() -> tuple[set[str], object]:
        written = calls(StandaloneHTMLBuilder, "write_doc")
        app = make_app("html", srcdir=srcdir, confoverrides={"extensions": extensions})
        app.build()
        return {args[1] for args in written}, app

    assert build()[0] == {"index", "child", "other"}
    child.write_text(child.read_text().replace("First words.", "Other words."))
    written, app = build()
    assert written == {"child"}  # Sphinx alone writes index too
    assert app.env.files_to_rebuild["child"] == {"index"}  # held back for the write only
    child.write_text(child.read_text().replace("# Child", "# Renamed child"))
    written, _ = build()
    assert written == {"child", "index"}
    assert "Renamed child" in (srcdir / "_build" / "html" / "index.html").read_text(encoding="utf-8")
    child.write_text(child.read_text() + "\n## A new part\n\nText.\n")
    written, _ = build()
    assert written == {"child", "index"}  # the new section is in index's table of contents


CHAPTERS = {
    "conf.py": "templates_path = ['_templates']\n",
    "_templates/layout.html": (
        '{% extends "!layout.html" %}{% block sidebar1 %}<nav id="chapters">'
        "{{ toctree(titles_only=True, includehidden=True, collapse=False, maxdepth=2) }}</nav>{% endblock %}"
    ),
    "index.md": "# Book\n\n```{toctree}\n:caption: Part one\npart\n```\n\n```{toctree}\n:hidden:\nleaf\n```\n",
    "part.md": (
        "# Part\n\n## A section\n\nText.\n\n```{toctree}\nleaf\napi\n```\n\n### Deeper\n\nText.\n\n"
        "## Only for some\n\n```{only} extra\n\n```{toctree}\nextra\n```\n\n```\n"
    ),
    "leaf.md": "# Leaf\n\n## One\n\nText.\n\n## Two\n\n### Two and a half\n\nText.\n",
    "api.md": "# API\n\n```{py:function} first(x)\nOne.\n```\n\n```{py:function} second(y)\nTwo.\n```\n",
    "extra.md": "# Extra\n\n## Inside\n\nText.\n",
}


def chapter_book(tmp_path, name: str):
    srcdir = tmp_path / name
    for path, text in CHAPTERS.items():
        (srcdir / path).parent.mkdir(parents=True, exist_ok=True)
        (srcdir / path).write_text(text)
    return srcdir


@pytest.mark.parametrize("tags", [[], ["extra"]])
def test_a_titles_only_chapter_list_is_sphinxs_own_from_cut_down_tables_of_contents(make_app, tmp_path, tags):
    """Every page's titles-only toctree, in each of Sphinx's modes, comes out the same from the
    tables of contents titles_only_toc cut (sections, nested toctrees, an ``only`` directive
    around a toctree, object entries) as from the full ones; other calls are not affected."""
    srcdir = chapter_book(tmp_path, "chapters")
    app = make_app("html", srcdir=srcdir, tags=tags, confoverrides={"extensions": ["myst_parser"]})
    app.build()
    env, draw = app.env, app.builder._get_local_toctree
    cut = {name: buildspeed.titles_only_toc(toc) for name, toc in env.tocs.items()}
    assert sum(len(list(t.findall())) for t in cut.values()) < sum(len(list(t.findall())) for t in env.tocs.values())
    for docname in sorted(env.found_docs):
        for collapse in (False, True):
            for kwargs in ({"maxdepth": 2, "includehidden": True}, {"maxdepth": 0}, {"includehidden": False}):
                full = draw(docname, collapse=collapse, titles_only=True, **kwargs)
                env.tocs, kept = cut, env.tocs
                try:
                    assert draw(docname, collapse=collapse, titles_only=True, **kwargs) == full, (docname, kwargs)
                finally:
                    env.tocs = kept
    assert next(cut["part"].findall(addnodes.only), None) is not None  # left whole for Sphinx to cut


def test_the_chapter_list_is_checked_against_sphinxs_own_and_a_difference_fails_the_build(
    make_app, tmp_path, monkeypatch
):
    """With buildspeed the pages are as without it; were the cut tables of contents to draw a
    different list (a Sphinx that changed its rule), the build fails, naming the page."""
    from sphinx.errors import SphinxError  # raised while the template renders: Sphinx's ThemeError says so

    def built(name: str, extensions: list[str]) -> dict[str, str]:
        app = make_app("html", srcdir=chapter_book(tmp_path, name), confoverrides={"extensions": extensions})
        app.build()
        return {p.name: p.read_text(encoding="utf-8") for p in app.outdir.glob("*.html")}

    plain = built("plain", ["myst_parser"])
    fast = built("fast", ["myst_parser", "bookext.builds.buildspeed"])
    assert fast == plain and 'id="chapters"' in fast["leaf.html"] and "Part one" in fast["leaf.html"]

    cut = buildspeed.titles_only_toc

    def drops_the_nested_toctrees(toc):
        kept = cut(toc)
        for sublist in [n for n in kept.findall(nodes.bullet_list) if n is not kept]:
            sublist.parent.remove(sublist)
        return kept

    monkeypatch.setattr(buildspeed, "titles_only_toc", drops_the_nested_toctrees)
    with pytest.raises(SphinxError, match=r"on (api|extra|genindex|index|leaf|part|search), the chapter list"):
        built("changed", ["myst_parser", "bookext.builds.buildspeed"])


def test_pybtex_finds_the_books_plugins_without_scanning_the_entry_points(make_app, tmp_path, monkeypatch):
    """From builder-inited on, a build with author-year citations looks up every pybtex plugin
    from pybtex's own registry: no entry-point scan; each is the class its entry point names."""
    import runpy
    from importlib.metadata import entry_points

    import pybtex.plugin

    srcdir = tmp_path / "cited"
    srcdir.mkdir()
    conf = runpy.run_path("conf.py")
    (srcdir / "refs.bib").write_text(
        "@article{vaswani2017,title={Attention Is All You Need},author={Vaswani, Ashish and Shazeer, Noam"
        " and Parmar, Niki},journal={NeurIPS},year={2017}}\n"
        "@article{shazeer2020,title={GLU Variants Improve Transformer},author={Shazeer, Noam},"
        "journal={arXiv},year={2020}}\n"
    )
    (srcdir / "conf.py").write_text("")
    (srcdir / "index.md").write_text(
        "# Cited\n\nAs {cite:t}`vaswani2017` showed {cite:p}`shazeer2020`.\n\n```{bibliography}\n```\n"
    )
    scans = []
    import sphinxcontrib.bibtex  # noqa: F401 - its modules look up two plugins once, when imported

    monkeypatch.setattr(pybtex.plugin, "entry_points", lambda **kw: scans.append(kw) or entry_points(**kw))
    overrides = {
        "extensions": ["myst_parser", "sphinxcontrib.bibtex", "bookext.content.citations", "bookext.builds.buildspeed"],
        "bibtex_bibfiles": ["refs.bib"],
        **{k: conf[k] for k in ("bibtex_default_style", "bibtex_reference_style", "myst_enable_extensions")},
    }
    app = make_app("html", srcdir=srcdir, freshenv=True, confoverrides=overrides)
    app.build()
    page = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert "Vaswani <em>et al.</em> (" in page and "(<a" in page and "Attention is all you need" in page
    assert scans == [] and app._warning.getvalue() == ""
    for group, name in [*buildspeed.PYBTEX_PLUGINS, ("pybtex.style.formatting", conf["bibtex_default_style"])]:
        named = [*entry_points(group=group, name=name), *entry_points(group=f"{group}.aliases", name=name)]
        assert pybtex.plugin.find_plugin(group, name) is named[0].load(), (group, name)

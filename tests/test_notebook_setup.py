"""What a reader's notebook installs (docs/_ext/bookext/notebooks/notebook_setup.py): the setup cell, run
in a clean interpreter with an ffnbook from the pinned commit, from another one, or none; the
archive of all notebooks; the commit a build pins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from bookext.notebooks.notebook_setup import built_commit, setup_cell_source, uncommitted_package_files, write_archive

PINNED = "0123456789abcdef0123456789abcdef01234567"
SPEC = f"ffnbook @ git+https://github.com/ffnbook/ffnbook@{PINNED}"

# Runs the setup cell with pip replaced by a recorder: what it would install, and what it says.
PROBE = """
import json, subprocess, sys
asked = []
subprocess.check_call = lambda args, **kwargs: asked.append(list(args[1:]))
exec(open(sys.argv[1]).read())
print(json.dumps(asked))
"""


def _installed_ffnbook(site: Path, direct_url: dict | None) -> None:
    """An ffnbook importable from ``site``, installed by pip from ``direct_url`` (None: not by pip)."""
    (site / "ffnbook").mkdir(parents=True)
    (site / "ffnbook" / "__init__.py").write_text("")
    if direct_url is not None:
        info = site / "ffnbook-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ffnbook\nVersion: 0.1\n")
        (info / "direct_url.json").write_text(json.dumps(direct_url))


def _run_setup(tmp_path: Path, site: Path | None) -> tuple[list, str]:
    (tmp_path / "setup.py").write_text(setup_cell_source(SPEC, PINNED, None))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    # The interpreter the book's environment was made from: no ffnbook of its own.
    python = Path(sys.base_prefix) / "bin" / "python3"
    result = subprocess.run(
        [python, "-s", "-c", PROBE, tmp_path / "setup.py"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    *said, asked = result.stdout.strip().split("\n")
    return json.loads(asked), "\n".join(said)


def test_the_setup_cell_installs_the_pinned_commit_where_ffnbook_is_missing(tmp_path):
    asked, said = _run_setup(tmp_path, None)
    assert asked == [["-m", "pip", "install", "-q", SPEC]] and said == ""


def test_the_setup_cell_is_silent_with_the_pinned_commit_and_says_when_another_is_installed(tmp_path):
    same = tmp_path / "same"
    _installed_ffnbook(
        same, {"url": "https://github.com/ffnbook/ffnbook", "vcs_info": {"vcs": "git", "commit_id": PINNED}}
    )
    assert _run_setup(tmp_path, same) == ([], "")

    other = tmp_path / "other"
    _installed_ffnbook(
        other, {"url": "https://github.com/ffnbook/ffnbook", "vcs_info": {"vcs": "git", "commit_id": "f" * 40}}
    )
    asked, said = _run_setup(tmp_path, other)
    assert asked == []  # never replaces what a reader installed
    assert "not the commit 0123456789ab the site was built from" in said and SPEC in said

    local = tmp_path / "local"
    _installed_ffnbook(local, None)  # importable, but not installed by pip (a checkout on sys.path)
    asked, said = _run_setup(tmp_path, local)
    assert asked == [] and "(not installed by pip)" in said


def test_the_archive_depends_only_on_its_files(tmp_path):
    files = {"b/x.ipynb": b"{}", "a/requirements.txt": b"numpy==2\n"}
    write_archive(tmp_path / "one.zip", files)
    write_archive(tmp_path / "two.zip", dict(reversed(files.items())))
    assert (tmp_path / "one.zip").read_bytes() == (tmp_path / "two.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "one.zip") as archive:
        assert archive.namelist() == ["a/requirements.txt", "b/x.ipynb"]
        assert archive.read("b/x.ipynb") == b"{}"


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=True,
        env=dict(
            os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
        ),
    ).stdout.strip()


def test_a_build_pins_its_checkouts_commit_and_names_uncommitted_package_files(tmp_path, monkeypatch):
    for name in ("FFNBOOK_PACKAGE_REF", "GITHUB_SHA", "READTHEDOCS_GIT_COMMIT_HASH"):
        monkeypatch.delenv(name, raising=False)
    assert built_commit(tmp_path) == ""  # no checkout, nothing set: the build refuses (check_commit)
    monkeypatch.setenv("GITHUB_SHA", "a" * 40)
    assert built_commit(tmp_path) == "a" * 40

    _git(tmp_path, "init", "-q")
    (tmp_path / "ffnbook").mkdir()
    (tmp_path / "ffnbook" / "moe.py").write_text("X = 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "HEAD")
    assert built_commit(tmp_path) == head  # the checkout's own commit wins over CI's variable
    assert uncommitted_package_files(tmp_path) == []
    (tmp_path / "ffnbook" / "moe.py").write_text("X = 2\n")
    (tmp_path / "ffnbook" / "new.py").write_text("")
    (tmp_path / "notes.txt").write_text("not the package")
    assert uncommitted_package_files(tmp_path) == ["ffnbook/moe.py", "ffnbook/new.py"]
    monkeypatch.setenv("FFNBOOK_PACKAGE_REF", "b" * 40)
    assert built_commit(tmp_path) == "b" * 40


def test_the_archive_is_written_again_only_when_a_notebook_changed(make_app, rootdir, tmp_path):
    """A rebuild that changed no notebook keeps the archive as it was (compressing was most of
    the step); one whose notebook changed writes it again, with the change."""
    import json
    import shutil

    from bookext.notebooks.notebook_setup import ARCHIVE

    srcdir = tmp_path / "book"
    shutil.copytree(rootdir / "test-reader-notebooks", srcdir)

    def build():
        app = make_app("html", srcdir=srcdir)
        app.build()
        archive = app.outdir / ARCHIVE
        with zipfile.ZipFile(archive) as opened:
            page = json.loads(opened.read("ffnbook-notebooks/page.ipynb"))
        return archive.stat().st_mtime_ns, page

    first, page = build()
    again, same = build()
    assert again == first and same == page
    notebook = json.loads((srcdir / "page.ipynb").read_text(encoding="utf-8"))
    first_markdown = next(c for c in notebook["cells"] if c["cell_type"] == "markdown")
    first_markdown["source"] = [*first_markdown["source"], "\n\nA sentence added."]
    (srcdir / "page.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    changed, edited = build()
    assert changed != first
    assert any("A sentence added." in "".join(c["source"]) for c in edited["cells"])

"""Post-processing can tell which output files a build changed (docs/_ext/bookext/outputs.py)."""

from __future__ import annotations

from bookext.outputs import Ledger


def test_a_file_still_holding_the_bytes_post_processing_left_is_recognised_with_what_was_kept(tmp_path):
    page, other = tmp_path / "page.html", tmp_path / "other.html"
    page.write_text("<p>processed</p>")
    other.write_text("<p>processed too</p>")
    ledger_path = tmp_path / "doctrees" / "postprocessed.json"

    first = Ledger(ledger_path)
    assert first.seen(page) is None  # never seen: process it
    first.keep(page, {"classes": ["fa-moon"]})
    first.keep(other)
    first.save()

    other.write_text("<p>written again by Sphinx</p>")
    second = Ledger(ledger_path)
    assert second.seen(page) == {"classes": ["fa-moon"]}
    assert second.seen(other) is None
    second.save()  # other was neither seen unchanged nor kept again: forgotten
    assert Ledger(ledger_path).seen(other) is None
    assert Ledger(ledger_path).seen(page) == {"classes": ["fa-moon"]}


def test_a_missing_or_unreadable_ledger_means_every_file_is_processed(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<p>x</p>")
    ledger_path = tmp_path / "postprocessed.json"
    assert Ledger(ledger_path).seen(page) is None
    ledger_path.write_text('{"' + str(page))  # cut short
    assert Ledger(ledger_path).seen(page) is None

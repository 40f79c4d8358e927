"""Copy buttons in a real browser (Debian's Chromium via Playwright): click, then read the clipboard.

Skipped, with the reason printed, where Chromium or Playwright is missing.
"""

from __future__ import annotations

import pytest
from sitecheck import browser_api

pytestmark = pytest.mark.build

playwright_api = browser_api()

# The code blocks that get a button: every one in the article except cell outputs.
CODE_BLOCKS = "article div.highlight:not(.cell_output div.highlight)"


@pytest.fixture
def page(browser, server):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.rstrip("/"))
    yield context.new_page()
    context.close()


def clipboard(page) -> str:
    return page.evaluate("navigator.clipboard.readText()")


def test_every_code_cell_has_a_named_copy_button_that_copies_its_code(server, page):
    page.goto(server + "position-independence.html")
    # Folded code (the problems' worked solutions) counts too: unfold it, as a reader would.
    page.evaluate("document.querySelectorAll('article details').forEach((d) => { d.open = true; })")
    blocks = page.locator(CODE_BLOCKS)
    buttons = page.get_by_role("button", name="Copy code")
    assert blocks.count() > 5 and buttons.count() == blocks.count()

    cell = page.locator(".cell").filter(has=page.locator(".cell_output")).first
    code = cell.locator(".cell_input pre").text_content().rstrip()
    output = cell.locator(".cell_output").text_content().strip()
    button = cell.get_by_role("button", name="Copy code")
    button.click()
    page.get_by_role("status").filter(has_text="Copied").wait_for()
    assert clipboard(page) == code
    assert output not in clipboard(page)
    assert button.text_content() == "Copied"


def test_the_keyboard_reaches_and_presses_copy(server, page):
    page.goto(server + "position-independence.html")
    for _ in range(200):  # Tab from the top until a copy button has focus
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('ffn-copy')"):
            break
    else:
        pytest.fail("no copy button is reachable with Tab")
    code = page.evaluate("document.activeElement.parentElement.querySelector('pre').textContent")
    page.keyboard.press("Enter")
    page.get_by_role("status").filter(has_text="Copied").wait_for()
    assert clipboard(page) == code.rstrip()


def test_a_console_session_is_copied_without_prompts_or_outputs(server, page):
    page.goto(server + "api/feedforward.html")
    block = page.locator("div.doctest div.highlight").filter(has_text=">>> p = init_ffn_params").first
    typed = [line[4:] for line in block.locator("pre").text_content().splitlines() if line.startswith((">>> ", "... "))]
    assert typed and len(typed) < len(block.locator("pre").text_content().splitlines())
    block.get_by_role("button", name="Copy code").click()
    page.get_by_role("status").filter(has_text="Copied").wait_for()
    assert clipboard(page) == "\n".join(typed)


def test_a_shell_session_is_copied_without_its_dollar_prompts(server, page):
    page.goto(server + "index.html")
    block = page.locator("div.highlight").filter(has_text="$ make html").first
    lines = block.locator("pre").text_content().rstrip().splitlines()
    typed = [line[2:] for line in lines if line.startswith("$ ")]
    assert typed and all(not line.startswith("$") for line in typed)
    block.get_by_role("button", name="Copy code").click()
    page.get_by_role("status").filter(has_text="Copied").wait_for()
    assert clipboard(page) == "\n".join(typed)


@pytest.mark.parametrize("width", (390, pytest.param(1366, marks=pytest.mark.full)))  # test-full: desktop too
def test_no_copy_button_covers_code(server, page, width):
    """Each button sits above its code: below the button's bottom edge, not beside it."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(server + "position-independence.html")
    overlaps = page.evaluate("""() => [...document.querySelectorAll('.ffn-copy')].map(b => {
        const pre = b.parentElement.querySelector('pre').getBoundingClientRect();
        const button = b.getBoundingClientRect();
        return button.bottom <= pre.top + 0.5 && button.right <= pre.right + 0.5 ? null
             : {button: [button.top, button.bottom], pre: [pre.top, pre.bottom]};
    }).filter(x => x)""")
    assert page.locator(".ffn-copy").count() > 5
    assert overlaps == []

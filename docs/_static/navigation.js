/* The sidebar toggles, finished: docs/_ext/bookext/website/navigation.py */
(() => {
  const drawers = [
    [".bd-header-article .primary-toggle", "pst-primary-sidebar-modal", "pst-primary-sidebar", "Close the chapter list"],
    [".bd-header-article .secondary-toggle", "pst-secondary-sidebar-modal", "pst-secondary-sidebar", "Close the page contents"],
  ];
  for (const [selector, id, sidebarId, closeLabel] of drawers) {
    const toggle = document.querySelector(selector);
    const drawer = document.getElementById(id);
    const sidebar = document.getElementById(sidebarId);
    if (!toggle || !drawer) continue;
    // A visible way out of the drawer for a reader who knows neither Escape nor a tap
    // beside it. It lives in the sidebar, whose nodes the theme moves into the drawer when
    // it opens (and back when it closes); ffnbook.css shows it only inside the drawer.
    if (sidebar) {
      const close = document.createElement("button");
      close.type = "button";
      close.className = "ffn-drawer-close";
      close.setAttribute("aria-label", closeLabel);
      close.innerHTML = '<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">'
        + '<path d="M3 3l10 10M13 3L3 13" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>'
        + '<span aria-hidden="true">Close</span>';
      close.addEventListener("click", () => drawer.open && drawer.close());
      sidebar.prepend(close);
    }
    let byKeyboard = false;
    let toSection = false;
    // On the document, capturing: before the themes' handlers on the toggle, one of
    // which stops the event. A click from Enter or Space has detail 0.
    document.addEventListener("click", (event) => {
      if (!toggle.contains(event.target)) return;
      byKeyboard = event.detail === 0;
      toSection = false;
      // The book theme blurs the toggle on every click (to drop its tooltip); a keyboard
      // reader keeps the focus on it when it hid or showed the sidebar (no drawer).
      if (byKeyboard) setTimeout(() => drawer.open || toggle.focus());
    }, true);
    // A link to a section of this page: close the drawer, so the reader sees the section.
    drawer.addEventListener("click", (event) => {
      const link = event.target.closest("a[href^='#']");
      if (link && drawer.open) {
        toSection = true;
        drawer.close();
      }
    });
    // Escape or a tap beside the drawer: the keyboard focus goes back to the toggle.
    drawer.addEventListener("close", () => {
      if (byKeyboard && !toSection) setTimeout(() => toggle.focus());
    });
  }

  // A touch screen has no hover: the theme's tooltips (Bootstrap's, started by bootstrap.js,
  // which runs after this deferred script) would open on a tap and stay, the search
  // button's "Search" over the page after its dialog closed and gave the button focus back.
  // Each button keeps its title and its name.
  if (window.matchMedia("(hover: none)").matches) {
    for (const tip of document.querySelectorAll('[data-bs-toggle="tooltip"]')) tip.removeAttribute("data-bs-toggle");
  }

  // The header's print and full-screen buttons (bookext/website/postprocess.py took their inline
  // onclick away: the pages' content security policy allows no inline handler).
  const actions = { print: () => window.print(), fullscreen: () => window.toggleFullScreen && window.toggleFullScreen() };
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-ffn-action]");
    if (button && actions[button.dataset.ffnAction]) actions[button.dataset.ffnAction]();
  });
})();

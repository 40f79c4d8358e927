/* The sidebar toggles, finished: docs/_ext/bookext/navigation.py */
(() => {
  const drawers = [
    [".bd-header-article .primary-toggle", "pst-primary-sidebar-modal"],
    [".bd-header-article .secondary-toggle", "pst-secondary-sidebar-modal"],
  ];
  for (const [selector, id] of drawers) {
    const toggle = document.querySelector(selector);
    const drawer = document.getElementById(id);
    if (!toggle || !drawer) continue;
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
})();

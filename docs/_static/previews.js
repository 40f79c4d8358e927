/* ffnbook reference previews: hover or focus a reference to a figure, an equation, a
 * section or a citation to see it here. The page's previews (bookext/previews.py) are
 * fetched from the same site on first use. On a touch screen the first tap shows the
 * preview and a second tap follows the link; Escape or a tap elsewhere closes it. */
(function () {
  "use strict";

  var meta = document.querySelector('meta[name="ffnbook:previews"]');
  if (!meta) { return; }
  var address = meta.getAttribute("content");
  var NOT_INSIDE = ".ffn-term, .toctree-wrapper, .prev-next-area, nav, .ffn-preview";
  var HIDE_DELAY = 200; // ms: time to move the pointer from the link onto the preview

  var previews = null, loading = null;
  var tip = null, current = null, hideTimer = null, lastPointer = "mouse";

  function load() {
    if (!loading) {
      loading = fetch(address, { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : {}; })
        .catch(function () { return {}; })
        .then(function (data) { previews = data; return data; });
    }
    return loading;
  }

  function entry(link) { return previews && previews[link.getAttribute("href")]; }

  function box() {
    if (!tip) {
      tip = document.createElement("div");
      tip.id = "ffn-preview";
      tip.className = "ffn-preview";
      tip.setAttribute("role", "tooltip");
      tip.hidden = true;
      tip.addEventListener("pointerenter", function () { window.clearTimeout(hideTimer); });
      tip.addEventListener("pointerleave", function (event) {
        if (event.pointerType !== "touch") { hideSoon(); }
      });
      // Inside the main landmark, as the text it previews (axe: all content in landmarks).
      (document.querySelector("main") || document.body).appendChild(tip);
    }
    return tip;
  }

  /* Below the link, starting at its left edge; above it when there is more room there;
     moved left to stay 8 px inside the viewport. */
  function place(link) {
    var r = link.getBoundingClientRect(), width = document.documentElement.clientWidth;
    tip.style.left = "0px";
    tip.style.top = "0px";
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var left = Math.max(8, Math.min(r.left, width - 8 - w));
    var below = window.innerHeight - r.bottom, above = r.top;
    var top = (below < h + 8 && above > below) ? r.top - h - 6 : r.bottom + 6;
    // Absolute within its positioned ancestor (or the page): viewport coordinates moved there.
    var holder = tip.offsetParent, origin = { left: -window.scrollX, top: -window.scrollY };
    if (holder && holder !== document.body && holder !== document.documentElement) {
      var h = holder.getBoundingClientRect();
      origin = { left: h.left - holder.scrollLeft, top: h.top - holder.scrollTop };
    }
    tip.style.left = (left - origin.left) + "px";
    tip.style.top = (top - origin.top) + "px";
  }

  function show(link) {
    window.clearTimeout(hideTimer);
    var found = entry(link);
    if (!found) { return false; }
    var t = box();
    if (current && current !== link) { current.removeAttribute("aria-describedby"); }
    t.className = "ffn-preview ffn-preview-" + found.kind;
    t.innerHTML = found.html;
    t.hidden = false;
    place(link);
    // Images change the height once loaded: place again.
    t.querySelectorAll("img").forEach(function (img) {
      if (!img.complete) { img.addEventListener("load", function () { if (current === link) { place(link); } }); }
    });
    link.setAttribute("aria-describedby", t.id);
    current = link;
    return true;
  }

  function hide() {
    window.clearTimeout(hideTimer);
    if (tip) { tip.hidden = true; }
    if (current) { current.removeAttribute("aria-describedby"); }
    current = null;
  }

  function hideSoon() {
    window.clearTimeout(hideTimer);
    hideTimer = window.setTimeout(hide, HIDE_DELAY);
  }

  function setup(link) {
    link.addEventListener("pointerenter", function (event) {
      if (event.pointerType === "touch") { return; }
      load().then(function () { if (link.matches(":hover")) { show(link); } });
    });
    link.addEventListener("pointerleave", function (event) {
      if (event.pointerType !== "touch" && current === link) { hideSoon(); }
    });
    link.addEventListener("focus", function () {
      if (lastPointer === "touch") { return; } // a tap: the click decides
      load().then(function () { if (document.activeElement === link) { show(link); } });
    });
    link.addEventListener("blur", function () {
      if (current === link && lastPointer !== "touch") { hide(); }
    });
    link.addEventListener("click", function (event) {
      if (lastPointer !== "touch" || current === link) { return; } // second tap: follow
      event.preventDefault();
      load().then(function () {
        if (!show(link)) { window.location.href = link.href; } // nothing to preview
      });
    });
  }

  document.addEventListener("pointerdown", function (event) {
    lastPointer = event.pointerType || "mouse";
    if (current && !event.target.closest(".ffn-preview") && event.target.closest("a") !== current) {
      hide();
    }
  }, true);
  document.addEventListener("keydown", function (event) {
    lastPointer = "keyboard";
    if (event.key === "Escape" && current) { hide(); }
  });
  window.addEventListener("resize", function () { if (current) { place(current); } });

  function init() {
    document.querySelectorAll("article a.reference.internal[href]").forEach(function (link) {
      if (!link.closest(NOT_INSIDE)) { setup(link); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

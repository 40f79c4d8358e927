/* ffnbook reference previews: hover or focus a reference to a figure, an equation, a
 * section or a citation to see it here. The page's previews (bookext/website/previews.py) are
 * fetched from the same site on first use. On a touch screen the first tap shows the
 * preview and a second tap follows the link; Escape or a tap elsewhere closes it. */
(function () {
  "use strict";

  var meta = document.querySelector('meta[name="ffnbook:previews"]');
  if (!meta) { return; }
  var address = meta.getAttribute("content");
  var NOT_INSIDE = ".ffn-term, .toctree-wrapper, .prev-next-area, nav, .ffn-preview";
  var HIDE_DELAY = 200; // ms: time to move the pointer from the link onto the preview
  // ms a pointer rests on a link before its preview opens: passing over a link on the way
  // elsewhere opens nothing (keyboard focus and a tap open at once).
  var SHOW_DELAY = 300;
  var MARGIN = 8, GAP = 6; // px: from the viewport's edges; between the link and the preview

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

  /* Below the link, starting at its left edge, or above it where there is more room;
     never past the viewport: a preview taller than its side's room is cut to it (a figure's
     image shrinks to fit, other content scrolls inside), and moved left to stay 8 px inside. */
  function place(link) {
    var r = link.getBoundingClientRect(), width = document.documentElement.clientWidth;
    tip.style.left = "0px";
    tip.style.top = "0px";
    tip.style.maxHeight = "";
    tip.querySelectorAll("img").forEach(function (img) { img.style.maxHeight = ""; });
    var below = window.innerHeight - r.bottom - GAP - MARGIN, above = r.top - GAP - MARGIN;
    var onTop = tip.offsetHeight > below && above > below;
    var room = Math.max(onTop ? above : below, 0);
    var cap = Math.min(room, parseFloat(getComputedStyle(tip).maxHeight) || Infinity);
    var img = tip.querySelector("img");
    var overflow = tip.scrollHeight + tip.offsetHeight - tip.clientHeight - cap; // borders included
    if (img && img.offsetHeight && overflow > 0) {
      img.style.maxHeight = Math.max(Math.floor(img.offsetHeight - overflow - 1), 80) + "px";
    }
    if (tip.offsetHeight > room) { tip.style.maxHeight = room + "px"; }
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var left = Math.max(MARGIN, Math.min(r.left, width - MARGIN - w));
    var top = onTop ? r.top - GAP - h : r.bottom + GAP;
    // Absolute within its positioned ancestor (or the page): viewport coordinates moved there.
    var holder = tip.offsetParent, origin = { left: -window.scrollX, top: -window.scrollY };
    if (holder && holder !== document.body && holder !== document.documentElement) {
      var box = holder.getBoundingClientRect();
      origin = { left: box.left - holder.scrollLeft, top: box.top - holder.scrollTop };
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

  var showTimer = null;

  function setup(link) {
    link.addEventListener("pointerenter", function (event) {
      if (event.pointerType === "touch") { return; }
      load(); // fetched while the pointer rests
      window.clearTimeout(showTimer);
      showTimer = window.setTimeout(function () {
        loading.then(function () { if (link.matches(":hover")) { show(link); } });
      }, current ? 0 : SHOW_DELAY); // from one open preview to the next link: at once
    });
    link.addEventListener("pointerleave", function (event) {
      if (event.pointerType === "touch") { return; }
      window.clearTimeout(showTimer);
      if (current === link) { hideSoon(); }
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

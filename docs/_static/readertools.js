/* ffnbook reader tools: expertise level, tooltips, references switch, self-checks.
 * No network, no dependencies. Settings persist in localStorage. */
(function () {
  "use strict";

  var LEVEL_KEY = "ffnbook.expertise";
  var LINKS_KEY = "ffnbook.clickableReferences";
  // Reader levels and glossary levels share one vocabulary, whose order the page's
  // select lists (docs/_templates/reading-tools.html, from bookext's LEVELS): a reader
  // at a level is explained the terms of that level and of every later one.
  // Preferences saved under an earlier name of a level still work:
  var RENAMED = { expert: "advanced" };

  function stored(key, fallback) {
    try {
      var value = window.localStorage.getItem(key);
      return value === null ? fallback : value;
    } catch (e) {
      return fallback; // storage may be disabled; the defaults still work
    }
  }

  function store(key, value) {
    try { window.localStorage.setItem(key, value); } catch (e) { /* ignore */ }
  }

  /* ---- tooltips ---------------------------------------------------------- */

  function hideAll(except) {
    document.querySelectorAll(".ffn-tip:not([hidden])").forEach(function (tip) {
      if (tip !== except) { tip.hidden = true; }
    });
  }

  /* A tooltip opens below its term, starting at the term's left edge; near the right
     edge of a narrow screen it moves left just enough to stay in view (8 px margin);
     near the bottom of the screen it opens above the term, where there is more room. */
  function place(tip) {
    tip.style.left = "";
    tip.classList.remove("ffn-tip-above");
    var box = tip.getBoundingClientRect(), room = document.documentElement.clientWidth - 8;
    var shift = Math.min(Math.max(box.right - room, 0), Math.max(box.left - 8, 0));
    if (shift > 0) { tip.style.left = (-shift) + "px"; }
    var term = tip.parentElement.getBoundingClientRect();
    if (box.bottom > window.innerHeight - 8 && term.top - 8 > window.innerHeight - term.bottom) {
      tip.classList.add("ffn-tip-above");
    }
  }

  // ms the mouse rests on a term before its definition opens: crossing a term on the way
  // elsewhere opens nothing (focus and a tap open at once; so does moving from one open
  // definition to the next term).
  var SHOW_DELAY = 300;
  var showTimer = null;

  function setupTerm(term) {
    var link = term.querySelector("a");
    var tip = term.querySelector(".ffn-tip");
    if (!link || !tip) { return; }
    var show = function () {
      if (term.classList.contains("ffn-explained")) { hideAll(tip); tip.hidden = false; place(tip); }
    };
    var hide = function () { tip.hidden = true; };
    // A touch screen has no hover: the first tap on an explained term shows its definition
    // and stays on the page; a second tap, with the definition open, follows the link to the
    // glossary. Whether the definition was open is read when the finger comes down, before
    // the focus and the emulated mouse events of the tap open it.
    var tapOpened = false;
    term.addEventListener("pointerdown", function (event) {
      tapOpened = event.pointerType === "touch" && tip.hidden && term.classList.contains("ffn-explained");
    });
    link.addEventListener("click", function (event) {
      if (tapOpened) {
        event.preventDefault();
        show();
      }
      tapOpened = false;
    });
    term.addEventListener("mouseenter", function () {
      window.clearTimeout(showTimer);
      var open = document.querySelector(".ffn-tip:not([hidden])");
      showTimer = window.setTimeout(show, open ? 0 : SHOW_DELAY);
    });
    term.addEventListener("mouseleave", function () {
      window.clearTimeout(showTimer);
      if (document.activeElement !== link) { hide(); }
    });
    link.addEventListener("focus", show);
    link.addEventListener("blur", hide);
  }

  function applyLevel(level, levels) {
    var reader = levels.indexOf(level);
    document.documentElement.setAttribute("data-ffn-expertise", level);
    document.querySelectorAll(".ffn-term").forEach(function (term) {
      var link = term.querySelector("a");
      var tip = term.querySelector(".ffn-tip");
      if (!link || !tip) { return; }
      var on = levels.indexOf(term.getAttribute("data-level")) >= reader;
      term.classList.toggle("ffn-explained", on);
      term.classList.toggle("ffn-plain", !on);
      if (on) {
        link.setAttribute("aria-describedby", tip.id);
        link.removeAttribute("tabindex");
      } else {
        link.removeAttribute("aria-describedby");
        link.setAttribute("tabindex", "-1"); // plain text is not a tab stop
        tip.hidden = true;
      }
    });
  }

  /* ---- clickable references ------------------------------------------------ */

  function inlineReferences() {
    return document.querySelectorAll(
      "article p a.reference, article li a.reference, article td a.reference"
    );
  }

  function applyLinks(clickable) {
    document.documentElement.classList.toggle("ffn-links-plain", !clickable);
    inlineReferences().forEach(function (a) {
      if (a.closest(".ffn-term") || a.closest(".toctree-wrapper")) { return; }
      a.classList.add("ffn-inline-ref");
      if (clickable) {
        a.removeAttribute("aria-disabled");
        if (a.getAttribute("data-ffn-tabindex") === "none") { a.removeAttribute("tabindex"); }
      } else {
        a.setAttribute("aria-disabled", "true");
        if (!a.hasAttribute("tabindex")) { a.setAttribute("data-ffn-tabindex", "none"); }
        a.setAttribute("tabindex", "-1");
      }
    });
  }

  /* ---- the controls -------------------------------------------------------- */

  function wireControls() {
    // The controls are in the page (docs/_templates/reading-tools.html); this wires them up.
    var tools = document.querySelector(".ffn-tools");
    if (!tools) { return; }
    var select = tools.querySelector("#ffn-expertise");
    var links = tools.querySelector("#ffn-links");
    var levels = Array.prototype.map.call(select.options, function (o) { return o.value; });
    var saved = stored(LEVEL_KEY, levels[0]);
    var level = RENAMED[saved] || saved;
    if (levels.indexOf(level) < 0) { level = levels[0]; }
    if (level !== saved) { store(LEVEL_KEY, level); }
    select.value = level;
    links.checked = stored(LINKS_KEY, "true") === "true";
    select.addEventListener("change", function () {
      store(LEVEL_KEY, select.value);
      applyLevel(select.value, levels);
    });
    links.addEventListener("change", function () {
      store(LINKS_KEY, String(links.checked));
      applyLinks(links.checked);
    });
    applyLevel(select.value, levels);
    applyLinks(links.checked);
  }

  /* ---- self-check questions ------------------------------------------------ */

  function setupQuiz(form) {
    var result = form.querySelector(".ffn-result");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var chosen = form.querySelector("input[type=radio]:checked");
      if (!chosen) {
        result.textContent = "Choose an option first.";
        return;
      }
      form.classList.add("ffn-answered");
      form.querySelectorAll(".ffn-option").forEach(function (option) {
        var input = option.querySelector("input");
        option.classList.toggle("ffn-correct", input.getAttribute("data-correct") === "true");
        option.classList.toggle("ffn-chosen", input === chosen);
      });
      var right = chosen.getAttribute("data-correct") === "true";
      result.textContent = right
        ? "Right. Every option's explanation is shown below it."
        : "Not quite. The explanations under each option say why.";
    });
  }

  /* ---- formulas wider than the column -------------------------------------- */

  // ffnbook.css lets a formula wider than its column scroll in its own box. Such a
  // box becomes a named tab stop, so it can be scrolled with the arrow keys; boxes
  // that fit stay out of the tab order. Checked again when the width changes or
  // a folded answer opens.
  // A wide table's box too (the theme's scroll container): it fades at the edge where
  // more of the table is hidden (ffnbook.css), so this also says where the reader is.
  var TABLES = "article .pst-scrollable-table-container";

  function markScrolled(box) {
    var end = box.scrollLeft + box.clientWidth >= box.scrollWidth - 1;
    box.toggleAttribute("data-ffn-scrolled", box.scrollLeft > 1);
    box.toggleAttribute("data-ffn-at-end", end);
  }

  function markWideMath() {
    var boxes = Array.prototype.filter.call(
      document.querySelectorAll("article div.math, article span.math, " + TABLES),
      function (box) { return !box.closest(".ffn-tip"); }
    );
    // Every width is read before any box is changed: one layout, not one per box.
    var wides = boxes.map(function (box) { return box.scrollWidth > box.clientWidth + 1; });
    boxes.forEach(function (box, i) {
      var wide = wides[i];
      if (wide === box.hasAttribute("data-ffn-wide")) { return; }
      if (box.matches(TABLES)) {
        box.toggleAttribute("data-ffn-wide", wide);
        if (wide && !box.hasAttribute("data-ffn-watched")) {
          box.setAttribute("data-ffn-watched", "");
          box.addEventListener("scroll", function () { markScrolled(box); }, { passive: true });
        }
        markScrolled(box);
        return;
      }
      if (wide) {
        var number = box.querySelector(".eqno");
        box.setAttribute("data-ffn-wide", "");
        box.tabIndex = 0;
        box.setAttribute("role", "group");
        box.setAttribute("aria-label", (box.tagName === "DIV" ? "Equation" : "Formula") +
          (number ? " " + number.firstChild.textContent.trim() : "") + ", scrolls sideways");
      } else {
        ["data-ffn-wide", "tabindex", "role", "aria-label"].forEach(function (name) {
          box.removeAttribute(name);
        });
      }
    });
  }

  function watchWideMath() {
    // One measurement per frame at most: the page's folded blocks fire "toggle" as it
    // loads, and measuring on each would lay the whole page out once per block. The
    // first runs just before the first frame, once every deferred script has changed
    // the page.
    var pending = 0;
    var schedule = function () {
      if (!pending) {
        pending = window.requestAnimationFrame(function () { pending = 0; markWideMath(); });
      }
    };
    schedule();
    // The math font changes the formulas' widths, if it arrives after they were measured
    // (a page with formulas carries it in its stylesheet, so it is there before: then
    // nothing is measured twice, which would lay the whole page out again).
    if (document.fonts) {
      document.fonts.addEventListener("loadingdone", function (event) {
        if (event.fontfaces.some(function (face) { return face.family.indexOf("FFN Book Math") >= 0; })) {
          schedule();
        }
      });
    } else {
      window.addEventListener("load", schedule);
    }
    document.addEventListener("toggle", schedule, true); // a folded answer opened
    window.addEventListener("resize", schedule);
  }

  /* ---- the reading-tools panel (a <details> in the article header) ---------- */

  function closeTools(returnFocus) {
    var tools = document.querySelector("details.ffn-tools[open]");
    if (!tools) { return; }
    tools.open = false;
    if (returnFocus) { tools.querySelector("summary").focus(); }
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      hideAll(null);
      var inTools = document.activeElement && document.activeElement.closest("details.ffn-tools");
      closeTools(!!inTools);
    }
  });

  document.addEventListener("click", function (event) {
    if (!event.target.closest("details.ffn-tools")) { closeTools(false); }
    // A tap anywhere else closes an open definition (a touch screen has no mouse to leave).
    if (!event.target.closest(".ffn-term")) { hideAll(null); }
  });

  function init() {
    document.documentElement.classList.add("ffn-js");
    document.querySelectorAll(".ffn-term").forEach(setupTerm);
    document.querySelectorAll("form.ffn-quiz").forEach(setupQuiz);
    wireControls();
    watchWideMath();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

/* Search result snippets from a page's own text (bookext/website/search_snippets.py loads it on the search
 * page only). Sphinx's searchtools.js cuts a result's snippet from the whole
 * [role=main] of the page, which here also holds the header's buttons ("Light Dark"),
 * the page's contents list and each glossary term's tooltip, spliced into the sentence.
 * It has no setting for that, so its Search.htmlToText is replaced: the article alone,
 * without tooltips, controls, navigation or interactive figures. */
(function () {
  "use strict";
  // searchtools.js declares Search with const: a global name, not a property of window.
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") { return; }
  var LEFT_OUT = ".headerlink, script, style, .ffn-tip, button, nav, .toctree-wrapper, " +
    ".prev-next-area, form, .ffn-x, .cell_output";
  Search.htmlToText = function (htmlString, anchor) {
    var page = new DOMParser().parseFromString(htmlString, "text/html");
    var article = page.querySelector("article.bd-article") || page.querySelector('[role="main"]');
    if (!article) { return ""; }
    article.querySelectorAll(LEFT_OUT).forEach(function (element) { element.remove(); });
    var part = anchor && anchor.charAt(0) === "#" ? page.getElementById(decodeURIComponent(anchor.slice(1))) : null;
    return (part && article.contains(part) ? part : article).textContent;
  };
})();

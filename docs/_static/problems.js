/* ffnbook problems: the reader types a number, the page says at once whether it is the
 * answer the build computed (within the stated tolerance). No network, no kernel.
 * parse() reads a typed number as ffnbook/problems.py's parse_answer does (the tests
 * compare the two); bookext/content/problems.py writes the markup this wires up. */
(function () {
  "use strict";

  // Scale letters and words (M is a million; m, milli in SI, is not read).
  var SCALES = {
    k: 1e3, K: 1e3, thousand: 1e3, M: 1e6, million: 1e6,
    B: 1e9, G: 1e9, bn: 1e9, billion: 1e9, T: 1e12, trillion: 1e12,
    kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12,
    KiB: Math.pow(2, 10), kiB: Math.pow(2, 10), MiB: Math.pow(2, 20),
    GiB: Math.pow(2, 30), TiB: Math.pow(2, 40)
  };
  var WORDS = ["thousand", "million", "billion", "trillion"]; // also in any case
  var SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹";
  var PLAIN = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
  var GROUPED = /^[+-]?\d{1,3}([, _])\d{3}(?:\1\d{3})*(?:\.\d+)?$/;
  var POWER = /^(?:(.+?)\s*[x*×·]\s*)?10\s*(?:\^|\*\*)\s*([+-]?\d+)$/;
  var POWER_SUPERSCRIPT = /^(?:(.+?)\s*[x*×·]\s*)?10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)$/;

  function AnswerError(message) { this.message = message; }

  // The most characters of the reader's text a message repeats (ffnbook/problems.py's QUOTED_MAX).
  var QUOTED_MAX = 20;
  function quoted(text) {
    var chars = Array.from(text);
    return "'" + (chars.length <= QUOTED_MAX ? text : chars.slice(0, QUOTED_MAX - 1).join("") + "…") + "'";
  }

  function unitWords(unit) {
    var words = unit ? unit.toLowerCase().split(/\s+/) : [];
    var all = words.slice();
    words.forEach(function (w) {
      if (w.slice(-1) === "s") { all.push(w.slice(0, -1)); }
      all.push(w + "s");
    });
    return all;
  }

  function mantissa(text) {
    if (PLAIN.test(text)) { return Number(text); }
    if (GROUPED.test(text)) { return Number(text.replace(/[, _]/g, "")); }
    if (text.indexOf(",") >= 0) {
      throw new AnswerError("commas group thousands (1,200,000); a decimal point is a point (1.5)");
    }
    throw new AnswerError(quoted(text) + " is not a number");
  }

  function superscriptDigits(text) {
    return text.replace(/[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]/g, function (c) {
      return c === "⁻" ? "-" : c === "⁺" ? "+" : String(SUPERSCRIPT.indexOf(c));
    });
  }

  /* The number `text` means, or an AnswerError saying why there is none.
     `unit`: the problem's unit; a trailing word naming it is ignored. */
  function parse(text, unit) {
    unit = unit || "";
    var s = String(text).trim().replace(/[\u2212\u2013]/g, "-").replace(/[\u00a0\u2007\u2009\u202f]/g, " ");
    var words = s.split(/\s+/);
    if (words.length > 1 && unitWords(unit).indexOf(words[words.length - 1].toLowerCase()) >= 0) {
      s = words.slice(0, -1).join(" ");
    }
    if (!s) { throw new AnswerError("text is empty: type a number first"); }
    if (s.indexOf("/") >= 0) {
      var parts = s.split("/");
      if (parts.length > 2) { throw new AnswerError("a fraction has one slash (8/3)"); }
      var top = parse(parts[0]), bottom = parse(parts[1]);
      if (bottom === 0) { throw new AnswerError("the fraction divides by zero"); }
      return top / bottom;
    }
    var scale = 1;
    if (s.slice(-1) === "%") {
      s = s.slice(0, -1).trim();
      scale = 0.01;
    } else {
      var suffix = /^(.*?)\s*([A-Za-z]+)$/.exec(s);
      if (suffix && suffix[1]) {
        var word = suffix[2];
        var factor = Object.prototype.hasOwnProperty.call(SCALES, word) ? SCALES[word]
          : WORDS.indexOf(word.toLowerCase()) >= 0 ? SCALES[word.toLowerCase()] : null;
        if (factor === null) {
          throw new AnswerError(quoted(word) + " is not a scale this page reads (k, M, B or billion, T, GB, GiB)");
        }
        if (word === "B" && unit.toLowerCase() === "bytes") {
          throw new AnswerError("B alone could mean bytes or billions here: write 1.2e9, 1.2 billion or 1.2 GB");
        }
        s = suffix[1];
        scale = factor;
        if (/[eE^*⁰¹²³⁴⁵⁶⁷⁸⁹]/.test(s)) {
          throw new AnswerError("write a power of ten or a scale word, not both");
        }
      }
    }
    var value, power = POWER.exec(s) || POWER_SUPERSCRIPT.exec(s);
    if (power) {
      var exponent = parseInt(superscriptDigits(power[2]), 10);
      value = (power[1] ? mantissa(power[1]) : 1) * Math.pow(10, exponent);
    } else {
      value = mantissa(s);
    }
    value *= scale;
    if (!isFinite(value)) { throw new AnswerError("the number is too large"); }
    return value;
  }

  /* Whether `value` counts as `answer`: within `tolerance` of it, relatively (an exact
     tolerance still allows the last bits a decimal reading moves: 1e-12). */
  function isWithin(value, answer, tolerance) {
    return Math.abs(value - answer) <= Math.max(tolerance, 1e-12) * Math.abs(answer);
  }

  /* A number as the verdict shows it: grouped digits, or a power of ten when very large
     or small. */
  function shown(value) {
    var size = Math.abs(value);
    if (size !== 0 && (size >= 1e15 || size < 1e-3)) {
      var parts = value.toExponential(3).split("e");
      return parts[0].replace(/\.?0+$/, "") + " × 10^" + Number(parts[1]);
    }
    if (Number.isInteger(value)) { return value.toLocaleString("en-US"); }
    return String(Number(value.toPrecision(6)));
  }

  /* A relative miss in percent with the precision it has: whole percents from 10 %, two
     significant digits below (6,401 for 6,400 is 0.016 % too high, not 1 %). */
  function percent(miss) {
    return (miss >= 10 ? String(Math.round(miss)) : String(Number(miss.toPrecision(2)))) + "%";
  }

  /* How far a wrong answer is, in words: a percentage within a factor of two, else the factor. */
  function distance(value, answer) {
    var high = Math.abs(value) > Math.abs(answer);
    if (answer === 0 || value === 0 || (value < 0) !== (answer < 0)) {
      return "has the wrong sign or size";
    }
    var ratio = Math.abs(value / answer);
    if (ratio < 2 && ratio > 0.5) {
      return "is " + percent(Math.abs(ratio - 1) * 100) + " too " + (high ? "high" : "low");
    }
    var factor = high ? ratio : 1 / ratio;
    return "is too " + (high ? "high" : "low") + ", by a factor of about " +
      (factor < 10 ? factor.toFixed(1) : shown(Number(factor.toPrecision(2))));
  }

  function setup(form) {
    var input = form.querySelector("input.ffn-problem-input");
    var result = form.querySelector(".ffn-result");
    var answer = Number(form.getAttribute("data-answer"));
    var tolerance = Number(form.getAttribute("data-tolerance"));
    var unit = form.getAttribute("data-unit") || "";
    var answerText = form.getAttribute("data-answer-text");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var value;
      form.classList.remove("ffn-right", "ffn-wrong");
      if (!input.value.trim()) {
        input.setAttribute("aria-invalid", "true");
        result.textContent = "Type a number first.";
        return;
      }
      try {
        value = parse(input.value, unit);
      } catch (err) {
        if (!(err instanceof AnswerError)) { throw err; }
        input.setAttribute("aria-invalid", "true");
        result.textContent = "Cannot read that: " + err.message + ".";
        return;
      }
      input.removeAttribute("aria-invalid");
      var right = isWithin(value, answer, tolerance);
      form.classList.add(right ? "ffn-right" : "ffn-wrong");
      var read = input.value.trim() === shown(value) ? "" : " (read as " + shown(value) + ")";
      result.textContent = right
        ? "Right" + read + ". The build computed " + answerText + (unit ? " " + unit : "") + "."
        : "Not yet: your answer" + read + " " + distance(value, answer) + ". Try again, or open the hint.";
    });
  }

  window.ffnProblems = {
    parse: parse, isWithin: isWithin, shown: shown, distance: distance, AnswerError: AnswerError
  };

  function init() {
    document.querySelectorAll("form.ffn-problem-form").forEach(setup);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

/* Explorables: the chapter's figures with controls, computed in the browser.
   This file holds what every explorable uses: the formulas shared by several of them,
   controls, the figure and the wiring. Each kind adds itself from its own file
   (width.js, parameters.js, compute.js, moe.js), loaded after this one and only on
   its page. The formulas are a port of ffnbook (ffnbook/explorables.py and what it
   calls); tests/test_explorables_browser.py runs them in Chromium on hundreds of
   settings and compares every result with Python's. The page supplies the model
   sheet's inputs as JSON (bookext/content/explorables.py). */
(function () {
  "use strict";

  const F = {};
  // ffnbook.parameters.ffn_param_count and model_parameters.gated_ffn_param_count
  F.ffnParams = (d, ff, bias, gated) =>
    (gated ? 3 : 2) * d * ff + (bias ? (gated ? 2 : 1) * ff + d : 0);
  // ffnbook.parameters.attention_param_count
  F.attnParams = (d, h, kv, bias, dh) => {
    const dq = h * dh, dkv = kv * dh;
    return 2 * d * dq + 2 * d * dkv + (bias ? dq + 2 * dkv + d : 0);
  };
  // ffnbook.model_parameters.mla_param_count
  F.mlaParams = (d, c) => {
    const qk = c.qk_nope_head_dim + c.qk_rope_head_dim, h = c.n_heads;
    return d * c.q_lora_rank + c.q_lora_rank + c.q_lora_rank * h * qk +
      d * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank +
      c.kv_lora_rank * h * (c.qk_nope_head_dim + c.v_head_dim) + h * c.v_head_dim * d;
  };
  // ffnbook.compute.ffn_flops_per_token
  F.ffnFlops = (d, ff, gated, nActive) => 2 * (gated ? 3 : 2) * d * ff * nActive;

  // explorables.model_variant: m is a model of the page's data, s the changes.
  F.variant = (m, s) => {
    const v = Object.assign({}, m);
    if (s.n_layers != null) {
      v.L = s.n_layers;
      if (m.moeL) v.moeL = s.n_layers - (m.L - m.moeL);
    }
    if (s.d_model != null) {
      const scale = (w) => Math.floor((2 * w * s.d_model + m.d) / (2 * m.d));
      v.d = s.d_model; v.ff = scale(m.ff); v.ffd = scale(m.ffd);
      if (m.h * m.dh === m.d) v.dh = s.d_model / m.h; // heads that split d_model still do
    }
    if (s.vocab_size != null) v.V = s.vocab_size;
    if (s.n_kv_heads != null) v.kv = s.n_kv_heads;
    if (s.d_ff != null) { v.ff = s.d_ff; if (!m.moeL) v.ffd = s.d_ff; }
    if (s.n_experts != null) v.E = s.n_experts;
    if (s.experts_per_token != null) v.k = s.experts_per_token;
    if (s.n_shared_experts != null) v.S = s.n_shared_experts;
    if (s.tied_head != null) v.tied = s.tied_head;
    return v;
  };

  // ffnbook.model_parameters.parameter_breakdown, for a variant v.
  F.breakdown = (v, mla) => {
    const d = v.d, encdec = v.arch === "encoder-decoder";
    const cross = encdec ? v.L / 2 : 0;
    const oneAttn = v.mla ? F.mlaParams(d, mla) : F.attnParams(d, v.h, v.kv, v.bias, v.dh);
    const dense = (v.L - v.moeL) * F.ffnParams(d, v.ffd, v.bias, v.gated);
    const expert = F.ffnParams(d, v.ff, v.bias, v.gated);
    const b = {
      embeddings: v.V * d * (v.tied ? 1 : 2) + v.pos * d,
      attention: (v.L + cross) * oneAttn,
      ffn: dense + v.moeL * (v.E + v.S) * expert,
      ffn_active: dense + v.moeL * (v.k + v.S) * expert,
      router: v.moeL * v.E * d,
      norms: (v.bias ? 2 * d : d) * (2 * v.L + cross + (encdec ? 2 : 1)),
      other: v.pool ? d * d + d : 0,
    };
    const rest = b.embeddings + b.attention + b.router + b.norms + b.other;
    b.total = rest + b.ffn;
    b.total_active = rest + b.ffn_active;
    return b;
  };

  // explorables.parameter_state
  const nf = new Intl.NumberFormat("en-US");
  const fmt = {
    int: (v) => (v == null ? "not computed" : nf.format(Math.round(v))),
    pct: (v) => (v == null ? "not computed" : (100 * v).toFixed(1) + "%"),
    x: (v) => (v == null ? "not computed" : +v.toPrecision(4) + "\u00d7"),
    ratio: (v) => String(+v.toFixed(4)),
    b: (v) => (v / 1e9).toFixed(2) + "\u00a0billion", // never "46.70" at a line's end and "billion" below
  };
  const esc = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  let serial = 0;

  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs) if (attrs[k] != null && attrs[k] !== false) e.setAttribute(k, attrs[k]);
    for (const k of kids) e.append(k);
    return e;
  }

  // A labelled control; returns {get, set, el}. kind: "range" (over a list of values),
  // "select" (options [value, text]) or "check".
  function control(ui, key, label, kind, note) {
    const id = ui.id + "-" + key, out = h("output", { for: id, "aria-live": "off" });
    const input = kind === "select" ? h("select", { id: id, "data-key": key })
      : h("input", { id: id, "data-key": key, type: kind === "check" ? "checkbox" : "range", min: 0, step: 1 });
    const c = { key: key, kind: kind, input: input, out: out, values: [], fmt: String };
    const row = kind === "check" ? h("div", { class: "ffn-x-ctl ffn-x-check" }, input, h("label", { for: id }, label))
      : h("div", { class: "ffn-x-ctl" }, h("label", { for: id }, label), input, kind === "range" ? out : "");
    if (note) { const nid = id + "-note"; row.append(h("span", { class: "ffn-x-note", id: nid }, note)); input.setAttribute("aria-describedby", nid); }
    c.setValues = (values, value, format, ticks) => {
      c.values = values; c.fmt = format || String;
      if (kind === "select") {
        input.replaceChildren(...values.map(([v, t]) => h("option", { value: String(v) }, t)));
      } else {
        input.max = values.length - 1;
        if (ticks) {
          const list = h("datalist", { id: id + "-marks" }, ...ticks.map(([v, t]) => h("option", { value: values.indexOf(v), label: t })));
          row.querySelector("datalist")?.remove(); row.append(list); input.setAttribute("list", list.id);
        }
      }
      c.set(value);
    };
    c.set = (value) => {
      if (kind === "check") input.checked = !!value;
      else if (kind === "select") input.value = String(value);
      else input.value = Math.max(0, c.values.indexOf(value));
      c.show();
    };
    c.get = () => {
      if (kind === "check") return input.checked;
      if (kind === "select") { const o = c.values.find(([v]) => String(v) === input.value); return o ? o[0] : null; }
      return c.values[+input.value];
    };
    c.show = () => {
      if (kind !== "range") return;
      const v = c.get(), t = c.fmt(v);
      out.textContent = t; out.dataset.value = v; input.setAttribute("aria-valuetext", t);
    };
    input.addEventListener("input", () => { c.show(); ui.changed(c); });
    ui.controls.append(row);
    ui.c[key] = c;
    return c;
  }

  // The figure (SVG with the summary as its text alternative), results and live summary.
  function makeUI(box) {
    const id = box.id + "-x", ui = { id: id, c: {}, outs: {} };
    ui.controls = h("div", { class: "ffn-x-controls" });
    ui.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    ui.summary = h("p", { class: "ffn-x-summary", id: id + "-summary", "aria-live": "polite" });
    ui.svg.setAttribute("role", "img");
    ui.svg.setAttribute("aria-labelledby", ui.summary.id);
    ui.results = h("dl", { class: "ffn-x-results" });
    // The figure is drawn at the width it is shown (its box's own width, never more), so
    // its text keeps its size on a phone and nothing is cut off at the right.
    ui.W = () => {
      const box = ui.svg.parentNode, style = getComputedStyle(box);
      const inner = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return Math.floor(Math.min(720, Math.max(200, inner || 640)));
    };
    let timer = null;
    ui.show = (values, svg, summary) => {
      for (const key in ui.outs) {
        const [o, format] = ui.outs[key], v = values[key];
        o.textContent = format(v); o.dataset.value = v == null ? "" : String(v);
      }
      ui.svg.setAttribute("viewBox", "0 0 " + svg[0] + " " + svg[1]);
      ui.svg.innerHTML = svg[2];
      // Announced once the reader pauses, not at every step of a held arrow key.
      clearTimeout(timer);
      const say = () => { if (ui.summary.textContent !== summary) ui.summary.textContent = summary; };
      if (ui.ready) timer = setTimeout(say, 300);
      else say();
      ui.ready = true;
    };
    box.querySelector(".ffn-x-app").append(ui.controls, h("figure", { class: "ffn-x-figure" }, ui.svg), ui.summary, ui.results);
    return ui;
  }

  const INK = "#111111", GRID = "#bbbbbb";
  const text = (x, y, t, a) => `<text x="${x}" y="${y}"${a ? " " + a : ""}>${esc(t)}</text>`;
  const line = (x1, y1, x2, y2, a) => `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" ${a}/>`;
  // The width a text takes at a font size (explorables.css sets 13 px sans-serif), a little
  // generously: labels are placed from it before the browser has drawn them.
  const textWidth = (t, size) => String(t).length * 0.62 * (size || 13);
  // Lines of at most `width` pixels, broken between words.
  function wrap(t, width, size) {
    const lines = [];
    for (const word of String(t).split(" ")) {
      const last = lines.length ? lines[lines.length - 1] : null;
      if (last != null && textWidth(last + " " + word, size) <= width) lines[lines.length - 1] = last + " " + word;
      else lines.push(word);
    }
    return lines;
  }
  // A text of several lines from (x, y), `lead` pixels apart; returns [svg, height].
  function block(x, y, t, width, a, size, lead) {
    const lines = wrap(t, width, size), dy = lead || 16;
    return [lines.map((l, i) => text(x, y + i * dy, l, a)).join(""), lines.length * dy];
  }
  // Labels that never overlap: each is tried at its candidate places in turn and goes to the
  // first that stays inside the figure and clear of everything placed before (boxes: taken).
  // A candidate is [x, y (baseline), anchor]; the label's box is estimated by textWidth.
  function placer(W, H) {
    const taken = [];
    const box = (x, y, w, anchor, size) => {
      const left = anchor === "end" ? x - w : anchor === "middle" ? x - w / 2 : x, h = size || 13;
      return [left, y - h * 0.8, left + w, y + h * 0.25];
    };
    const free = (b) => b[0] >= 1 && b[2] <= W - 1 && b[1] >= 0 && b[3] <= H &&
      taken.every((o) => b[2] + 3 <= o[0] || o[2] + 3 <= b[0] || b[3] + 1 <= o[1] || o[3] + 1 <= b[1]);
    return {
      block: (x0, y0, x1, y1) => { taken.push([Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)]); },
      put: (t, candidates, a, size) => {
        const w = textWidth(t, size);
        for (const [x, y, anchor] of candidates) {
          const b = box(+x, +y, w, anchor, size);
          if (free(b)) { taken.push(b); return text(x, y, t, (anchor && anchor !== "start" ? `text-anchor="${anchor}" ` : "") + (a || "")); }
        }
        return "";  // no room anywhere: left out rather than drawn over another label
      },
    };
  }

  function range(lo, hi, step) { const a = []; for (let v = lo; v <= hi; v += step) a.push(v); return a; }
  function withValue(values, v) { return Array.from(new Set(values.concat([v]))).sort((a, b) => a - b); }
  function ladder(steps) { let a = []; for (const [lo, hi, step] of steps) a = a.concat(range(lo, hi, step)); return Array.from(new Set(a)); }

  const K = {};
  function start(box) {
    const data = JSON.parse(box.querySelector(".ffn-x-data").textContent), ui = makeUI(box);
    const settings = () => { const s = {}; for (const k in ui.c) s[k] = ui.c[k].get(); return s; };
    ui.changed = (c) => {
      if (c.key === "model" && ui.reset) ui.reset(c.get());
      const s = settings();
      if (ui.before) ui.before(s, c);
      ui.update(s);
    };
    K[box.dataset.kind](ui, data);
    for (const [key, label, format] of ui.spec) {
      const o = h("output", { "aria-live": "off", "data-key": key });
      ui.outs[key] = [o, format];
      ui.results.append(h("div", {}, h("dt", {}, label), h("dd", {}, o)));
    }
    ui.update(settings());
    let resized = null;
    window.addEventListener("resize", () => { clearTimeout(resized); resized = setTimeout(() => ui.update(settings()), 200); });
  }

  const boxes = new Map();
  document.querySelectorAll(".ffn-x[data-kind]").forEach((box) => boxes.set(box, box.dataset.kind));
  // A kind's file registers it; its boxes start at once (the page is parsed: scripts are deferred).
  function register(kind, setup) {
    K[kind] = setup;
    for (const [box, k] of boxes) if (k === kind) start(box);
  }
  window.ffnExplorables = { formulas: F, register, fmt, nf, text, line, h, control, range, withValue, ladder,
    INK, GRID, textWidth, wrap, block, placer };
})();

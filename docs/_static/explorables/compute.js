/* Explorables: FLOPs per token against sequence length (compute.md). See core.js. */
(function () {
  "use strict";
  const X = window.ffnExplorables, F = X.formulas, fmt = X.fmt, nf = X.nf, text = X.text, line = X.line;
  const { control, range, withValue, label, INK } = X, GREY = "#666666";

  // explorables.compute_state; c holds build-time values from ffnbook.compute.
  F.compute = (c, n) => {
    const attended = c.window == null ? n : Math.min(n, c.window);
    const r = { ffn: c.ffn, projections: null, scores: null, attention: null, attended: attended,
      window: c.window, crossover: c.cross, crossover_reached: null, scores_over_ffn: null,
      context_length: c.ctx, beyond_context: c.beyond, note: c.note };
    if (c.score == null) return r;
    r.scores = c.score * attended;
    r.scores_over_ffn = r.scores / c.ffn;
    r.crossover_reached = c.window == null || c.cross <= c.window;
    if (c.proj != null) { r.projections = c.proj; r.attention = c.proj + r.scores; }
    return r;
  };

  X.register("compute", (ui, data) => {
    const P = data.palette, names = Object.keys(data.models);
    const ns = range(16, 80, 1).map((k) => Math.round(Math.pow(2, k / 4)));
    control(ui, "model", "Model", "select").setValues(names.map((n) => [n, n]), data.initial.model);
    control(ui, "n_ctx", "Sequence length n (log scale)", "range").setValues(withValue(ns, data.initial.n_ctx), data.initial.n_ctx, fmt.int);
    ui.spec = [["ffn", "FFN FLOPs per token", fmt.int], ["projections", "Attention projections", fmt.int],
      ["scores", "Attention scores at this n", fmt.int], ["scores_over_ffn", "Scores / FFN", fmt.x],
      ["crossover", "Crossover n*", fmt.int], ["context_length", "Trained context", (v) => (v == null ? "not given" : fmt.int(v))],
      ["window", "Sliding window", (v) => (v == null ? "none" : fmt.int(v))]];
    ui.update = (s) => {
      const c = data.models[s.model], r = F.compute(c, s.n_ctx);
      const W = ui.W(), x0 = 70, x1 = W - 20, y0 = 20, y1 = 200, nlo = ns[0], nhi = ns[ns.length - 1];
      const X = (n) => (x0 + (x1 - x0) * Math.log2(n / nlo) / Math.log2(nhi / nlo)).toFixed(1);
      let g = "";
      if (c.score == null) {
        g = text(x0, 110, s.model + ": attention not computed (head size not confirmed)");
      } else {
        const sc = (n) => c.score * (c.window == null ? n : Math.min(n, c.window));
        const lo = Math.min(c.ffn, sc(nlo)) / 2, hi = Math.max(c.ffn, sc(nhi)) * 2;
        const Y = (f) => (y1 - (y1 - y0) * Math.log10(f / lo) / Math.log10(hi / lo)).toFixed(1);
        for (let e = Math.ceil(Math.log10(lo)); e <= Math.log10(hi); e++) g += line(x0, Y(10 ** e), x1, Y(10 ** e), `stroke="#e3e3e3"`) + text(x0 - 6, +Y(10 ** e) + 4, "1e" + e, 'text-anchor="end" font-size="11"');
        for (let k = 4; k <= 20; k += 2) g += line(X(2 ** k), y1, X(2 ** k), y1 + 5, `stroke="${INK}"`) + text(X(2 ** k), y1 + 18, k >= 20 ? 2 ** (k - 20) + "M" : k >= 10 ? 2 ** (k - 10) + "k" : 2 ** k, 'text-anchor="middle" font-size="11"');
        g += line(x0, y1, x1, y1, `stroke="${INK}"`) + line(x0, y0, x0, y1, `stroke="${INK}"`);
        const pts = ns.map((n) => X(n) + "," + Y(sc(n))).join(" ");
        g += line(x0, Y(c.ffn), x1, Y(c.ffn), `stroke="${P[0]}" stroke-width="3"`) + `<polyline points="${pts}" fill="none" stroke="${P[1]}" stroke-width="3" stroke-dasharray="8 3"/>`;
        if (c.ctx != null) g += line(X(c.ctx), y0, X(c.ctx), y1, `stroke="${GREY}" stroke-dasharray="6 3"`) + label(X(c.ctx), y1 - 8, "trained context", W);
        if (c.window != null) g += line(X(c.window), y0, X(c.window), y1, `stroke="${P[2]}" stroke-dasharray="8 3 2 3"`) + text(+X(c.window) - 4, y0 + 44, "window", 'text-anchor="end"');
        if (c.cross >= nlo && c.cross <= nhi) g += line(X(c.cross), y0, X(c.cross), y1, `stroke="${INK}" stroke-dasharray="2 3"`) + label(X(c.cross), y0 + 10, "n* " + fmt.int(c.cross) + (r.crossover_reached ? "" : " (never reached)"), W);
        g += line(X(s.n_ctx), y0, X(s.n_ctx), y1, `stroke="${INK}" stroke-width="2"`) + `<circle cx="${X(s.n_ctx)}" cy="${Y(r.scores)}" r="5" fill="${P[1]}"/><circle cx="${X(s.n_ctx)}" cy="${Y(c.ffn)}" r="5" fill="${P[0]}"/>`;
        g += text(x0 + 6, +Y(c.ffn) - 7, "FFN") + text(x1, +Y(sc(nhi)) + (sc(nhi) > c.ffn ? 16 : -7), "attention scores", 'text-anchor="end"');
      }
      g += text(x0, y1 + 36, "FLOPs per token and layer against n (log scales)");
      const context = r.context_length == null ? "" : `, ${r.beyond_context ? "beyond" : "within"} the trained context of ${fmt.int(r.context_length)}`;
      const verdict = r.scores == null ? "attention is not computed for it" :
        `attention's scores cost ${fmt.int(r.scores)} (${fmt.x(r.scores_over_ffn)} the FFN), and they ${r.crossover_reached ? "catch up with the FFN at n* = " + fmt.int(r.crossover) + context : "never catch up: the window of " + fmt.int(r.window) + " stops them short of n* = " + fmt.int(r.crossover)}`;
      ui.show(r, [W, y1 + 46, g], `${s.model} at n = ${fmt.int(s.n_ctx)}: the FFN costs ${fmt.int(r.ffn)} FLOPs per token and layer; ${verdict}.` + (r.note && r.crossover_reached !== false ? ` Note: ${r.note}.` : ""));
    };
  });

})();

/* Explorables: FLOPs per token against sequence length (compute.md). See core.js. */
(function () {
  "use strict";
  const X = window.ffnExplorables, F = X.formulas, fmt = X.fmt, nf = X.nf, text = X.text, line = X.line;
  const { control, range, withValue, INK, block, placer, textWidth } = X;

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
    const P = data.palette, names = data.names;
    const ns = range(16, 80, 1).map((k) => Math.round(Math.pow(2, k / 4)));
    control(ui, "model", "Model", "select").setValues(names.map((n) => [n, n]), data.initial.model);
    control(ui, "n_ctx", "Sequence length n (log scale)", "range").setValues(withValue(ns, data.initial.n_ctx), data.initial.n_ctx, fmt.int);
    const windowText = (v) => (v != null ? fmt.int(v) : data.models[ui.c.model.get()].window_known ? "none" : "not given");
    ui.spec = [["ffn", "FFN FLOPs per token and layer", fmt.int], ["projections", "Attention projections, per token and layer", fmt.int],
      ["scores", "Attention scores at this n, per token and layer", fmt.int], ["scores_over_ffn", "Scores / FFN", fmt.x],
      ["crossover", "Crossover n*", fmt.int], ["context_length", "Trained context", (v) => (v == null ? "not given" : fmt.int(v))],
      ["window", "Sliding window", windowText]];
    ui.update = (s) => {
      const c = data.models[s.model], r = F.compute(c, s.n_ctx);
      const W = ui.W(), x0 = 46, x1 = W - 14, y0 = 14, y1 = 200, nlo = ns[0], nhi = ns[ns.length - 1];
      const X = (n) => (x0 + (x1 - x0) * Math.log2(n / nlo) / Math.log2(nhi / nlo)).toFixed(1);
      const L = placer(W, y1 + 24);
      let g = "", labels = "", y = y1 + 30;
      // The key below the plot names each line by a sample of it, so no label covers data.
      const key = [];
      if (c.score == null) {
        g = block(x0, 110, s.model + ": attention not computed (head size not confirmed)", x1 - x0)[0];
      } else {
        const sc = (n) => c.score * (c.window == null ? n : Math.min(n, c.window));
        const lo = Math.min(c.ffn, sc(nlo)) / 2, hi = Math.max(c.ffn, sc(nhi)) * 2;
        const Y = (f) => (y1 - (y1 - y0) * Math.log10(f / lo) / Math.log10(hi / lo)).toFixed(1);
        for (let e = Math.ceil(Math.log10(lo)); e <= Math.log10(hi); e++) {
          g += line(x0, Y(10 ** e), x1, Y(10 ** e), `stroke="#e3e3e3"`);
          labels += L.put("1e" + e, [[x0 - 5, +Y(10 ** e) + 4, "end"]], 'font-size="11"', 11);
        }
        const every = (x1 - x0) / 8 >= 34 ? 2 : 4;
        for (let k = 4; k <= 20; k += every) {
          g += line(X(2 ** k), y1, X(2 ** k), y1 + 5, `stroke="${INK}"`);
          labels += L.put(k >= 20 ? 2 ** (k - 20) + "M" : k >= 10 ? 2 ** (k - 10) + "k" : 2 ** k, [[X(2 ** k), y1 + 18, "middle"]], 'font-size="11"', 11);
        }
        g += line(x0, y1, x1, y1, `stroke="${INK}"`) + line(x0, y0, x0, y1, `stroke="${INK}"`);
        const pts = ns.map((n) => X(n) + "," + Y(sc(n))).join(" ");
        const ffnStyle = `stroke="${P[1]}" stroke-width="3"`, scoreStyle = `stroke="${P[0]}" stroke-width="3" stroke-dasharray="8 3"`;
        g += line(x0, Y(c.ffn), x1, Y(c.ffn), ffnStyle) + `<polyline points="${pts}" fill="none" ${scoreStyle}/>`;
        key.push(["FFN", ffnStyle], ["attention scores", scoreStyle]);
        if (c.ctx != null) key.push(["trained context " + fmt.int(c.ctx), `stroke="#666666" stroke-width="1.5" stroke-dasharray="6 3"`, c.ctx]);
        if (c.window != null) key.push(["window " + fmt.int(c.window), `stroke="${P[2]}" stroke-width="1.5" stroke-dasharray="8 3 2 3"`, c.window]);
        if (c.cross >= nlo && c.cross <= nhi) key.push(["crossover n* " + fmt.int(c.cross) + (r.crossover_reached ? "" : " (never reached)"), `stroke="${INK}" stroke-width="1.5" stroke-dasharray="2 3"`, c.cross]);
        for (const [, style, n] of key) if (n != null) g += line(X(n), y0, X(n), y1, style);
        // This n: the two costs as dots joined by a short line, not a line across the plot,
        // so the marks stay visible at any n.
        const xn = X(s.n_ctx), yf = Y(c.ffn), ys = Y(r.scores);
        g += line(xn, yf, xn, ys, `stroke="${INK}" stroke-width="2"`) + `<circle cx="${xn}" cy="${ys}" r="5" fill="${P[0]}"/><circle cx="${xn}" cy="${yf}" r="5" fill="${P[1]}"/>`;
      }
      let kx = x0;
      y += 14;
      for (const [name, style] of key) {
        const w = 30 + textWidth(name) + 16;
        if (kx > x0 && kx + w > x1) { kx = x0; y += 20; }
        g += line(kx, y - 4, kx + 24, y - 4, style) + text(kx + 30, y, name);
        kx += w;
      }
      const [capSvg, capH] = block(x0, y + (key.length ? 24 : 0), "FLOPs per token and layer against the sequence length n (log scales)", x1 - x0, 'font-size="12"', 12);
      g += capSvg;
      const H = y + (key.length ? 24 : 0) + capH - 6;
      const context = r.context_length == null ? "" : `, ${r.beyond_context ? "beyond" : "within"} the trained context of ${fmt.int(r.context_length)}`;
      const verdict = r.scores == null ? "attention is not computed for it" :
        `attention's scores cost ${fmt.int(r.scores)} (${fmt.x(r.scores_over_ffn)} the FFN), and they ${r.crossover_reached ? "catch up with the FFN at n* = " + fmt.int(r.crossover) + context : "never catch up: the window of " + fmt.int(r.window) + " stops them short of n* = " + fmt.int(r.crossover)}`;
      ui.show(r, [W, H, g + labels], `${s.model} at n = ${fmt.int(s.n_ctx)}: the FFN costs ${fmt.int(r.ffn)} FLOPs per token and layer; ${verdict}.` + (r.note && r.crossover_reached !== false ? ` Note: ${r.note}.` : ""));
    };
  });

})();

/* Explorables: the FFN's width (width.md). See core.js. */
(function () {
  "use strict";
  const X = window.ffnExplorables, F = X.formulas, fmt = X.fmt, nf = X.nf, text = X.text, line = X.line;
  const { control, range, withValue, ladder, label, INK, GRID } = X;

  // Python's round(): halves go to the even neighbour.
  F.round = (x) => {
    const f = Math.floor(x), d = x - f;
    return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
  };
  // ffnbook.width.llama_ffn_width
  F.llamaWidth = (d, multipleOf, mult) => {
    let h = Math.trunc(2 * (4 * d) / 3);
    if (mult != null) h = Math.trunc(mult * h);
    return multipleOf * Math.floor((h + multipleOf - 1) / multipleOf);
  };
  // explorables.width_state
  F.width = (s) => {
    const d = s.d_model;
    const ff = s.gated ? F.llamaWidth(d, s.multiple_of, s.ratio / 4) : F.round(s.ratio * d);
    const ffn = F.ffnParams(d, ff, s.bias, s.gated), att = F.attnParams(d, 1, 1, s.bias);
    return { d_ff: ff, d_ff_over_d_model: ff / d, ffn_params: ffn, attention_params: att,
      ffn_share: ffn / (ffn + att), ffn_in_d2: ffn / (d * d) };
  };

  X.register("width", (ui, data) => {
    const P = data.palette, init = data.initial, models = data.models;
    const sheetWidths = Array.from(new Set(models.map((m) => m[1]))).sort((a, b) => a - b);
    const dms = sheetWidths.reduce(withValue, withValue(ladder([[64, 1024, 64], [1024, 4096, 128], [4096, 8192, 256], [8192, 20480, 512]]), init.d_model));
    control(ui, "gated", "FFN", "select").setValues([[false, "classic: two matrices"], [true, "gated: three matrices"]], init.gated);
    control(ui, "d_model", "Model width d_model", "range").setValues(dms, init.d_model, fmt.int,
      sheetWidths.map((w) => [w, models.filter((m) => m[1] === w).map((m) => m[0]).join(", ")]));
    control(ui, "ratio", "Width ratio r", "range", "Classic: d_ff = r \u00b7 d_model. Gated: LLaMA's rule, two-thirds of 4 \u00b7 d_model times r / 4, rounded up.")
      .setValues(range(5, 80, 1).map((k) => k / 10), init.ratio, (v) => v.toFixed(1));
    control(ui, "multiple_of", "Gated: round d_ff up to a multiple of", "select").setValues([1, 8, 64, 128, 256, 512, 1024, 4096].map((v) => [v, nf.format(v)]), init.multiple_of);
    control(ui, "bias", "Biases in the FFN and in attention", "check").set(init.bias);
    ui.spec = [["d_ff", "FFN width d_ff", fmt.int], ["d_ff_over_d_model", "d_ff / d_model", fmt.ratio],
      ["ffn_params", "FFN parameters", fmt.int], ["attention_params", "Attention parameters", fmt.int],
      ["ffn_share", "FFN share of the block", fmt.pct]];
    ui.update = (s) => {
      ui.c.multiple_of.input.disabled = !s.gated;
      const r = F.width(s), W = ui.W(), x0 = 40, x1 = W - 20;
      const top = Math.max(8, Math.ceil(r.d_ff_over_d_model));
      const X = (v) => (x0 + (x1 - x0) * Math.min(v, top) / top).toFixed(1);
      let g = line(x0, 96, x1, 96, `stroke="${INK}"`);
      for (let t = 0; t <= top; t += top > 8 ? 2 : 1) g += line(X(t), 96, X(t), 101, `stroke="${INK}"`) + text(X(t), 114, t, 'text-anchor="middle"');
      g += text(x0, 134, "d_ff / d_model of this FFN and of the sheet's dense models");
      for (const [v, name] of [[4, "4"], [8 / 3, "8/3"]]) g += line(X(v), 14, X(v), 96, `stroke="${GRID}" stroke-dasharray="4 4"`) + text(X(v), 12, name, 'text-anchor="middle"');
      const groups = {};
      for (const [, d, ff, gated] of models) { const k = (ff / d).toFixed(3) + gated; (groups[k] = groups[k] || [ff / d, gated, 0])[2] += 1; }
      for (const k in groups) {
        const [v, gated, n] = groups[k], y = gated ? 74 : 54, x = +X(v);
        g += gated ? `<path d="M${x} ${y - 6}l6 6-6 6-6-6z" fill="${P[1]}"/>` : `<circle cx="${x}" cy="${y}" r="5.5" fill="${P[0]}"/>`;
        if (n > 1) g += text(x + 8, y + 4, "\u00d7" + n, 'font-size="11"');
      }
      g += text(x1, 54 + 4, "classic", 'text-anchor="end" font-size="11"') + text(x1, 74 + 4, "gated", 'text-anchor="end" font-size="11"');
      const xr = X(r.d_ff_over_d_model);
      g += line(xr, 26, xr, 96, `stroke="${INK}" stroke-width="3"`) + label(xr, 36, "this FFN: " + fmt.ratio(r.d_ff_over_d_model), W);
      // One block: FFN against attention.
      const bw = x1 - x0, fw = bw * r.ffn_share;
      g += `<rect x="${x0}" y="150" width="${fw.toFixed(1)}" height="22" fill="${P[1]}"/><rect x="${(x0 + fw).toFixed(1)}" y="150" width="${(bw - fw).toFixed(1)}" height="22" fill="${P[0]}"/>`;
      g += text(x0 + 4, 166, "FFN " + fmt.pct(r.ffn_share), 'font-weight="bold"') + text(x0, 190, "one block's parameters: FFN (orange) and attention (blue)");
      ui.show(r, [W, 200, g], `A ${s.gated ? "gated" : "classic"} FFN with d_model ${fmt.int(s.d_model)} and r ${s.ratio.toFixed(1)} is ${fmt.int(r.d_ff)} wide (d_ff / d_model ${fmt.ratio(r.d_ff_over_d_model)}) and holds ${fmt.int(r.ffn_params)} parameters against attention's ${fmt.int(r.attention_params)}: ${fmt.pct(r.ffn_share)} of the block.` +
        near(models, r.d_ff_over_d_model));
    };
  });
  function near(models, ratio) {
    const same = models.filter((m) => Math.abs(m[2] / m[1] - ratio) < 0.005).map((m) => m[0]);
    const shown = same.slice(0, 3).join(", ") + (same.length > 3 ? ` and ${same.length - 3} more` : "");
    return same.length ? ` Same ratio in the sheet: ${shown}.` : "";
  }

})();

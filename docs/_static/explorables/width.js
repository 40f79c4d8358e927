/* Explorables: the FFN's width (width.md). See core.js. */
(function () {
  "use strict";
  const X = window.ffnExplorables, F = X.formulas, fmt = X.fmt, nf = X.nf, text = X.text, line = X.line;
  const { control, range, withValue, ladder, INK, GRID, block, placer } = X;

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
    const ffn = F.ffnParams(d, ff, s.bias, s.gated), att = F.attnParams(d, 1, 1, s.bias, d);
    return { d_ff: ff, d_ff_over_d_model: ff / d, ffn_params: ffn, attention_params: att,
      ffn_share: ffn / (ffn + att), ffn_in_d2: ffn / (d * d) };
  };

  // Tick spacing on the ratio axis: a round step whose labels stand at least 28 px apart.
  const tickStep = (top, px) => [1, 2, 5, 10, 20, 50].find((s) => px * s / top >= 28) || 100;

  X.register("width", (ui, data) => {
    const P = data.palette, init = data.initial, models = data.models;
    const sheetWidths = Array.from(new Set(models.map((m) => m[1]))).sort((a, b) => a - b);
    const dms = sheetWidths.reduce(withValue, withValue(ladder([[64, 1024, 64], [1024, 4096, 128], [4096, 8192, 256], [8192, 20480, 512]]), init.d_model));
    control(ui, "gated", "FFN", "select").setValues([[false, "classic: two matrices"], [true, "gated: three matrices"]], init.gated);
    control(ui, "d_model", "Model width d_model", "range").setValues(dms, init.d_model, fmt.int,
      sheetWidths.map((w) => [w, models.filter((m) => m[1] === w).map((m) => m[0]).join(", ")]));
    control(ui, "ratio", "Classic width ratio r", "range", "Classic FFN: d_ff = r \u00b7 d_model. Gated FFN: the classic FFN's r, kept at its parameter count by LLaMA's rule: two-thirds of r \u00b7 d_model, rounded up.")
      .setValues(range(5, 80, 1).map((k) => k / 10), init.ratio, (v) => v.toFixed(1));
    control(ui, "multiple_of", "Gated: round d_ff up to a multiple of", "select").setValues([1, 8, 64, 128, 256, 512, 1024, 4096].map((v) => [v, nf.format(v)]), init.multiple_of);
    control(ui, "bias", "Biases in the FFN and in attention", "check").set(init.bias);
    ui.spec = [["d_ff", "FFN width d_ff", fmt.int], ["d_ff_over_d_model", "d_ff / d_model", fmt.ratio],
      ["ffn_params", "FFN parameters", fmt.int], ["attention_params", "Attention parameters", fmt.int],
      ["ffn_share", "FFN share of the block", fmt.pct]];
    ui.update = (s) => {
      ui.c.multiple_of.input.disabled = !s.gated;
      const r = F.width(s), W = ui.W(), x0 = 62, x1 = W - 16, axis = 112;
      const top = Math.max(8, Math.ceil(r.d_ff_over_d_model));
      const X = (v) => (x0 + (x1 - x0) * Math.min(v, top) / top).toFixed(1);
      const rows = { false: 68, true: 92 };  // the marks of classic and gated models
      const [capSvg, capH] = block(x0, axis + 38, "d_ff / d_model of this FFN and of the sheet's dense models", x1 - x0);
      const by = axis + 40 + capH, keyY = by + 36, second = W < 420 ? [x0, keyY + 20] : [x0 + 150, keyY];
      const H = second[1] + 28, L = placer(W, H);
      let g = line(x0, axis, x1, axis, `stroke="${INK}"`), labels = "";
      const step = tickStep(top, x1 - x0);
      for (let t = 0; t <= top; t += step) {
        g += line(X(t), axis, X(t), axis + 5, `stroke="${INK}"`);
        labels += L.put(t, [[X(t), axis + 18, "middle"]]);
      }
      labels += L.put("classic", [[x0 - 8, rows.false + 4, "end"]], 'font-size="11"', 11) + L.put("gated", [[x0 - 8, rows.true + 4, "end"]], 'font-size="11"', 11);
      // This FFN's ratio first: its line and label go where they belong, the rest around them.
      const xr = X(r.d_ff_over_d_model);
      L.block(+xr - 2, 36, +xr + 2, axis);
      const mine = "this FFN: " + fmt.ratio(r.d_ff_over_d_model);
      labels += L.put(mine, [[+xr + 5, 46], [+xr - 5, 46, "end"], [+xr + 5, 30], [+xr - 5, 30, "end"], [+xr + 5, 14], [+xr - 5, 14, "end"]]);
      // The sheet's models: one mark per distinct ratio, moved up or down a little where marks
      // of close ratios would cover each other; "×n" counts models of the same ratio.
      const groups = {};
      for (const [, d, ff, gated] of models) { const k = (ff / d).toFixed(3) + gated; (groups[k] = groups[k] || [ff / d, gated, 0])[2] += 1; }
      const marks = Object.values(groups).sort((a, b) => a[0] - b[0]);
      const placed = { false: [], true: [] };
      for (const [v, gated, n] of marks) {
        const x = +X(v), row = rows[gated], near = placed[gated].filter((o) => Math.abs(o[0] - x) < 12);
        const y = row + [0, -9, 9, -18, 18][Math.min(near.length, 4)];
        placed[gated].push([x, y]);
        // Shapes and colours of their own: orange and blue mean the FFN and attention.
        g += gated ? `<path d="M${x} ${y - 6}l6 6-6 6-6-6z" fill="${P[2]}"/>` : `<circle cx="${x}" cy="${y}" r="5.5" fill="#555555"/>`;
        L.block(x - 6, y - 6, x + 6, y + 6);
      }
      for (const [v, gated, n] of marks) {
        if (n < 2) continue;
        const x = +X(v), y = placed[gated].find((o) => Math.abs(o[0] - x) < 0.01)[1];
        labels += L.put("\u00d7" + n, [[x + 10, y + 4], [x - 10, y + 4, "end"], [x, y - 11, "middle"], [x, y + 20, "middle"]], 'font-size="11"', 11);
      }
      for (const [v, name] of [[4, "4"], [8 / 3, "8/3"]]) {
        g += line(X(v), 22, X(v), axis, `stroke="${GRID}" stroke-dasharray="4 4"`);
        labels += L.put(name, [[X(v), 14, "middle"], [+X(v) + 3, 14], [+X(v) - 3, 14, "end"], [X(v), 30, "middle"]]);
      }
      g += line(xr, 36, xr, axis, `stroke="${INK}" stroke-width="3"`);
      g += capSvg;
      const bw = x1 - x0, fw = bw * r.ffn_share;
      g += `<rect x="${x0}" y="${by}" width="${fw.toFixed(1)}" height="18" fill="${P[1]}"/><rect x="${(x0 + fw).toFixed(1)}" y="${by}" width="${(bw - fw).toFixed(1)}" height="18" fill="${P[0]}"/>`;
      g += `<rect x="${x0}" y="${keyY - 11}" width="12" height="12" fill="${P[1]}"/>` + text(x0 + 17, keyY, "FFN " + fmt.pct(r.ffn_share));
      g += `<rect x="${second[0]}" y="${second[1] - 11}" width="12" height="12" fill="${P[0]}"/>` + text(second[0] + 17, second[1], "attention " + fmt.pct(1 - r.ffn_share));
      g += text(x0, second[1] + 20, "of one block's parameters", 'font-size="11"');
      ui.show(r, [W, H, g + labels], `A ${s.gated ? "gated" : "classic"} FFN with d_model ${fmt.int(s.d_model)} and classic ratio r ${s.ratio.toFixed(1)} is ${fmt.int(r.d_ff)} wide (d_ff / d_model ${fmt.ratio(r.d_ff_over_d_model)}) and holds ${fmt.int(r.ffn_params)} parameters against attention's ${fmt.int(r.attention_params)}: ${fmt.pct(r.ffn_share)} of the block.` +
        near(models, r.d_ff_over_d_model));
    };
  });
  function near(models, ratio) {
    const same = models.filter((m) => Math.abs(m[2] / m[1] - ratio) < 0.005).map((m) => m[0]);
    const shown = same.slice(0, 3).join(", ") + (same.length > 3 ? ` and ${same.length - 3} more` : "");
    return same.length ? ` Same ratio in the sheet: ${shown}.` : "";
  }

})();

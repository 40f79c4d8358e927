/* Explorables: where the parameters live (parameter-count.md). See core.js. */
(function () {
  "use strict";
  const X = window.ffnExplorables, F = X.formulas, fmt = X.fmt, nf = X.nf, text = X.text, line = X.line;
  const { control, range, withValue, ladder, INK } = X;

  // explorables.parameter_state
  F.parameters = (m, s, mla) => {
    const b = F.breakdown(F.variant(m, s), mla), rest = b.router + b.norms + b.other;
    for (const [sfx, ffn, total] of [["", b.ffn, b.total], ["_active", b.ffn_active, b.total_active]]) {
      b["embeddings_share" + sfx] = b.embeddings / total;
      b["attention_share" + sfx] = b.attention / total;
      b["ffn_share" + sfx] = ffn / total;
      b["rest_share" + sfx] = rest / total;
    }
    b.ffn_share_non_embedding = b.ffn / (b.total - b.embeddings);
    return b;
  };

  // Stacked bars of shares (1 = full width), one per row: [label, {key: share}, note]. On a
  // wide figure a row's label stands left of its bar; on a narrow one, above it.
  function shareBars(rows, parts, W) {
    const labelW = Math.max(...rows.map(([label, , note]) => X.textWidth(label + ": FFN " + note)));
    const beside = W - labelW - 30 >= 300, left = beside ? labelW + 18 : 10, width = W - left - 14, bh = 22;
    const rowH = beside ? bh + 10 : bh + 28;
    let s = "", y = 10;
    const tops = [];
    rows.forEach(([label, shares, note]) => {
      const name = label + ": FFN " + note;
      if (beside) s += text(left - 8, y + bh / 2 + 4, name, 'text-anchor="end"');
      else { s += text(left, y + 13, name); y += 18; }
      tops.push(y);
      let x = left;
      for (const [key, , colour] of parts) {
        const w = width * shares[key];
        s += `<rect x="${x.toFixed(2)}" y="${y}" width="${Math.max(0, w).toFixed(2)}" height="${bh}" fill="${colour}" stroke="#fff"/>`;
        x += w;
      }
      y += beside ? rowH : bh + 10;
    });
    const bottom = y - 10, two = left + width * 2 / 3;
    s += line(two, tops[0] - 4, two, bottom + 4, `stroke="${INK}" stroke-dasharray="5 4"`) + text(two, bottom + 18, "two-thirds", 'text-anchor="middle"');
    // The key, in as many lines as the width needs.
    let kx = 10, ky = bottom + 40;
    parts.forEach(([, name, colour]) => {
      const w = 18 + X.textWidth(name) + 18;
      if (kx > 10 && kx + w > W) { kx = 10; ky += 20; }
      s += `<rect x="${kx}" y="${ky - 10}" width="12" height="12" fill="${colour}"/>` + text(kx + 16, ky, name);
      kx += w;
    });
    return [W, ky + 10, s];
  }

  // Orange is the FFN and blue attention, as in every figure; the rest in colours of their own.
  const PARTS = (P) => [["ffn", "FFN", P[1]], ["attention", "attention", P[0]], ["embeddings", "embeddings", P[2]], ["rest", "norms, router, other", "#8c8c8c"]];
  const shares = (b, sfx) => ({ ffn: b["ffn_share" + sfx], attention: b["attention_share" + sfx], embeddings: b["embeddings_share" + sfx], rest: b["rest_share" + sfx] });

  X.register("parameters", (ui, data) => {
    const P = data.palette, names = data.names;
    const pick = control(ui, "model", "Model", "select");
    control(ui, "n_layers", "Blocks (all stacks)", "range");
    control(ui, "d_model", "Model width d_model (FFN keeps its ratio)", "range");
    control(ui, "vocab_size", "Vocabulary", "range");
    control(ui, "n_kv_heads", "Key/value heads (grouped-query attention)", "select");
    control(ui, "tied_head", "Output head tied to the token embeddings", "check");
    ui.spec = [["embeddings", "Embeddings", fmt.int], ["attention", "Attention", fmt.int], ["ffn", "FFN (stored)", fmt.int],
      ["ffn_active", "FFN (active per token)", fmt.int], ["total", "Total (stored)", fmt.int], ["total_active", "Total (active per token)", fmt.int],
      ["ffn_share", "FFN share (stored)", fmt.pct], ["ffn_share_active", "FFN share (active)", fmt.pct], ["ffn_share_non_embedding", "FFN share without embeddings", fmt.pct]];
    ui.reset = (name) => {
      const m = data.models[name], c = ui.c, encdec = m.arch === "encoder-decoder";
      const lo = m.moeL && m.moeL < m.L ? m.L - m.moeL + 1 : encdec ? 2 : 1;
      c.n_layers.setValues(withValue(range(lo, Math.max(2 * m.L, 48), encdec ? 2 : 1), m.L), m.L, fmt.int);
      c.d_model.setValues(withValue([8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256].map((k) => k * m.h), m.d), m.d, fmt.int);
      c.vocab_size.setValues(withValue(ladder([[1000, 10000, 1000], [10000, 100000, 5000], [100000, 300000, 20000]]), m.V), m.V, fmt.int);
      c.n_kv_heads.setValues(m.mla ? [[m.kv, "latent attention"]] : range(1, m.h, 1).filter((k) => m.h % k === 0).map((k) => [k, nf.format(k)]), m.kv);
      c.n_kv_heads.input.disabled = m.mla;
      c.tied_head.set(m.tied);
    };
    pick.setValues(names.map((n) => [n, n]), data.initial.model);
    ui.reset(data.initial.model);
    ui.update = (s) => {
      const m = data.models[s.model], b = F.parameters(m, s, data.mla), sheet = F.parameters(m, {}, data.mla);
      const moe = b.ffn !== b.ffn_active, rows = [["as in the sheet", shares(sheet, ""), fmt.pct(sheet.ffn_share)], ["as set here", shares(b, ""), fmt.pct(b.ffn_share)]];
      // A dense model uses every parameter for every token: no "active" figures to show.
      ui.results.querySelectorAll("[data-key$=_active]").forEach((o) => { o.closest("div").hidden = !moe; });
      if (moe) {
        rows[0][0] += ", stored"; rows[1][0] += ", stored";
        rows.splice(1, 0, ["as in the sheet, active", shares(sheet, "_active"), fmt.pct(sheet.ffn_share_active)]);
        rows.push(["as set here, active", shares(b, "_active"), fmt.pct(b.ffn_share_active)]);
      }
      ui.show(b, shareBars(rows, PARTS(P), ui.W()), `${s.model} with ${fmt.int(s.n_layers)} blocks, d_model ${fmt.int(s.d_model)}, a vocabulary of ${fmt.int(s.vocab_size)} and ${s.tied_head ? "a tied" : "an untied"} output head holds ${fmt.int(b.total)} parameters: FFN ${fmt.pct(b.ffn_share)}, attention ${fmt.pct(b.attention_share)}, embeddings ${fmt.pct(b.embeddings_share)}` +
        (moe ? `; per token it uses ${fmt.int(b.total_active)}, of which FFN ${fmt.pct(b.ffn_share_active)}.` : ".") + ` As in the sheet, the FFN holds ${fmt.pct(sheet.ffn_share)}.`);
    };
  });

})();

/* Explorables: stored and active parameters of a mixture of experts (mixture-of-experts.md). See core.js. */
(function () {
  "use strict";
  const X = window.ffnExplorables, F = X.formulas, fmt = X.fmt, nf = X.nf, text = X.text, line = X.line;
  const { control, range, withValue, ladder } = X;
  // Attention, embeddings, norms and routers together: a neutral grey, not attention's blue.
  const OTHER = "#8c8c8c";

  // explorables.moe_state
  F.moe = (m, s, mla) => {
    const v = F.variant(m, s), b = F.breakdown(v, mla), denseL = v.L - v.moeL;
    const layer = F.ffnFlops(v.d, v.ff, v.gated, v.k + v.S);
    return { stored: b.total, active: b.total_active, active_fraction: b.total_active / b.total,
      ffn: b.ffn, ffn_active: b.ffn_active, router: b.router,
      ffn_share: b.ffn / b.total, ffn_share_active: b.ffn_active / b.total_active,
      ffn_flops_layer: layer, ffn_flops_layer_every_expert: F.ffnFlops(v.d, v.ff, v.gated, v.E + v.S),
      ffn_flops_all_layers: v.moeL * layer + denseL * (denseL ? F.ffnFlops(v.d, v.ffd, v.gated, 1) : 0) };
  };

  X.register("moe", (ui, data) => {
    const P = data.palette, names = data.names;
    const pick = control(ui, "model", "Model", "select");
    control(ui, "n_experts", "Routed experts per MoE layer", "range");
    control(ui, "experts_per_token", "Routed experts per token (top-k)", "range");
    control(ui, "d_ff", "Expert width d_ff", "range");
    control(ui, "n_shared_experts", "Shared experts", "range");
    ui.spec = [["stored", "Stored parameters", fmt.int], ["active", "Active per token", fmt.int], ["active_fraction", "Active fraction", fmt.pct],
      ["ffn_share", "FFN share (stored)", fmt.pct], ["ffn_share_active", "FFN share (active)", fmt.pct],
      ["ffn_flops_layer", "FFN FLOPs per token in one MoE layer", fmt.int], ["ffn_flops_layer_every_expert", "\u2026 if every expert ran", fmt.int],
      ["ffn_flops_all_layers", "FFN FLOPs per token, all layers", fmt.int]];
    const topk = (E, k) => ui.c.experts_per_token.setValues(range(1, Math.min(E, 32), 1), Math.min(k, E), fmt.int);
    ui.reset = (name) => {
      const m = data.models[name], c = ui.c;
      c.n_experts.setValues(withValue(ladder([[1, 16, 1], [16, 64, 8], [64, 256, 32]]), m.E), m.E, fmt.int);
      topk(m.E, m.k);
      c.d_ff.setValues(withValue(ladder([[256, 4096, 256], [4096, 16384, 512], [16384, 32768, 1024]]), m.ff), m.ff, fmt.int);
      c.n_shared_experts.setValues(withValue(range(0, 4, 1), m.S), m.S, fmt.int);
    };
    pick.setValues(names.map((n) => [n, n]), data.initial.model);
    ui.reset(data.initial.model);
    ui.before = (s, changed) => { if (changed === ui.c.n_experts) { topk(s.n_experts, s.experts_per_token); s.experts_per_token = ui.c.experts_per_token.get(); } };
    ui.update = (s) => {
      const m = data.models[s.model], r = F.moe(m, s, data.mla), sheet = F.moe(m, {}, data.mla);
      const W = ui.W(), top = Math.max(sheet.stored, r.stored), bars = [["as released, stored", sheet.stored, sheet.ffn],
        ["as released, active", sheet.active, sheet.ffn_active], ["as set here, stored", r.stored, r.ffn], ["as set here, active", r.active, r.ffn_active]];
      // A row's label left of its bar on a wide figure, above it on a narrow one; the total
      // in billions after the bar.
      const beside = W >= 520, left = beside ? 160 : 10, width = W - left - X.textWidth("999.99 billion") - 14;
      let g = "", y = 10;
      bars.forEach(([label, total, ffn]) => {
        if (beside) g += text(left - 8, y + 15, label, 'text-anchor="end"');
        else { g += text(left, y + 13, label); y += 18; }
        const wt = width * total / top, wf = width * ffn / top;
        g += `<rect x="${left}" y="${y}" width="${wf.toFixed(2)}" height="22" fill="${P[1]}"/><rect x="${(left + wf).toFixed(2)}" y="${y}" width="${(wt - wf).toFixed(2)}" height="22" fill="${OTHER}"/>`;
        g += text(left + wt + 6, y + 15, fmt.b(total));
        y += 32;
      });
      y += 8;
      const second = W < 300 ? [10, y + 20] : [150, y];
      g += `<rect x="10" y="${y - 10}" width="12" height="12" fill="${P[1]}"/>` + text(26, y, "FFN (experts)") +
        `<rect x="${second[0]}" y="${second[1] - 10}" width="12" height="12" fill="${OTHER}"/>` + text(second[0] + 16, second[1], "everything else");
      const shared = s.n_shared_experts === 0 ? "no shared expert" : s.n_shared_experts === 1 ? "1 shared expert" : `${s.n_shared_experts} shared experts`;
      ui.show(r, [W, second[1] + 10, g], `${s.model}, with ${s.n_experts} routed experts of width ${fmt.int(s.d_ff)} (${s.experts_per_token} per token) and ${shared} in each MoE layer, stores ${fmt.b(r.stored)} parameters and uses ${fmt.b(r.active)} of them per token (${fmt.pct(r.active_fraction)}); its FFN costs ${fmt.int(r.ffn_flops_layer)} FLOPs per token in each MoE layer.`);
    };
  });

})();

/* Explorables: one FFN unit of a trained model (trained-ffn.md). See core.js.
   Nothing is computed here: ffnbook.neuron_explorer.explorer_data measured every unit at
   build time, and the page wrote it to a JSON file (bookext/content/explorables.py) that this
   script fetches as the box comes near the screen (as a lazy image is), or the first time
   the reader touches it: the reader finds the initial unit drawn, and a reader who never
   scrolls that far fetches nothing (the page's first view stays as light). */
(function () {
  "use strict";
  const X = window.ffnExplorables, h = X.h, text = X.text, control = X.control;
  const SITE = { query: "\u2192", subject: "the subject token", relation: "the relation token" };
  const CLASS = { subject: "subject", relation: "relation", filler: "filler", query: "\u2192 (query)" };
  const two = (v) => (v == null ? "" : Number(v).toFixed(2));
  const signed = (v) => (v > 0 ? "+" : v < 0 ? "\u2212" : "") + Math.abs(v).toFixed(2);
  const answers = (n) => n + (n === 1 ? " answer" : " answers");

  X.register("units", (ui, box) => {
    let data = null, loading = null;
    const root = ui.svg.closest(".ffn-x");
    const load = () => {
      if (!loading) {
        loading = fetch(box.src).then((r) => { if (!r.ok) throw new Error(r.status); return r.json(); })
          .then((d) => { data = d; ui.update(ui.settings()); })
          .catch(() => { loading = null; ui.failed = true; ui.update(ui.settings()); });
      }
      return loading;
    };
    root.addEventListener("focusin", load, { once: true });
    root.addEventListener("pointerdown", load, { once: true });
    if ("IntersectionObserver" in window) {
      const near = new IntersectionObserver((seen) => {
        if (seen.some((entry) => entry.isIntersecting)) { near.disconnect(); load(); }
      }, { rootMargin: "800px 0px" });
      near.observe(root);
    }

    const block = control(ui, "block", "Block (and where it acts)", "select");
    const unit = control(ui, "unit", "Unit", "range", "Arrow keys move one unit; the buttons too.");
    const step = (by) => {
      const u = Math.min(box.d_ff - 1, Math.max(0, unit.get() + by));
      unit.set(u); ui.changed(unit);
    };
    const buttons = h("div", { class: "ffn-x-ctl ffn-x-steps" },
      h("button", { type: "button", class: "btn ffn-x-step", "data-step": "-1" }, "Previous unit"),
      h("button", { type: "button", class: "btn ffn-x-step", "data-step": "1" }, "Next unit"));
    buttons.addEventListener("click", (e) => { const b = e.target.closest("button"); if (b) { load(); step(+b.dataset.step); } });
    ui.controls.append(buttons);
    block.setValues(box.sites.map((site, b) => [b, `block ${b}, read at ${SITE[site]}`]), box.initial[0]);
    const units = []; for (let i = 0; i < box.d_ff; i++) units.push(i);
    unit.setValues(units, box.initial[1], (u) => "unit " + u);
    ui.settings = () => ({ block: block.get(), unit: unit.get() });

    // The facts that drive the unit most: a table after the figure.
    const tid = ui.id + "-facts";
    const caption = h("caption", {});
    const body = h("tbody", {});
    const table = h("table", { class: "ffn-x-facts table", id: tid },
      caption, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "fact"), h("th", { scope: "col" }, "answer"),
        h("th", { scope: "col" }, "activation"))), body);
    ui.summary.after(table);

    const count = (v) => (v == null ? "" : v === 0 ? "none" : v > 0 ? answers(v) : answers(-v) + " gained");
    const plain = (v) => (v == null ? "" : String(v));
    ui.spec = [["kind", "Reads as", plain], ["strong", "Facts driving it strongly", plain],
      ["lost_all", "Answers lost, silenced at every position", count],
      ["lost_site", "Answers lost, silenced where its block acts", count],
      ["margin_all", "Lead of the right answer lost, silenced at every position", two],
      ["margin_site", "Lead of the right answer lost, silenced where its block acts", two]];

    // One panel of labelled horizontal bars: [label, value, text] rows under a title.
    function bars(y, W, title, rows, colour) {
      const left = Math.min(130, Math.max(70, W * 0.25)), right = X.textWidth("\u22120.00") + 8;
      const top = Math.max(1e-9, ...rows.map((r) => Math.abs(r[1])));
      let g = text(0, y + 13, title, 'font-weight="bold"');
      y += 24;
      for (const [label, v, shown] of rows) {
        const w = Math.max(0, (W - left - right) * Math.abs(v) / top);
        g += text(left - 6, y + 14, label, 'text-anchor="end"');
        g += `<rect x="${left}" y="${y + 2}" width="${w.toFixed(2)}" height="16" fill="${colour}"/>`;
        g += text(left + w + 4, y + 14, shown);
        y += 22;
      }
      return [g, y];
    }

    ui.update = (s) => {
      const W = ui.W(), b = s.block, u = s.unit;
      // Until the measurements arrive: one line where the figure will be, no empty table
      // and no blank values. The summary (the figure's text alternative) says the same line,
      // hidden but for a screen reader, so the message is seen once and the figure has a name.
      table.hidden = ui.results.hidden = !data;
      if (!data) {
        const say = ui.failed ? "The units' measurements could not be loaded." : "Loading the measurements of every unit\u2026";
        const [g, height] = X.block(0, 20, say, W - 10);
        body.replaceChildren(); caption.textContent = "";
        ui.show({}, [W, height + 16, g], say);
        ui.summary.classList.add("ffn-sr");
        return;
      }
      if (ui.summary.classList.contains("ffn-sr")) { // the first unit: its summary at once, not after a pause
        ui.summary.classList.remove("ffn-sr");
        ui.ready = false;
      }
      const d = data.blocks[b], names = data.tokens, site = d.site;
      const act = d.act[u], rows = data.classes.map((c, i) => [CLASS[c], act[i], two(act[i])]);
      const promoted = d.tokens[u].map((t, i) => [names[t], d.logit[u][i], signed(d.logit[u][i])]);
      let [g, y] = bars(0, W, "Mean activation at each kind of position", rows, box.colour);
      const [g2, y2] = bars(y + 14, W, "What its value adds to each token's score", promoted, box.colour);
      g += g2;
      caption.textContent = `Facts whose prompts drive block ${b}'s unit ${u} most, read at ${SITE[site]}`;
      body.replaceChildren(...d.facts[u].map((f, i) => {
        const [st, rt, ot] = data.facts[f];
        return h("tr", { "data-fact": f }, h("td", {}, `${names[st]} ${names[rt]}`), h("td", {}, names[ot]),
          h("td", {}, two(d.fact_act[u][i])));
      }));
      const kind = data.kinds[d.kind[u]], lost = d.lost[u], margin = d.margin[u];
      const values = { kind: kind, strong: d.strong[u], lost_all: lost[0], lost_site: lost[1],
        margin_all: margin[0], margin_site: margin[1] };
      const most = data.classes.reduce((a, c, i) => (act[i] > act[a] ? i : a), 0);
      const [s0, r0, o0] = data.facts[d.facts[u][0]];
      ui.show(values, [W, y2 + 4, g],
        `Block ${b}, unit ${u} reads as ${kind}. It is most active at ${CLASS[data.classes[most]]} positions ` +
        `(mean ${two(act[most])}); read at ${SITE[site]}, the fact driving it most is ${names[s0]} ${names[r0]} \u2192 ${names[o0]}. ` +
        `Its value raises ${promoted.slice(0, 3).map((p) => p[0] + " by " + p[2]).join(", ")}. Silenced at every position, ` +
        `it costs ${lost[0]} of the ${data.n_prompts} answers, and the right answer's mean lead of ${two(data.lead)} drops by ${two(margin[0])}.`);
    };
    ui.changed = ((changed) => (c) => { load(); changed(c); })(ui.changed);
  });
})();

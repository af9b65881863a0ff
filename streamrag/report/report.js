// streamrag report: sortable, filterable question table and lazily drawn timelines.
// Everything from the run is set with textContent / setAttribute, never innerHTML.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const COLORS = { G: "#9467bd", L: "#17becf", F: "#2ca02c", W: "#cccccc" };
  const SPAN_NAMES = { G: "query generation", L: "tool call", F: "response", W: "queued" };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }
  function tip(node, text) {
    const t = svgEl("title");
    t.textContent = text;
    node.appendChild(t);
    return node;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toPrecision(4).replace(/\.?0+$/, "");
    return String(v);
  }

  // --- timelines ---------------------------------------------------------------------
  function niceStep(span) {
    const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
    return 10 * p;
  }
  function drawTimeline(tl) {
    const left = 96, right = 12, top = 6, laneH = 22, width = 960;
    const height = top + laneH * tl.lanes.length + 26;
    let end = 1;
    for (const s of tl.spans) end = Math.max(end, s[3]);
    for (const m of tl.marks) end = Math.max(end, m[2]);
    const x = (us) => left + (us / end) * (width - left - right);
    const y = (lane) => top + lane * laneH;
    const svg = svgEl("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", class: "timeline-svg" });
    tl.lanes.forEach((name, i) => {
      const label = svgEl("text", { x: 4, y: y(i) + 15, "font-size": 11 });
      label.textContent = name;
      svg.appendChild(label);
      svg.appendChild(svgEl("line", { x1: left, x2: width - right, y1: y(i) + laneH, y2: y(i) + laneH, stroke: "#eee" }));
    });
    const stepMs = niceStep(end / 1000);
    for (let ms = 0; ms * 1000 <= end; ms += stepMs) {
      const tx = x(ms * 1000), baseY = top + laneH * tl.lanes.length;
      svg.appendChild(svgEl("line", { x1: tx, x2: tx, y1: top, y2: baseY, stroke: "#f2f2f2" }));
      const t = svgEl("text", { x: tx, y: baseY + 14, "font-size": 10, "text-anchor": "middle", fill: "#666" });
      t.textContent = `${ms} ms`;
      svg.appendChild(t);
    }
    for (const [lane, name, s, e, cancelled] of tl.spans) {
      const r = svgEl("rect", {
        class: "span", x: x(s), y: y(lane) + 4, width: Math.max(1, x(e) - x(s)), height: laneH - 8,
        fill: COLORS[name] || "#999", "fill-opacity": cancelled ? 0.35 : 0.9, stroke: "#333", "stroke-width": 0.4,
        "stroke-dasharray": cancelled ? "3 2" : "",
      });
      svg.appendChild(tip(r, `${SPAN_NAMES[name] || name}: ${fmt(s / 1000)}–${fmt(e / 1000)} ms${cancelled ? " (cancelled)" : ""}`));
    }
    for (const [lane, name, t, detail] of tl.marks) {
      const cx = x(t), cy = y(lane) + laneH / 2;
      let m;
      if (name === "word") m = svgEl("line", { x1: cx, x2: cx, y1: cy - 7, y2: cy + 7, stroke: "#888" });
      else if (name === "fire") m = svgEl("path", { d: `M${cx},${cy - 6} L${cx + 7},${cy} L${cx},${cy + 6} Z`, fill: "#000" });
      else if (name === "cancel" || name === "skip") m = svgEl("path", { d: `M${cx - 4},${cy - 4} L${cx + 4},${cy + 4} M${cx - 4},${cy + 4} L${cx + 4},${cy - 4}`, stroke: "#d62728", "stroke-width": 2 });
      else if (name === "decision") m = svgEl("circle", { cx, cy, r: 5, fill: "#ff7f0e" });
      else if (name === "answer_ready") m = svgEl("path", { d: `M${cx},${cy - 6} L${cx + 6},${cy} L${cx},${cy + 6} L${cx - 6},${cy} Z`, fill: "#2ca02c" });
      else m = svgEl("circle", { cx, cy, r: 2.5, fill: "#555" });
      m.setAttribute("class", `mark mark-${name}`);
      svg.appendChild(tip(m, `${fmt(t / 1000)} ms · ${name}${detail ? ": " + detail : ""}`));
    }
    if (tl.E !== null) {
      const ex = x(tl.E);
      svg.appendChild(tip(svgEl("line", { x1: ex, x2: ex, y1: top, y2: top + laneH * tl.lanes.length, stroke: "#000", "stroke-dasharray": "4 3" }), "E: end of input"));
    }
    return svg;
  }
  function renderInto(details) {
    if (details.dataset.drawn) return;
    details.dataset.drawn = "1";
    details.appendChild(drawTimeline(data.timelines[details.dataset.qid]));
  }

  const tlRoot = document.getElementById("timelines");
  const tlNodes = {};
  if (tlRoot && data.timelines) {
    const note = el("p", { class: "muted" }, data.timeline_note || "");
    tlRoot.appendChild(note);
    data.timeline_order.forEach((qid, i) => {
      const tl = data.timelines[qid];
      const d = el("details", { class: "timeline", id: `tl-${i}` });
      d.dataset.qid = qid;
      const s = el("summary");
      s.appendChild(el("h3", {}, tl.title));
      d.appendChild(s);
      d.addEventListener("toggle", () => { if (d.open) renderInto(d); });
      if (i < data.open_timelines) { d.open = true; renderInto(d); }
      tlRoot.appendChild(d);
      tlNodes[qid] = d;
    });
  }

  // --- the question table ------------------------------------------------------------
  const table = document.getElementById("questions");
  if (!table || !data.table) return;
  const cols = data.table.columns;
  const rows = data.table.rows.map((r, i) => ({ r, i }));
  const idIdx = cols.indexOf(data.table.id_column);
  const misIdx = cols.indexOf("misfire");
  const thead = el("thead"), tbody = el("tbody"), hr = el("tr");
  let sortCol = -1, sortDir = 1;
  cols.forEach((c, j) => {
    const th = el("th", { "data-col": c, title: "click to sort" }, c);
    th.addEventListener("click", () => {
      sortDir = sortCol === j ? -sortDir : 1;
      sortCol = j;
      for (const other of hr.children) other.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      draw();
    });
    hr.appendChild(th);
  });
  thead.appendChild(hr);
  table.appendChild(thead);
  table.appendChild(tbody);
  const filter = document.getElementById("filter");
  const onlyMis = document.getElementById("only-misfires");
  const count = document.getElementById("row-count");
  function cmp(a, b) {
    const x = a.r[sortCol], y = b.r[sortCol];
    if (x === y) return a.i - b.i;
    if (x === null) return 1;   // undefined values last, whichever the direction
    if (y === null) return -1;
    if (typeof x === "number" && typeof y === "number") return sortDir * (x - y) || a.i - b.i;
    return sortDir * String(x).localeCompare(String(y)) || a.i - b.i;
  }
  function draw() {
    const needle = (filter && filter.value || "").trim().toLowerCase();
    let shown = rows.filter(({ r }) =>
      (!onlyMis || !onlyMis.checked || (misIdx >= 0 && r[misIdx] === true)) &&
      (!needle || r.some((v) => v !== null && String(v).toLowerCase().includes(needle))));
    if (sortCol >= 0) shown = shown.slice().sort(cmp);
    const frag = document.createDocumentFragment();
    for (const { r } of shown) {
      const tr = el("tr");
      if (misIdx >= 0 && r[misIdx] === true) tr.className = "misfire";
      r.forEach((v, j) => {
        const td = el("td", { class: typeof v === "number" ? "num" : typeof v === "string" && v.length > 40 ? "text" : "" });
        if (j === idIdx && tlNodes[v]) {
          const b = el("button", { type: "button", title: "show its timeline" }, fmt(v));
          b.addEventListener("click", () => { const d = tlNodes[v]; d.open = true; renderInto(d); d.scrollIntoView(); });
          td.appendChild(b);
        } else td.textContent = fmt(v);
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    }
    tbody.replaceChildren(frag);
    if (count) count.textContent = `${shown.length} of ${rows.length} rows`;
  }
  if (filter) filter.addEventListener("input", draw);
  if (onlyMis) onlyMis.addEventListener("change", draw);
  draw();
})();

// The page `kiln viz` writes: inline style and script, no network. The script reads the graph
// data that replaces the slot comment, lays each view out in layers (longest path from the
// inputs, then barycentre ordering), draws it as SVG and wires pan (drag), zoom (wheel) and
// search (a URL ending in #search=TEXT opens with that search). It marks
// <body data-kiln-viz="ready"> when drawn, or writes the error into #kiln-viz-status.
#pragma once

namespace kiln::cli {

inline constexpr const char* kVizPage = R"KILNVIZ(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kiln viz</title>
<style>
  html, body { margin: 0; height: 100%; font: 13px/1.3 system-ui, sans-serif; color: #222; background: #fafafa; }
  body { display: flex; flex-direction: column; }
  header { display: flex; gap: 16px; align-items: center; padding: 6px 12px; background: #263238; color: #eceff1; }
  header h1 { font-size: 15px; margin: 0; font-weight: 600; }
  header input { width: 260px; padding: 3px 6px; border-radius: 3px; border: 0; }
  #kiln-viz-status { font-size: 12px; color: #b0bec5; }
  main { flex: 1; display: flex; flex-direction: column; min-height: 0; }
  section { flex: 1; position: relative; border-top: 1px solid #cfd8dc; min-height: 0; overflow: hidden; }
  section h2 { position: absolute; left: 8px; top: 4px; margin: 0; font-size: 13px; color: #546e7a; z-index: 1;
               background: rgba(250,250,250,.85); padding: 1px 4px; }
  svg { width: 100%; height: 100%; cursor: grab; display: block; }
  svg.dragging { cursor: grabbing; }
  .node rect { fill: #e3f2fd; stroke: #1e88e5; stroke-width: 1; rx: 4; }
  .node.input rect { fill: #e8f5e9; stroke: #43a047; }
  .node text { font-size: 11px; fill: #263238; }
  .node text.op { font-weight: 600; font-size: 12px; }
  .node text.type { fill: #607d8b; font-size: 10px; }
  .group rect { fill: #fff8e1; stroke: #ffa000; stroke-dasharray: 5 3; rx: 6; }
  .group text { font-size: 11px; fill: #e65100; }
  .edge { fill: none; stroke: #90a4ae; stroke-width: 1.2; }
  .dim { opacity: .25; }
  .hit rect { stroke: #d81b60; stroke-width: 3; fill: #fce4ec; }
</style>
</head>
<body>
<header>
  <h1 id="kiln-viz-title">kiln viz</h1>
  <input id="kiln-viz-search" type="search" placeholder="search op, name or type">
  <span id="kiln-viz-status">loading</span>
</header>
<main id="kiln-viz-views"></main>
<script>
"use strict";
const KILN_GRAPH = /*KILN_GRAPH_DATA*/null;
const SVG_NS = "http://www.w3.org/2000/svg";
const NODE_W = 190, NODE_H = 50, GAP_X = 60, GAP_Y = 16, GROUP_PAD = 10;
const status = document.getElementById("kiln-viz-status");
window.addEventListener("error", e => { status.textContent = "error: " + e.message; });

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function shorten(text, n) { return text.length > n ? text.slice(0, n - 1) + "\u2026" : text; }

// Layers by longest path from the sources; within a layer, two barycentre sweeps.
function layout(nodes) {
  const rank = nodes.map(() => 0);
  nodes.forEach((n, i) => { for (const f of n.from) rank[i] = Math.max(rank[i], rank[f] + 1); });
  const layers = [];
  nodes.forEach((n, i) => (layers[rank[i]] = layers[rank[i]] || []).push(i));
  const pos = nodes.map(() => 0);
  layers.forEach(l => l.forEach((i, k) => (pos[i] = k)));
  for (let sweep = 0; sweep < 2; ++sweep)
    for (const l of layers) {
      const key = i => nodes[i].from.length ? nodes[i].from.reduce((s, f) => s + pos[f], 0) / nodes[i].from.length : pos[i];
      l.sort((a, b) => key(a) - key(b) || a - b);
      l.forEach((i, k) => (pos[i] = k));
    }
  const height = Math.max(...layers.map(l => l.length));
  return nodes.map((n, i) => ({
    x: rank[i] * (NODE_W + GAP_X),
    y: (pos[i] + (height - layers[rank[i]].length) / 2) * (NODE_H + GAP_Y),
  }));
}

function drawView(view, parent) {
  const section = document.createElement("section");
  const title = document.createElement("h2");
  title.textContent = view.title + " \u2014 " + view.nodes.length + " nodes" +
    (view.groups.length ? ", " + view.groups.length + " fused functions" : "");
  section.appendChild(title);
  parent.appendChild(section);
  const svg = el("svg", {}, section);
  const scene = el("g", {}, svg);
  const at = layout(view.nodes);

  view.groups.forEach((g, gi) => {
    const members = view.nodes.map((n, i) => i).filter(i => view.nodes[i].group === gi);
    if (!members.length) return;
    const x0 = Math.min(...members.map(i => at[i].x)) - GROUP_PAD, y0 = Math.min(...members.map(i => at[i].y)) - GROUP_PAD - 14;
    const x1 = Math.max(...members.map(i => at[i].x)) + NODE_W + GROUP_PAD, y1 = Math.max(...members.map(i => at[i].y)) + NODE_H + GROUP_PAD;
    const box = el("g", { class: "group" }, scene);
    const rect = el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, box);
    if (g.share !== undefined) rect.style.fill = "rgba(255, 87, 34, " + (0.08 + 0.6 * g.share / 100).toFixed(3) + ")";
    const label = el("text", { x: x0 + 6, y: y0 + 12 }, box);
    label.textContent = shorten(g.name, 40) + (g.share !== undefined ? "  " + g.share.toFixed(1) + "% of run time" : "");
    const tip = el("title", {}, box);
    tip.textContent = g.name + (g.share !== undefined ? "\n" + g.share + "% of run time, " + g.calls + " calls" : "");
  });

  view.nodes.forEach((n, i) => {
    for (const f of n.from) {
      const x0 = at[f].x + NODE_W, y0 = at[f].y + NODE_H / 2, x1 = at[i].x, y1 = at[i].y + NODE_H / 2;
      // An edge skipping layers (a residual connection) arcs above the nodes it passes.
      const skipped = Math.round((x1 - x0 - GAP_X) / (NODE_W + GAP_X)), lift = skipped > 0 ? NODE_H + 12 * skipped : 0;
      const bend = skipped > 0 ? NODE_W / 2 : GAP_X / 2;
      el("path", { class: "edge", d: `M${x0},${y0} C${x0 + bend},${y0 - lift} ${x1 - bend},${y1 - lift} ${x1},${y1}` }, scene);
    }
  });

  const drawn = view.nodes.map((n, i) => {
    const g = el("g", { class: "node " + n.kind, transform: `translate(${at[i].x},${at[i].y})` }, scene);
    el("rect", { width: NODE_W, height: NODE_H }, g);
    const lines = [[n.op + (n.weights ? "  +" + n.weights + " weights" : ""), "op"], [n.name || "\u00a0", "name"], [n.type, "type"]];
    lines.forEach(([text, cls], k) => { el("text", { x: 6, y: 15 + 15 * k, class: cls }, g).textContent = shorten(text, 36); });
    el("title", {}, g).textContent = n.op + "\n" + n.name + "\n" + n.type;
    return { g, haystack: (n.op + " " + n.name + " " + n.type).toLowerCase() };
  });

  // Pan by dragging, zoom around the pointer with the wheel; a double click toggles between
  // the whole graph and the readable start of it.
  const bounds = scene.getBBox();
  const box = svg.getBoundingClientRect();
  const fit = Math.min(1, box.width / (bounds.width + 40), box.height / (bounds.height + 40));
  let scale, tx, ty;
  const reset = s => {
    scale = s;
    tx = 20 - bounds.x * scale;
    ty = bounds.height * scale > box.height - 40 ? 30 - bounds.y * scale : (box.height - bounds.height * scale) / 2 - bounds.y * scale;
  };
  const apply = () => scene.setAttribute("transform", `translate(${tx},${ty}) scale(${scale})`);
  reset(Math.max(fit, 0.6));
  apply();
  svg.addEventListener("dblclick", () => { reset(scale > fit ? fit : Math.max(fit, 0.6)); apply(); });
  let drag = null;
  svg.addEventListener("mousedown", e => { drag = { x: e.clientX - tx, y: e.clientY - ty }; svg.classList.add("dragging"); });
  window.addEventListener("mouseup", () => { drag = null; svg.classList.remove("dragging"); });
  window.addEventListener("mousemove", e => { if (drag) { tx = e.clientX - drag.x; ty = e.clientY - drag.y; apply(); } });
  svg.addEventListener("wheel", e => {
    e.preventDefault();
    const r = svg.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
    const factor = Math.exp(-e.deltaY * 0.0015), next = Math.min(4, Math.max(0.02, scale * factor));
    tx = px - (px - tx) * next / scale; ty = py - (py - ty) * next / scale; scale = next;
    apply();
  }, { passive: false });
  return drawn;
}

function main() {
  if (!KILN_GRAPH) throw new Error("no graph data in the page");
  document.getElementById("kiln-viz-title").textContent = "kiln viz: " + KILN_GRAPH.model;
  const views = document.getElementById("kiln-viz-views");
  const drawn = KILN_GRAPH.views.map(v => drawView(v, views)).flat();
  const search = document.getElementById("kiln-viz-search");
  const total = drawn.length;
  const summary = total + " nodes" + (KILN_GRAPH.profile ? ", with profile" : "");
  search.addEventListener("input", () => {
    const q = search.value.trim().toLowerCase();
    let hits = 0;
    for (const d of drawn) {
      const hit = q !== "" && d.haystack.includes(q);
      hits += hit;
      d.g.classList.toggle("hit", hit);
      d.g.classList.toggle("dim", q !== "" && !hit);
    }
    status.textContent = q ? hits + " of " + total + " nodes match" : summary;
  });
  status.textContent = summary;
  // file:///graph.html#search=conv opens with that search.
  const preset = /^#search=(.*)$/.exec(location.hash);
  if (preset) {
    search.value = decodeURIComponent(preset[1]);
    search.dispatchEvent(new Event("input"));
  }
  document.body.setAttribute("data-kiln-viz", "ready");
}

try { main(); } catch (e) { status.textContent = "error: " + e.message; }
</script>
</body>
</html>
)KILNVIZ";

}  // namespace kiln::cli

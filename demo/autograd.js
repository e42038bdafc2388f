// The autograd panel: draws the graph weft recorded for a small program and
// steps through the engine's backward pass (demo/engine.js) on it: the
// dependency counts, the ready queue, the not_ready InputBuffers, and the
// gradients weft computed for each edge and buffer.
import { el } from './layout.js';
import { PRESETS, SEED, buildGraph, simulate } from './engine.js';

const SVG = 'http://www.w3.org/2000/svg';
const NODE_W = 190, NODE_H = 62, GAP_X = 22, GAP_Y = 40;
const PLAY_MS = 700;

function svg(tag, attrs = {}, ...kids) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, v);
  for (const k of kids) if (k) e.append(k);
  return e;
}

// Small tensors in full, larger ones by their first values.
export function formatTensor(t) {
  if (!t) return '—';
  const v = Array.from(t.data(), Number);
  const f = (x) => (Math.abs(x) < 5e-5 ? '0.0000' : x.toFixed(4));
  const shape = t.shape;
  if (shape.length === 2 && v.length <= 16) {
    return `[${Array.from({ length: shape[0] }, (_, r) => `[${v.slice(r * shape[1], (r + 1) * shape[1]).map(f).join(', ')}]`).join(', ')}]`;
  }
  if (v.length <= 8) return shape.length ? `[${v.map(f).join(', ')}]` : f(v[0]);
  return `[${v.slice(0, 6).map(f).join(', ')}, …] (${v.length} values)`;
}

// Layers: the longest path from the root (the root's node on layer 1, GraphRoot on 0).
function layout(graph) {
  const depth = new Map([[graph.rootId, 1]]);
  const order = [...graph.nodes.values()].sort((a, b) => b.seq - a.seq);
  // a node's inputs were created before it: walking by decreasing sequence
  // number (AccumulateGrad last) settles every node before its next edges
  for (const n of order.filter((x) => x.seq !== Infinity).concat(order.filter((x) => x.seq === Infinity))) {
    const d = depth.get(n.id) ?? 1;
    for (const e of n.next) if (e.id !== null) depth.set(e.id, Math.max(depth.get(e.id) ?? 0, d + 1));
  }
  const maxD = Math.max(...depth.values());
  for (const n of graph.nodes.values()) if (n.name === 'AccumulateGrad') depth.set(n.id, maxD);
  const layers = [[{ id: 'GraphRoot' }]];
  for (const n of order) {
    const d = depth.get(n.id);
    (layers[d] ??= []).push(n);
  }
  const pos = new Map();
  const widest = Math.max(...layers.map((l) => l?.length ?? 0));
  const width = widest * (NODE_W + GAP_X);
  layers.forEach((layer, d) => {
    if (!layer) return;
    const span = layer.length * (NODE_W + GAP_X) - GAP_X;
    layer.forEach((n, i) => pos.set(n.id, { x: (width - span) / 2 + i * (NODE_W + GAP_X), y: 8 + d * (NODE_H + GAP_Y) }));
  });
  return { pos, width, height: 8 + layers.length * (NODE_H + GAP_Y) - GAP_Y + 8 };
}

function drawGraph(root, graph, geo) {
  const { pos } = geo;
  const edges = svg('g', { class: 'ag-edges' });
  const nodesG = svg('g', { class: 'ag-nodes' });
  // An edge to the next layer drops straight down; one that skips layers
  // leaves by the node's side and bends around the nodes between.
  const line = (from, to, key) => {
    const a = pos.get(from), b = pos.get(to);
    const x2 = b.x + NODE_W / 2, y2 = b.y - 4;
    let d;
    if (b.y - a.y <= NODE_H + GAP_Y) {
      const x1 = a.x + NODE_W / 2, y1 = a.y + NODE_H, my = (y1 + y2) / 2;
      d = `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
    } else {
      const side = b.x + NODE_W / 2 > a.x + NODE_W / 2 ? 1 : -1;
      const x1 = a.x + (side > 0 ? NODE_W : 0), y1 = a.y + NODE_H / 2, xs = x1 + side * GAP_X * 1.5;
      d = `M${x1},${y1} C${xs},${y1} ${xs},${y2 - GAP_Y} ${x2},${y2}`;
    }
    edges.append(svg('path', { d, class: 'ag-edge', 'data-edge': key, 'marker-end': 'url(#ag-arrow)' }));
  };
  line('GraphRoot', graph.rootId, `GraphRoot>${graph.rootId}`);
  for (const n of graph.nodes.values()) for (const e of n.next) if (e.id !== null) line(n.id, e.id, `${n.id}>${e.id}`);
  const box = (id, title, sub, extra = {}, seq = '', saved = '') => {
    const p = pos.get(id);
    const g = svg('g', { class: 'ag-node', transform: `translate(${p.x},${p.y})`, 'data-id': id, ...extra });
    g.append(svg('rect', { width: NODE_W, height: NODE_H, rx: 8 }));
    const t = svg('text', { x: 10, y: 20, class: 'ag-name' });
    t.textContent = title;
    const s = svg('text', { x: 10, y: 38, class: 'ag-sub' });
    s.textContent = sub;
    const badge = svg('text', { x: NODE_W - 8, y: 20, class: 'ag-count', 'text-anchor': 'end' });
    const seqText = svg('text', { x: NODE_W - 8, y: 38, class: 'ag-seq', 'text-anchor': 'end' });
    seqText.textContent = seq;
    const savedText = svg('text', { x: 10, y: 54, class: 'ag-saved' });
    savedText.textContent = saved;
    g.append(t, s, badge, seqText, savedText, svg('title', {}, document.createTextNode(extra['data-tip'] ?? title)));
    nodesG.append(g);
  };
  box('GraphRoot', 'GraphRoot', `grad of ${graph.rootName} = 1`, { 'data-name': 'GraphRoot' });
  for (const n of graph.nodes.values()) {
    const who = n.tensorName ? (n.name === 'AccumulateGrad' ? `leaf ${n.tensorName} [${n.shape}]` : `${n.tensorName} [${n.shape}]`) : '';
    box(n.id, n.name, who, {
      'data-name': n.name, 'data-tensor': n.tensorName ?? '', 'data-tip': `${n.label}\n${n.saved}\nsequence number ${n.seq === Infinity ? 'UINT64_MAX' : n.seq}`,
    }, n.seq === Infinity ? 'seq max' : `seq ${n.seq}`, n.saved);
  }
  const defs = svg('defs', {}, svg('marker', { id: 'ag-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'ag-arrowhead' })));
  const s = svg('svg', { viewBox: `0 0 ${geo.width} ${geo.height}`, class: 'ag-svg', role: 'img',
    'aria-label': `autograd graph of ${graph.rootName}: ${[...graph.nodes.values()].map((n) => n.label).join(', ')}` }, defs, edges, nodesG);
  s.style.maxWidth = `${geo.width}px`;
  root.replaceChildren(s);
}

function nodeLabel(graph, id) {
  return id === 'GraphRoot' ? 'GraphRoot' : graph.nodes.get(id).label;
}

// The gradient weft computed along an edge (from -> to), if known.
function edgeValue(graph, from, to) {
  if (from === 'GraphRoot') return graph.rootGrad;
  return graph.values.edges.get(`${from}>${to}`) ?? null;
}

function bufferList(graph, id, contributions) {
  const items = contributions.map((c) => el('li', {},
    el('span', { class: 'ag-from', text: `from ${nodeLabel(graph, c.from)}` }), ' ',
    el('code', { text: formatTensor(edgeValue(graph, c.from, id)) })));
  const total = id === graph.rootId ? graph.rootGrad : graph.values.buffer.get(id);
  if (contributions.length > 1 && total) items.push(el('li', { class: 'ag-sum' }, el('span', { class: 'ag-from', text: 'sum' }), ' ', el('code', { text: formatTensor(total) })));
  return el('ul', { class: 'ag-buf' }, ...items);
}

function renderState(ui, graph, step, index, total) {
  ui.counter.textContent = `step ${index + 1} / ${total}`;
  ui.text.textContent = step.text;
  ui.text.dataset.phase = step.phase;
  const nodes = ui.graph.querySelectorAll('.ag-node');
  for (const g of nodes) {
    const id = g.dataset.id === 'GraphRoot' ? 'GraphRoot' : Number(g.dataset.id);
    g.dataset.status = id === step.running ? 'running' : step.status.get(id) ?? (id === 'GraphRoot' && step.phase !== 'init' && step.phase !== 'deps' ? 'done' : 'idle');
    const c = step.deps.get(id);
    g.querySelector('.ag-count').textContent = c === undefined ? '' : `deps ${c}`;
  }
  for (const p of ui.graph.querySelectorAll('.ag-edge')) {
    p.classList.toggle('hl', !!step.edge && p.dataset.edge === `${step.edge[0]}>${step.edge[1]}`);
  }
  const depRows = [...step.deps].map(([id, c]) => el('li', {}, el('span', { text: nodeLabel(graph, id) }), el('b', { text: String(c) })));
  ui.deps.replaceChildren(...(depRows.length ? depRows : [el('li', { class: 'hint', text: 'empty' })]));
  const q = step.queue.map((t) => el('li', {}, el('span', { text: nodeLabel(graph, t.id) }),
    el('b', { text: t.id === 'GraphRoot' ? '' : t.seq === Infinity ? 'seq max' : `seq ${t.seq}` }), bufferList(graph, t.id, t.buffer)));
  ui.queue.replaceChildren(...(q.length ? q : [el('li', { class: 'hint', text: 'empty' })]));
  const nr = [...step.notReady].map(([id, buf]) => el('li', {}, el('span', { text: nodeLabel(graph, id) }), bufferList(graph, id, buf)));
  ui.notReady.replaceChildren(...(nr.length ? nr : [el('li', { class: 'hint', text: 'empty' })]));
  ui.running.replaceChildren(...(step.running !== undefined && step.phase === 'run'
    ? [el('span', { text: nodeLabel(graph, step.running) }), bufferList(graph, step.running, step.buffer)] : []));
  renderResult(ui, graph, step.phase === 'done');
}

function closeTo(a, b) {
  const x = a.data(), y = b.data();
  return x.length === y.length && Array.from(x).every((v, i) => Math.abs(v - y[i]) <= 1e-6 + 1e-5 * Math.abs(y[i]));
}

// At the end: what the replay wrote into each leaf's .grad (its buffer, from
// weft's autograd.grad) beside the .grad the real backward() left.
function renderResult(ui, graph, done) {
  ui.result.hidden = !done;
  if (!done) return;
  const rows = [];
  let all = true;
  for (const r of graph.real) {
    const acc = [...graph.nodes.values()].find((n) => n.name === 'AccumulateGrad' && n.tensorName === r.name);
    const replay = acc ? graph.values.written.get(acc.id) ?? graph.values.buffer.get(acc.id) : null;
    const same = !!replay && closeTo(replay, r.grad);
    all &&= same;
    rows.push(el('tr', { 'data-leaf': r.name },
      el('th', { text: `${r.name}.grad` }),
      el('td', {}, el('code', { class: 'ag-replay', text: formatTensor(replay) })),
      el('td', {}, el('code', { class: 'ag-real', text: formatTensor(r.grad) })),
      el('td', { class: same ? 'ok' : 'bad', text: same ? '= ✓' : '≠' })));
  }
  ui.result.dataset.match = String(all && rows.length > 0);
  ui.result.replaceChildren(el('table', {},
    el('thead', {}, el('tr', {}, el('th', {}), el('th', { text: 'written by the replay' }), el('th', { text: `real ${graph.rootName}.backward()` }), el('th'))),
    el('tbody', {}, ...rows)));
}

/** Wires the panel: ui = { preset, program, build, graph, prev, step, play, run, reset, counter, text, deps, queue, notReady, running, result, status }. */
export function setupAutograd(ui, wt) {
  let graph = null;
  let steps = [];
  let at = 0;
  for (const [id, p] of Object.entries(PRESETS)) ui.preset.append(el('option', { value: id, text: p.label }));
  ui.program.value = PRESETS.seed004.code;
  const show = () => renderState(ui, graph, steps[at], at, steps.length);
  const setButtons = () => {
    ui.prev.disabled = !graph || at === 0;
    ui.step.disabled = ui.run.disabled = !graph || at === steps.length - 1;
    ui.reset.disabled = ui.play.disabled = !graph;
  };
  const build = () => {
    pause();
    graph?.dispose();
    graph = null;
    try {
      graph = buildGraph(wt, ui.program.value);
      steps = simulate(graph);
      at = 0;
      const geo = layout(graph);
      drawGraph(ui.graph, graph, geo);
      ui.status.textContent = `wt.manualSeed(${SEED}); ${graph.nodes.size} nodes; the backward pass below takes ${steps.length} steps.`;
      ui.status.className = 'help';
      ui.graph.dataset.state = 'ok';
      show();
    } catch (e) {
      ui.graph.replaceChildren();
      ui.graph.dataset.state = 'error';
      ui.status.textContent = `${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}`;
      ui.status.className = 'help ag-error';
      ui.result.hidden = true;
    }
    setButtons();
  };
  let timer = null;
  const pause = () => {
    clearInterval(timer);
    timer = null;
    ui.play.textContent = 'Play';
    ui.play.setAttribute('aria-pressed', 'false');
  };
  const go = (i) => {
    at = Math.max(0, Math.min(steps.length - 1, i));
    if (at === steps.length - 1) pause();
    show();
    setButtons();
  };
  // Play: one step of the engine every PLAY_MS, as an animation
  ui.play.addEventListener('click', () => {
    if (timer) return pause();
    if (at === steps.length - 1) go(0);
    timer = setInterval(() => go(at + 1), PLAY_MS);
    ui.play.textContent = 'Pause';
    ui.play.setAttribute('aria-pressed', 'true');
  });
  ui.preset.addEventListener('change', () => { ui.program.value = PRESETS[ui.preset.value].code; build(); });
  ui.build.addEventListener('click', build);
  ui.prev.addEventListener('click', () => { pause(); go(at - 1); });
  ui.step.addEventListener('click', () => { pause(); go(at + 1); });
  ui.reset.addEventListener('click', () => { pause(); go(0); });
  ui.run.addEventListener('click', () => go(steps.length - 1));
  build();
}

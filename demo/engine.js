// The autograd panel's model: runs a small program with weft, reads the
// graph weft recorded (gradFn.name, nextFunctions, gradFn.id), asks weft for
// the gradients that flow along it, and replays the engine's backward
// algorithm (seed 004, torch/csrc/autograd/engine.cpp) step by step over
// that graph. The replay is this page's JS, computed from the graph's
// structure; every gradient value it shows comes from weft.

export const PRESETS = {
  seed004: {
    label: "seed 004's program",
    code: `t0 = wt.rand([2, 2], { requiresGrad: true })
t1 = wt.rand([2, 2], { requiresGrad: true })
a = wt.mm(t0, t1)
b = a.add(t1)
c = b.add(t0)
d = c.sin()
e = d.mean()`,
  },
  diamond: {
    label: 'diamond: x used by two branches',
    code: `x = wt.rand([3], { requiresGrad: true })
y = x.sin()
z = x.cos()
w = y.mul(z)
s = w.sum()`,
  },
  mlp: {
    label: 'one linear layer + ReLU',
    code: `x = wt.rand([4, 3])
w = wt.rand([3, 2], { requiresGrad: true })
bias = wt.rand([2], { requiresGrad: true })
h = x.mm(w).add(bias)
r = h.relu()
loss = r.pow(2).mean()`,
  },
  attention: {
    label: 'an attention block (one head)',
    code: `// softmax(q kᵀ / √d) v over 3 tokens of width 4, as wt.nn.MultiheadAttention computes per head
x = wt.rand([3, 4])
wq = wt.rand([4, 4], { requiresGrad: true })
wk = wt.rand([4, 4], { requiresGrad: true })
wv = wt.rand([4, 4], { requiresGrad: true })
q = x.mm(wq)
k = x.mm(wk)
v = x.mm(wv)
kt = k.t()
qk = q.mm(kt)
scores = qk.div(2)
p = scores.softmax(-1)
out = p.mm(v)
loss = out.pow(2).mean()`,
  },
};
export const SEED = 4;

// What each backward node saves for its formula (PyTorch 1.13's
// derivatives.yaml). weft does not expose a node's saved tensors, so the
// panel names them from this table, else lists the op's inputs.
const SAVED = {
  MmBackward0: ['self', 'mat2'], AddBackward0: [], AddBackward1: [], SubBackward0: [], NegBackward0: [],
  MulBackward0: ['self', 'other'], MulBackward1: ['other (a number)'], DivBackward0: ['self', 'other'],
  SinBackward0: ['self'], CosBackward0: ['self'], LogBackward0: ['self'], PowBackward0: ['self'],
  ExpBackward0: ['result'], TanhBackward0: ['result'], SigmoidBackward0: ['result'], ReluBackward0: ['result'],
  SqrtBackward0: ['result'], MeanBackward0: ["self's sizes"], SumBackward0: ["self's sizes"],
  MeanBackward1: ["self's sizes", 'dim'], SumBackward1: ["self's sizes", 'dim'],
  SoftmaxBackward0: ['result', 'dim'], TBackward0: [],
};

const IDENT = /[A-Za-z_$][\w$]*/g;

/** Parses `name = expression` lines (blank lines and // comments skipped). */
export function parseProgram(text) {
  const lines = [];
  for (const [k, raw] of text.split('\n').entries()) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    const m = line.match(/^(?:const |let )?([A-Za-z_$][\w$]*)\s*=\s*(.+?);?$/);
    if (!m) throw new Error(`line ${k + 1}: expected "name = expression", got "${line}"`);
    if (m[1] === 'wt') throw new Error(`line ${k + 1}: "wt" is the library; pick another name`);
    if (lines.some((l) => l.name === m[1])) throw new Error(`line ${k + 1}: ${m[1]} is already defined; give each line a new name`);
    lines.push({ name: m[1], expr: m[2] });
  }
  if (!lines.length) throw new Error('the program is empty: write lines like "y = x.sin()"');
  return lines;
}

// One line's expression, with `wt` and the given earlier names in scope.
function runLine(wt, line, names, values) {
  const fn = new Function('wt', ...names, `"use strict"; return (${line.expr});`); // eslint-disable-line no-new-func
  return fn(wt, ...values);
}

function evaluate(wt, lines) {
  const scope = new Map();
  for (const line of lines) {
    const value = runLine(wt, line, [...scope.keys()], [...scope.values()]);
    if (!(value instanceof wt.Tensor)) throw new Error(`${line.name} = ${line.expr}: the result is not a tensor`);
    line.tensor = value;
    line.inputs = [...new Set(line.expr.match(IDENT) ?? [])].filter((n) => scope.has(n));
    scope.set(line.name, value);
  }
  return scope;
}

const isAcc = (n) => n.name === 'AccumulateGrad';

// Walks nextFunctions from `fn` and adds unseen nodes in post-order (inputs
// first): for a graph built line by line this is the order the nodes were
// created, i.e. their sequence numbers. AccumulateGrad's is the maximum, as
// in PyTorch (UINT64_MAX), so leaves accumulate as soon as they are ready.
function collect(fn, nodes, counter) {
  if (nodes.has(fn.id)) {
    fn.dispose();
    return;
  }
  const node = { id: fn.id, name: fn.name, next: [], seq: 0, fn };
  nodes.set(fn.id, node);
  for (const [child, inputNr] of fn.nextFunctions) {
    node.next.push({ id: child ? child.id : null, inputNr });
    if (child) collect(child, nodes, counter);
  }
  node.seq = node.name === 'AccumulateGrad' ? Infinity : counter.n++;
}

function nameNodes(nodes, lines) {
  for (const line of lines) {
    const t = line.tensor;
    const fn = t.gradFn;
    if (fn) {
      const node = nodes.get(fn.id);
      fn.dispose();
      if (node && !node.tensorName) Object.assign(node, { tensorName: line.name, line });
    }
  }
  for (const node of nodes.values()) {
    if (!isAcc(node)) continue;
    const v = node.fn.variable;
    const leaf = v && lines.find((l) => l.tensor.isLeaf && Number(l.tensor.dataPtr()) === Number(v.dataPtr()) &&
      String(l.tensor.shape) === String(v.shape));
    v?.dispose();
    if (leaf) Object.assign(node, { tensorName: leaf.name, line: leaf });
  }
  for (const node of nodes.values()) {
    node.shape = node.line ? node.line.tensor.shape : null;
    node.saved = savedOf(node);
    node.label = node.tensorName ? `${node.name} (${node.tensorName})` : node.name;
  }
}

function savedOf(node) {
  if (isAcc(node)) return node.tensorName ? `writes ${node.tensorName}.grad` : 'writes .grad';
  const what = SAVED[node.name];
  const inputs = node.line?.inputs ?? [];
  if (!what) return inputs.length ? `inputs of its op: ${inputs.join(', ')}` : '';
  if (!what.length) return 'saves no tensor';
  const named = what.map((w, i) => {
    if (w === 'result') return `result = ${node.tensorName ?? '?'}`;
    if (w === 'self' || w === 'mat2' || w === 'other') return inputs[i] ? `${w} = ${inputs[i]}` : w;
    return w;
  });
  return `saves ${named.join(', ')}`;
}

// The gradient values, all from weft: each named node's input buffer total
// (the gradient of the root with respect to its tensor, wt.autograd.grad),
// and what each edge carries: the vector-Jacobian product of that one line
// alone, its expression run again on detached copies of its inputs, so the
// gradient cannot reach the input by another path through earlier lines.
function gradients(wt, graph, lines, root) {
  const named = [...graph.nodes.values()].filter((n) => n.line && n.line.tensor.requiresGrad);
  const totals = wt.autograd.grad([root], named.map((n) => n.line.tensor), { retainGraph: true, allowUnused: true });
  const buffer = new Map();
  named.forEach((n, i) => { if (totals[i]) buffer.set(n.id, totals[i]); });
  const edges = new Map();
  for (const n of named) {
    if (isAcc(n) || !buffer.has(n.id)) continue;
    const targets = n.next.filter((e) => e.id !== null).map((e) => graph.nodes.get(e.id))
      .filter((to, i, all) => to.line && all.indexOf(to) === i && usedOnce(n.line, to.tensorName));
    if (!targets.length) continue;
    const grads = edgeGradients(wt, lines, n.line, targets.map((t) => t.tensorName), buffer.get(n.id));
    targets.forEach((to, i) => { if (grads[i]) edges.set(`${n.id}>${to.id}`, grads[i]); });
  }
  return { buffer, edges, written: written(wt, graph, buffer, edges) };
}

// An input named once in its line reaches the line's last op by one edge only.
const usedOnce = (line, name) => (line.expr.match(IDENT) ?? []).filter((w) => w === name).length === 1;

function edgeGradients(wt, lines, line, names, gradOutput) {
  return wt.tidy(() => {
    const before = lines.slice(0, lines.indexOf(line));
    const args = before.map((l) => (names.includes(l.name) ? l.tensor.detach().requiresGrad_() : l.tensor));
    const out = runLine(wt, line, before.map((l) => l.name), args);
    const inputs = names.map((name) => args[before.findIndex((l) => l.name === name)]);
    return wt.autograd.grad([out], inputs, { gradOutputs: [gradOutput], allowUnused: true });
  });
}

// What each AccumulateGrad adds into .grad: the sum of the contributions in
// its InputBuffer (wt.add of the per-edge values), so that the panel's last
// row compares the replay's arithmetic with the real backward(); where a
// contribution is unknown, the buffer total.
function written(wt, graph, buffer, edges) {
  const out = new Map();
  for (const acc of graph.nodes.values()) {
    if (!isAcc(acc) || !buffer.has(acc.id)) continue;
    const incoming = [...graph.nodes.values()].flatMap((n) => n.next.filter((e) => e.id === acc.id).map(() => edges.get(`${n.id}>${acc.id}`)));
    if (incoming.length < 2 || incoming.some((g) => !g)) continue;
    out.set(acc.id, wt.tidy(() => incoming.slice(1).reduce((sum, g) => sum.add(g), incoming[0])));
  }
  return out;
}

/**
 * Runs `text` with weft (seeded), records its graph and the gradients, then
 * runs the real backward of the last line. Returns the graph for the panel;
 * dispose() frees every tensor it holds.
 */
export function buildGraph(wt, text) {
  const lines = parseProgram(text);
  const owned = [];
  try {
    wt.manualSeed(SEED);
    // temporaries inside a line are freed; the graph keeps what it saved
    wt.tidy(() => { evaluate(wt, lines); return lines.map((l) => l.tensor); });
    owned.push(...lines.map((l) => l.tensor));
    const rootLine = lines[lines.length - 1];
    const root = rootLine.tensor;
    if (root.isLeaf) throw new Error(`${rootLine.name} has no grad_fn: make a leaf with { requiresGrad: true } and compute from it`);
    if (root.numel() !== 1) throw new Error(`${rootLine.name} has shape [${root.shape}]: backward without a gradient needs a scalar (end with .mean() or .sum())`);
    const nodes = new Map();
    const rootFn = root.gradFn;
    const counter = { n: 0 };
    collect(rootFn, nodes, counter);
    const graph = { nodes, rootId: rootFn.id, rootName: rootLine.name, lines };
    nameNodes(nodes, lines);
    for (const n of nodes.values()) if (!isAcc(n)) { n.fn.dispose(); delete n.fn; }
    const values = gradients(wt, graph, lines, root);
    owned.push(...values.buffer.values(), ...values.edges.values(), ...values.written.values());
    graph.values = values;
    graph.rootGrad = wt.ones(root.shape);
    owned.push(graph.rootGrad);
    graph.real = realBackward(root, lines);
    owned.push(...graph.real.map((r) => r.grad));
    for (const n of nodes.values()) if (n.fn) { n.fn.dispose(); delete n.fn; }
    graph.dispose = () => { for (const t of owned) t.dispose(); };
    return graph;
  } catch (e) {
    for (const t of owned) t.dispose();
    throw e;
  }
}

// The real thing: root.backward() and the leaves' .grad afterwards.
function realBackward(root, lines) {
  const leaves = lines.filter((l) => l.tensor.isLeaf && l.tensor.requiresGrad);
  for (const l of leaves) l.tensor.grad = null;
  root.backward();
  return leaves.map((l) => ({ name: l.name, grad: l.tensor.grad })).filter((r) => r.grad);
}

// ---- the engine's algorithm, replayed ------------------------------------------

const GRAPH_ROOT = 'GraphRoot';

// Higher priority first: AccumulateGrad (sequence number UINT64_MAX), then
// the larger sequence number (created later, so nearer the root); ties in
// the order they were pushed.
function byPriority(a, b) {
  return b.seq - a.seq || (a.seq === Infinity && b.seq === Infinity ? a.pushed - b.pushed : 0) || a.pushed - b.pushed;
}

// What an InputBuffer holds: gradients summed, or, for a node with several
// outputs (SplitBackward0, UnbindBackward0), one slot per output (the edge's input_nr).
function held(buf) {
  const slots = new Set(buf.map((b) => b.input)).size;
  return slots > 1 ? `${buf.length} gradients in ${slots} slots, one per output` : `${buf.length} gradients summed`;
}

/**
 * The steps of Engine::execute on `graph`: GraphTask and GraphRoot,
 * compute_dependencies' walk, then the ready-queue loop of
 * evaluate_function with its not_ready map of InputBuffers. Each step is a
 * snapshot the panel draws.
 */
export function simulate(graph) {
  const { nodes, rootId } = graph;
  const label = (id) => (id === GRAPH_ROOT ? GRAPH_ROOT : nodes.get(id).label);
  const nextOf = (id) => (id === GRAPH_ROOT ? [{ id: rootId, inputNr: 0 }] : nodes.get(id).next);
  const seqOf = (id) => (id === GRAPH_ROOT ? Number.MAX_SAFE_INTEGER : nodes.get(id).seq);
  const deps = new Map();
  const notReady = new Map(); // id -> contributions [{ from }]
  const status = new Map();
  let queue = [];
  let pushed = 0;
  const steps = [];
  const snap = (phase, text, extra = {}) => steps.push({
    phase, text, ...extra,
    deps: new Map(deps),
    notReady: new Map([...notReady].map(([k, v]) => [k, v.slice()])),
    queue: queue.slice().sort(byPriority).map((t) => ({ id: t.id, seq: t.seq, buffer: t.buffer.slice() })),
    status: new Map(status),
  });

  snap('init', `GraphTask created for backward of ${graph.rootName}. GraphRoot holds one edge, to ${label(rootId)} (input 0), and the gradient 1 (${graph.rootName} is a scalar).`);
  const seen = new Set();
  const stack = [GRAPH_ROOT];
  while (stack.length) {
    const fn = stack.pop();
    for (const e of nextOf(fn)) {
      if (e.id === null) continue;
      deps.set(e.id, (deps.get(e.id) ?? 0) + 1);
      status.set(e.id, 'waiting');
      snap('deps', `compute_dependencies: edge ${label(fn)} → ${label(e.id)}, dependencies[${label(e.id)}] = ${deps.get(e.id)}`,
        { edge: [fn, e.id] });
      if (!seen.has(e.id)) { seen.add(e.id); stack.push(e.id); }
    }
  }
  queue.push({ id: GRAPH_ROOT, seq: seqOf(GRAPH_ROOT), buffer: [], pushed: pushed++ });
  snap('queue', 'The GraphRoot task goes on the ready queue; the worker loop starts.');
  while (queue.length) {
    queue.sort(byPriority);
    const task = queue.shift();
    status.set(task.id, 'running');
    const acc = task.id !== GRAPH_ROOT && nodes.get(task.id).name === 'AccumulateGrad';
    const n = task.buffer.length;
    snap('run', acc
      ? `run ${label(task.id)}: its InputBuffer (${n} gradient${n > 1 ? 's summed' : ''}) is added into ${nodes.get(task.id).tensorName ?? 'the leaf'}.grad`
      : `run ${label(task.id)} (sequence number ${task.id === GRAPH_ROOT ? 'new' : task.seq}) on its InputBuffer${n > 1 ? ` (${held(task.buffer)})` : ''}`,
      { running: task.id, buffer: task.buffer });
    for (const [i, e] of nextOf(task.id).entries()) {
      if (e.id === null) continue;
      const left = deps.get(e.id) - 1;
      if (left === 0) deps.delete(e.id);
      else deps.set(e.id, left);
      const buf = notReady.get(e.id) ?? [];
      const fresh = !notReady.has(e.id);
      buf.push({ from: task.id, output: i, input: e.inputNr });
      let what;
      if (left === 0) {
        notReady.delete(e.id);
        queue.push({ id: e.id, seq: seqOf(e.id), buffer: buf, pushed: pushed++ });
        status.set(e.id, 'ready');
        what = fresh ? 'count 0: ready, pushed on the ready queue' : `count 0: its buffer now holds ${held(buf)}; ready, moved from not_ready to the ready queue`;
      } else {
        notReady.set(e.id, buf);
        what = fresh ? `count ${left}: not ready, a new InputBuffer in not_ready` : `count ${left}: added into its InputBuffer in not_ready`;
      }
      snap('send', `${label(task.id)} output ${i} → ${label(e.id)}: ${what}`, { running: task.id, edge: [task.id, e.id] });
    }
    status.set(task.id, 'done');
  }
  snap('done', 'Ready queue empty, no outstanding tasks: the GraphTask is complete and backward() returns.');
  return steps;
}

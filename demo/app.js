// The demo page: make a tensor, apply views and copies, watch strides and memory.
// Every size, stride, offset and flag shown comes from weft; the page only
// keeps track of which storage each step points into.
import { init } from '../dist/browser.js';
import { OPS, opById, parseList } from './ops.js';
import { el, renderMeta, renderViews, numelOf, unravel, storageIndex } from './layout.js';
import { renderBackend, setupPlan, renderTrace, setupBench, initBest } from './panels.js';
import { setupConv } from './conv.js';
import { setupAutograd } from './autograd.js';

const $ = (id) => document.getElementById(id);
const ui = { logical: $('logical'), memory: $('memory'), formula: $('formula') };
const ITEMSIZE = { bool: 1, uint8: 1, int8: 1, int16: 2, int32: 4, int64: 8, float16: 2, bfloat16: 2, float32: 4, float64: 8 };
const FLOATING = new Set(['float16', 'bfloat16', 'float32', 'float64']);
const MAX_SIZE = 8;
const MAX_NUMEL = 256;

const state = {
  wt: null,
  steps: [],          // { name, code, tensor, storage, copied, note }
  current: -1,
  storages: new Map(), // storage base address -> { label, size, values, origin, originTotal }
  nextStorage: 0,
  plan: null,
};

// ---- status line -----------------------------------------------------------

function showStatus(msg, kind = 'error') {
  const s = $('status');
  s.hidden = !msg;
  s.className = `status ${kind}`;
  s.textContent = msg || '';
}

function errorText(e) {
  const name = e && e.name && e.name !== 'Error' ? `${e.name}: ` : '';
  return `${name}${e && e.message ? e.message : String(e)}`;
}

// ---- storages ----------------------------------------------------------------

const itemsize = (t) => (typeof t.elementSize === 'function' ? t.elementSize() : ITEMSIZE[t.dtype]);
const stridesOf = (t) => t.stride();

function flatValues(t) {
  const d = typeof t.data === 'function' ? t.data() : t.toArray();
  const arr = Array.isArray(d) ? d.flat(Infinity) : Array.from(d);
  return arr.map((v) => (typeof v === 'bigint' ? Number(v) : typeof v === 'boolean' ? Number(v) : v));
}

function storageBase(t) {
  return Number(t.dataPtr()) - t.storageOffset() * itemsize(t);
}

function extentOf(t) {
  const shape = t.shape;
  if (numelOf(shape) === 0) return t.storageOffset();
  return storageIndex(shape.map((s) => s - 1), stridesOf(t), t.storageOffset()) + 1;
}

// Finds the storage t points into, or records a new one (a factory or a copy).
// `from` is the tensor an op was applied to, used to carry colours over a copy.
function trackStorage(t, from) {
  const base = storageBase(t);
  const known = state.storages.get(base);
  if (known) {
    known.size = Math.max(known.size, extentOf(t));
    return { storage: known, copied: false };
  }
  const size = extentOf(t);
  const values = new Array(size);
  const origin = new Array(size);
  const shape = t.shape;
  const strides = stridesOf(t);
  const vals = flatValues(t);
  let fromInfo = null;
  if (from) {
    const st = state.storages.get(storageBase(from));
    if (st) fromInfo = { st, shape: from.shape, strides: stridesOf(from), offset: from.storageOffset() };
  }
  for (let i = 0; i < vals.length; i++) {
    const idx = unravel(i, shape);
    const s = storageIndex(idx, strides, t.storageOffset());
    values[s] = vals[i];
    if (fromInfo && fromInfo.shape.length === shape.length && numelOf(fromInfo.shape) === vals.length) {
      origin[s] = fromInfo.st.origin[storageIndex(idx, fromInfo.strides, fromInfo.offset)];
    } else if (fromInfo && numelOf(fromInfo.shape) === vals.length) {
      // reshape that copied: same logical order, different shape
      origin[s] = fromInfo.st.origin[storageIndex(unravel(i, fromInfo.shape), fromInfo.strides, fromInfo.offset)];
    } else {
      origin[s] = s;
    }
  }
  const storage = {
    label: `S${state.nextStorage++}`, size, values, origin,
    originTotal: fromInfo ? fromInfo.st.originTotal : size,
  };
  state.storages.set(base, storage);
  return { storage, copied: true };
}

function pruneStorages() {
  const live = new Set(state.steps.map((s) => s.storage));
  for (const [k, v] of state.storages) if (!live.has(v)) state.storages.delete(k);
}

// ---- steps -----------------------------------------------------------------

function disposeSteps(from) {
  const keep = new Set(state.steps.slice(0, from).map((s) => s.tensor));
  for (const s of state.steps.slice(from)) {
    if (!keep.has(s.tensor) && typeof s.tensor.dispose === 'function') s.tensor.dispose();
    keep.add(s.tensor);
  }
  state.steps.length = from;
}

function pushStep(tensor, code, from, trace) {
  const { storage, copied } = trackStorage(tensor, from);
  const name = `x${state.steps.length}`;
  state.steps.push({ name, code, tensor, storage, copied, trace });
  state.current = state.steps.length - 1;
  pruneStorages();
}

function current() {
  return state.steps[state.current];
}

function traced(fn) {
  const wt = state.wt;
  if (typeof wt.trace !== 'function') return { out: fn(), trace: null };
  let out;
  const trace = wt.trace(() => { out = fn(); return out; });
  return { out, trace: Array.isArray(trace) ? trace : trace && trace.events ? trace.events : [] };
}

function createTensor(shape, dtype, fill) {
  const wt = state.wt;
  const n = numelOf(shape);
  const dims = shape.join(', ');
  if (fill === 'rand') {
    const code = `wt.rand([${dims}], { dtype: '${dtype}' })`;
    return { ...traced(() => wt.rand(shape, { dtype })), code };
  }
  if (dtype === 'bool' || dtype === 'int8') {
    const vals = Array.from({ length: n }, (_, k) => (dtype === 'bool' ? k % 2 === 1 : k % 128));
    const code = `wt.tensor([${dtype === 'bool' ? 'false, true, …' : '0, 1, 2, …'}], { dtype: '${dtype}' }).view(${dims})`;
    return { ...traced(() => { const flat = wt.tensor(vals, { dtype }); const v = flat.view(shape); flat.dispose?.(); return v; }), code };
  }
  const code = `wt.arange(${n}, { dtype: '${dtype}' }).view(${dims})`;
  return {
    ...traced(() => {
      const flat = wt.arange(n, { dtype });
      const v = flat.view(shape);
      if (v !== flat) flat.dispose?.();
      return v;
    }),
    code,
  };
}

function make(shapeText, dtype, fill) {
  const shape = parseList(shapeText);
  if (!shape || shape.length < 1 || shape.length > 5) return showStatus('Shape: give 1 to 5 whole numbers, like "2, 3, 4".');
  if (shape.some((s) => s < 1 || s > MAX_SIZE)) return showStatus(`Shape: each size must be between 1 and ${MAX_SIZE} so it fits on screen.`);
  if (numelOf(shape) > MAX_NUMEL) return showStatus(`Shape: at most ${MAX_NUMEL} elements (this one has ${numelOf(shape)}).`);
  if (fill === 'rand' && !FLOATING.has(dtype)) return showStatus(`rand needs a floating dtype; ${dtype} is not. Use arange, or pick float32.`);
  let made;
  try {
    made = createTensor(shape, dtype, fill);
  } catch (e) {
    return showStatus(errorText(e));
  }
  $('shape').value = shape.join(', ');
  $('dtype').value = dtype;
  $('fill').value = fill;
  disposeSteps(0);
  state.storages.clear();
  state.nextStorage = 0;
  pushStep(made.out, made.code, null, made.trace);
  showStatus('');
  refresh();
}

function apply(opId, args) {
  const op = opById(opId);
  const step = current();
  if (!op || !step) return;
  let res;
  try {
    res = traced(() => op.call(step.tensor, args));
  } catch (e) {
    showStatus(errorText(e));
    renderOpTrace(null, `${step.name}.${op.code(args)} threw — no trace.`);
    return;
  }
  disposeSteps(state.current + 1);
  pushStep(res.out, `${step.name}.${op.code(args)}`, step.tensor, res.trace);
  const now = current();
  now.opId = opId;
  if (res.out === step.tensor || (!now.copied && (opId === 'contiguous' || opId === 'contiguous_cl') && sameMeta(res.out, step.tensor))) {
    now.note = 'Already in that format: contiguous() returned the same tensor, no copy.';
  }
  showStatus('');
  refresh();
}

function sameMeta(a, b) {
  return a.storageOffset() === b.storageOffset() && String(a.shape) === String(b.shape) && String(a.stride()) === String(b.stride());
}

// ---- rendering -------------------------------------------------------------

function flagsOf(t) {
  const ic = (f) => { try { return f ? t.isContiguous(f) : t.isContiguous(); } catch { return false; } };
  const flags = [
    { on: ic(), label: 'contiguous', title: 't.isContiguous(): row-major, no gaps' },
    { on: ic('channels_last'), label: 'channels_last', title: "t.isContiguous('channels_last'): 4-D NHWC order" },
  ];
  if (t.shape.length === 5) flags.push({ on: ic('channels_last_3d'), label: 'channels_last_3d', title: "t.isContiguous('channels_last_3d'): 5-D NDHWC order" });
  let dense = false;
  try { dense = t.isNonOverlappingAndDense(); } catch { /* older builds */ }
  flags.push({ on: dense, label: 'non-overlapping & dense', title: 't.isNonOverlappingAndDense(): some permutation of the dims is contiguous' });
  return flags;
}

// On a narrow screen the controls sit below the picture: bring the result into view.
function revealResult() {
  if (!matchMedia('(max-width: 820px)').matches) return;
  const meta = $('meta').closest('.card');
  if (meta.getBoundingClientRect().top < 0 || meta.getBoundingClientRect().top > innerHeight * 0.5) {
    meta.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  }
}

function refresh() {
  const step = current();
  const t = step.tensor;
  const info = {
    name: step.name, shape: t.shape, strides: stridesOf(t), offset: t.storageOffset(), dtype: t.dtype,
    itemsize: itemsize(t), flags: flagsOf(t), values: step.storage.values, storage: step.storage,
  };
  renderMeta($('meta'), info);
  const prev = state.steps[state.current - 1];
  info.source = step.copied && prev ? prev.storage : null;
  info.fresh = step.copied && !step.shown;
  step.shown = true;
  renderViews(ui, info);
  renderStorageNote(step, prev);
  renderHistory();
  renderOpTrace(step.trace, `${step.name} = ${step.code}`);
  syncOpForm();
  state.plan?.update();
}

function renderStorageNote(step, prev) {
  const st = step.storage;
  const mem = typeof state.wt.memory === 'function' ? state.wt.memory() : null;
  const plural = (n, w) => `${n ?? '?'} ${w}${n === 1 ? '' : 's'}`;
  const live = mem ? ` · weft now holds ${plural(mem.tensors, 'tensor')}, ${plural(mem.storages, 'storage')}, ${mem.bytesInUse ?? '?'} B` : '';
  let what;
  if (!prev) what = el('span', { class: 'badge new', text: `storage ${st.label} · new` });
  else if (step.copied) what = el('span', { class: 'badge copy', text: `storage ${st.label} · new: the op copied ${numelOf(step.tensor.shape)} elements` });
  else what = el('span', { class: 'badge same', text: `storage ${st.label} · same memory as ${prev.name}: a view, nothing moved` });
  $('storage-note').replaceChildren(what,
    step.note ? el('span', { class: 'note', text: step.note }) : '',
    el('span', { class: 'muted', text: `${st.size} elements${live}` }));
}

function renderHistory() {
  const list = $('history');
  list.replaceChildren(...state.steps.map((s, i) => el('li', {},
    el('button', {
      type: 'button', class: `step${i === state.current ? ' current' : ''}`, 'aria-current': i === state.current ? 'step' : null,
      onclick: () => { state.current = i; showStatus(''); refresh(); revealResult(); },
    }, el('code', {}, el('span', { class: 'lhs', text: `${s.name} = ` }), s.code),
    el('span', { class: `tag ${s.copied ? 'copy' : 'view'}`, text: i === 0 ? 'new' : s.copied ? 'copy' : 'view' })))));
}

function renderOpTrace(trace, code) {
  renderTrace($('trace'), state.wt, trace, code);
}

// ---- op form ---------------------------------------------------------------

function argInputs(op, t) {
  return op.args.map((a) => {
    const def = a.def(t);
    const input = a.kind === 'list'
      ? el('input', { name: a.name, value: def.join(', '), spellcheck: 'false', inputmode: 'numeric' })
      : el('input', { name: a.name, type: 'number', value: String(def), min: a.min ?? null, step: '1' });
    input.addEventListener('input', updateCode);
    return el('label', { class: `field ${a.kind === 'list' ? 'grow' : 'narrow'}` }, a.name, input);
  });
}

function readArgs(op) {
  const form = $('apply');
  const out = {};
  for (const a of op.args) {
    const raw = form.elements[a.name].value;
    if (a.kind === 'list') {
      const v = parseList(raw);
      if (!v) throw new Error(`${a.name}: give whole numbers separated by commas`);
      out[a.name] = v;
    } else {
      const v = Number(raw);
      if (raw.trim() === '' || !Number.isInteger(v)) throw new Error(`${a.name}: give a whole number`);
      out[a.name] = v;
    }
  }
  return out;
}

function updateCode() {
  const op = opById($('op').value);
  const step = current();
  let text;
  try { text = `${step ? step.name : 'x'}.${op.code(readArgs(op))}`; } catch (e) { text = e.message; }
  $('op-code').textContent = text;
}

let formFor = null;
function syncOpForm(force = false) {
  const op = opById($('op').value);
  const step = current();
  if (!step) return;
  const key = `${op.id}:${state.current}:${state.steps.length}`;
  if (!force && key === formFor) return;
  formFor = key;
  $('op-args').replaceChildren(...argInputs(op, step.tensor));
  $('op-doc').textContent = op.doc;
  updateCode();
}

// ---- presets -----------------------------------------------------------------

const PRESETS = {
  nchw: { shape: '1, 3, 2, 2', ops: [['contiguous_cl', {}]] },
  transpose: { shape: '2, 3', ops: [['transpose', { dim0: 0, dim1: 1 }]] },
  slice: { shape: '3, 6', ops: [['slice', { dim: 1, start: 1, end: 6, step: 2 }]] },
  expand: { shape: '3, 1', ops: [['expand', { sizes: [3, 4] }]] },
};

function runPreset(id) {
  const p = PRESETS[id];
  $('shape').value = p.shape;
  $('fill').value = 'arange';
  make(p.shape, $('dtype').value, 'arange');
  for (const [op, args] of p.ops) apply(op, args);
  const last = p.ops[p.ops.length - 1];
  if (last) { $('op').value = last[0]; syncOpForm(true); }
}

// ---- start -------------------------------------------------------------------

async function start() {
  $('op').replaceChildren(...OPS.map((o) => el('option', { value: o.id, text: o.label })));
  $('op').addEventListener('change', () => syncOpForm(true));
  $('make').addEventListener('submit', (e) => {
    e.preventDefault();
    make($('shape').value, $('dtype').value, $('fill').value);
    revealResult();
  });
  $('apply').addEventListener('submit', (e) => {
    e.preventDefault();
    const op = opById($('op').value);
    let args;
    try { args = readArgs(op); } catch (err) { return showStatus(err.message); }
    apply(op.id, args);
    revealResult();
  });
  for (const b of document.querySelectorAll('[data-preset]')) {
    b.addEventListener('click', () => { runPreset(b.dataset.preset); revealResult(); });
  }

  const wt = await loadWeft();
  if (!wt) return;
  state.wt = wt;
  window.weftDemo = { wt, state, make, apply, runPreset };
  renderBackend($('backend'), wt);
  state.plan = setupPlan({ form: $('plan-form'), select: $('plan-op'), out: $('plan') }, wt, () => {
    const step = current();
    const prev = state.steps[state.current - 1];
    return { x: step?.tensor, last: step && prev && step.opId ? { tensor: prev.tensor, opId: step.opId, name: prev.name } : null };
  });
  setupBench({ form: $('bench-form'), shape: $('bench-shape'), out: $('bench'), button: $('bench-run') }, wt);
  setupConv({ form: $('conv-form'), shape: $('conv-shape'), out: $('conv'), button: $('conv-run') }, wt);
  setupAutograd({
    preset: $('ag-preset'), program: $('ag-program'), build: $('ag-build'), graph: $('ag-graph'), status: $('ag-status'),
    prev: $('ag-prev'), step: $('ag-step'), play: $('ag-play'), run: $('ag-run'), reset: $('ag-reset'), counter: $('ag-counter'),
    text: $('ag-text'), deps: $('ag-deps'), queue: $('ag-queue'), notReady: $('ag-notready'), running: $('ag-running'),
    result: $('ag-result'),
  }, wt);
  make($('shape').value, $('dtype').value, $('fill').value);
  document.body.dataset.ready = 'true';
}

async function loadWeft() {
  try {
    return await initBest(init);
  } catch (first) {
    $('backend').replaceChildren(el('span', { class: 'pill pill-bad', text: 'weft failed to load' }));
    showStatus(`weft could not start: ${errorText(first)}. Was it built (npm run build)?`);
    document.body.dataset.ready = 'failed';
    return null;
  }
}

start();

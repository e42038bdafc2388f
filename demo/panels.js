// The "under the hood" panels: backend badge, TensorIterator plan, dispatch
// trace and benchmark. Each feature-detects its part of the API and says
// plainly when this build does not have it yet.
import { el } from './layout.js';

function unavailable(what, api) {
  return el('div', { class: 'unavailable', role: 'note' },
    el('span', { class: 'pill pill-off', text: 'not available in this build yet' }),
    el('p', {}, `${what} needs `, el('code', { text: api }), ', which this build of weft does not export. The panel lights up once it does.'));
}

// ---- page helpers ---------------------------------------------------------------

// The page's #status line: a message (an error unless kind says otherwise), or hidden.
export function showStatus(msg, kind = 'error') {
  const s = document.getElementById('status');
  s.hidden = !msg;
  s.className = `status ${kind}`;
  s.textContent = msg || '';
}

export async function fetchBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetching ${url} failed: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

// An 8x8 digit (64 pixel values 0..16, row by row) on an 8x8 canvas, dark ink on white.
export function drawDigit(canvas, pixels) {
  const g = canvas.getContext('2d');
  const img = g.createImageData(8, 8);
  pixels.forEach((v, i) => {
    const ink = 255 - Math.round((v / 16) * 255);
    img.data.set([ink, ink, ink, 255], i * 4);
  });
  g.putImageData(img, 0, 0);
}

// A canvas's 2D context drawing in CSS pixels at the screen's resolution (the
// backing store resized to the element's size times devicePixelRatio), cleared.
export function sharpCanvas(c) {
  const dpr = window.devicePixelRatio || 1;
  const w = c.clientWidth || c.width, h = c.clientHeight || c.height;
  if (c.width !== Math.round(w * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); }
  const g = c.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  return { g, w, h };
}

// ---- backend -------------------------------------------------------------------

// The threaded build when the page is cross-origin isolated, else the
// single-threaded one; weft-simd if the first choice fails to start.
export async function initBest(init) {
  const isolated = globalThis.crossOriginIsolated === true;
  try {
    return await init(isolated ? { threads: 'auto' } : { threads: 1 });
  } catch (first) {
    try {
      return await init({ variant: 'simd' });
    } catch {
      throw first;
    }
  }
}

// A page's start: weft as initBest gives it, its backend pills in #backend;
// null when it failed, said in the page (showStatus) and on body[data-ready].
export async function startPage(init, showStatus) {
  const backend = document.getElementById('backend');
  try {
    const wt = await initBest(init);
    renderBackend(backend, wt);
    return wt;
  } catch (e) {
    backend.replaceChildren(el('span', { class: 'pill pill-bad', text: 'weft failed to load' }));
    showStatus(`weft could not start: ${e.message}. Was it built (npm run build)?`);
    document.body.dataset.ready = 'failed';
    return null;
  }
}

export function backendInfo(wt) {
  const isolated = globalThis.crossOriginIsolated === true;
  const b = wt.backend && typeof wt.backend === 'object' ? wt.backend : null;
  const variant = b?.variant ?? wt.variant ?? null;
  const call = (name) => (typeof wt[name] === 'function' ? wt[name]() : undefined);
  return {
    variant,
    simd: b?.simd ?? (variant ? !/scalar/.test(variant) : undefined),
    // wt.backend.threads may be a count or a yes/no; the pool size comes from getNumThreads().
    threads: (typeof b?.threads === 'number' ? b.threads : call('getNumThreads')) ?? (b?.threads === false ? 1 : null),
    threadedBuild: typeof b?.threads === 'boolean' ? b.threads : undefined,
    maxThreads: call('maxThreads') ?? call('getNumThreads') ?? 1,
    isolated: b?.crossOriginIsolated ?? isolated,
    reason: b?.reason ?? null,
    known: !!variant,
  };
}

export function renderBackend(root, wt) {
  const info = backendInfo(wt);
  const threaded = info.threadedBuild ?? (info.threads > 1 || (!!info.variant && /thread/.test(info.variant)));
  const variant = info.variant ? (info.variant.startsWith('weft-') ? info.variant : `weft-${info.variant}`) : 'variant unknown';
  const pills = [
    el('span', { class: `pill ${threaded ? 'pill-good' : 'pill-warn'}`, id: 'backend-variant', text: variant, title: info.reason }),
    el('span', { class: 'pill', id: 'backend-threads', text: info.threads ? `${info.threads} thread${info.threads > 1 ? 's' : ''}` : 'threads: ?' }),
    info.simd === undefined ? null : el('span', { class: 'pill', text: info.simd ? 'SIMD' : 'no SIMD' }),
    el('span', { class: `pill ${info.isolated ? 'pill-good' : 'pill-warn'}`, id: 'backend-isolated', text: info.isolated ? 'cross-origin isolated' : 'not isolated' }),
  ];
  let why = null;
  if (!info.isolated) {
    why = 'Single-threaded: this page is not cross-origin isolated (no COOP/COEP headers), so there is no SharedArrayBuffer and weft runs its single-threaded build.';
  } else if (!threaded) {
    why = `Single-threaded${info.reason ? `: ${info.reason}` : '.'}`;
  }
  root.replaceChildren(...[el('div', { class: 'pills' }, ...pills.filter(Boolean)),
    why ? el('p', { class: 'why', id: 'backend-why', text: why }) : null,
    info.known ? null : el('p', { class: 'why', text: 'This build does not report its variant (wt.backend): variant and threads are unknown.' })].filter(Boolean));
  root.dataset.threaded = threaded ? 'true' : 'false';
}

// ---- TensorIterator plan ------------------------------------------------------------

// What to explain on the current tensor x. Each gives the explain() calls to
// try in order (the first that works wins) and temporaries to dispose after.
const LAST_FORMAT = { contiguous: 'contiguous_format', contiguous_cl: 'channels_last' };
const PLAN_OPS = [
  { id: 'last', label: (last) => `${last.name} → x: the last copy`, need: (x, last) => !!(last && LAST_FORMAT[last.opId]),
    calls: (wt, x, last) => copyCalls(wt, last.tensor, LAST_FORMAT[last.opId]) },
  { id: 'cl', label: 'x.contiguous(channels_last)', need: (x) => x.shape.length === 4,
    calls: (wt, x) => copyCalls(wt, x, 'channels_last') },
  { id: 'c', label: 'x.contiguous()', need: () => true,
    calls: (wt, x) => copyCalls(wt, x, 'contiguous_format') },
  { id: 'add', label: 'wt.add(x, x)', need: () => true,
    calls: (wt, x) => ({ calls: [['add', x, x]], temps: [] }) },
  { id: 'addb', label: 'wt.add(x, x[0]) · broadcast', need: (x) => x.shape.length >= 1,
    calls: (wt, x) => { const y = x.select(0, 0); return { calls: [['add', x, y]], temps: [y] }; } },
];

function copyCalls(wt, x, memoryFormat) {
  const calls = [['contiguous', x, { memoryFormat }]];
  const temps = [];
  if (typeof wt.emptyLike === 'function') {
    const dst = wt.emptyLike(x, { memoryFormat });
    temps.push(dst);
    calls.push(['copy_', dst, x]);
  }
  return { calls, temps };
}

const pick = (o, ...keys) => { for (const k of keys) if (o && o[k] !== undefined && o[k] !== null) return o[k]; return undefined; };

// The plan as weft_iter_explain_json writes it ({op, broadcastShape, permutation,
// shape, strides, dtypes, commonDtype, fastSetup, loop, chunks}); iterator dims
// are fastest first, as in PyTorch's TensorIterator. snake_case is accepted too.
export function normalizePlan(p) {
  const strides = pick(p, 'strides', 'byteStrides', 'byte_strides') || [];
  const n = strides.length;
  const names = n === 2 ? ['out', 'self'] : n === 3 ? ['out', 'self', 'other'] : strides.map((_, i) => (i ? `in${i}` : 'out'));
  return {
    op: pick(p, 'op'),
    shape: pick(p, 'broadcastShape', 'broadcast_shape') || [],
    perm: pick(p, 'permutation', 'perm'),
    coalesced: pick(p, 'shape', 'coalescedShape', 'coalesced_shape') || [],
    strides,
    names,
    dtypes: pick(p, 'dtypes') || [],
    dtype: pick(p, 'commonDtype', 'common_dtype', 'dtype'),
    fast: pick(p, 'fastSetup', 'fast_setup', 'fastPath', 'fast_path'),
    loop: pick(p, 'loop', 'loopKind', 'loop_kind'),
    chunks: pick(p, 'chunks', 'numChunks', 'num_chunks'),
    numel: pick(p, 'numel'),
  };
}

function dimBoxes(shape, cls = '', labels) {
  return el('div', { class: `dimboxes ${cls}` }, ...shape.map((s, i) => el('span', { class: 'dimbox', 'data-d': String(i) },
    el('b', { text: String(s) }), labels ? el('small', { text: labels[i] }) : null)));
}

function permutationSvg(perm) {
  const n = perm.length;
  const w = 44;
  const width = n * w;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} 40`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', '40');
  svg.setAttribute('aria-hidden', 'true');
  perm.forEach((from, to) => {
    const line = document.createElementNS(ns, 'path');
    const x1 = from * w + 20; // boxes are 40 px wide with a 4 px gap (style.css .perm)
    const x2 = to * w + 20;
    line.setAttribute('d', `M${x1} 2 C ${x1} 22, ${x2} 18, ${x2} 38`);
    line.setAttribute('class', from === to ? 'keep' : 'move');
    svg.append(line);
  });
  return svg;
}

function chunkBar(chunks, threads) {
  const n = Math.max(1, Math.min(chunks | 0, 64));
  return el('div', { class: 'chunks', role: 'img', 'aria-label': `${chunks} chunk${chunks === 1 ? '' : 's'}` },
    ...Array.from({ length: n }, (_, i) => el('span', { class: 'chunk', style: { '--h': String((i * 360) / Math.max(threads || n, 1)) }, text: String(i) })));
}

const LOOP_DOC = {
  vectorized: 'every operand moves one element at a time: SIMD kernel',
  'scalar-broadcast': 'contiguous, with an input of stride 0: kernel with a scalar operand',
  transpose: 'input and output walk the inner two dims in opposite order: tiled transpose kernel',
  strided: 'general strides: element-by-element loop',
};

export function renderPlan(root, raw, threads) {
  const p = normalizePlan(raw);
  const sections = [];
  const perm = Array.isArray(p.perm) && p.perm.length ? p.perm : null;

  sections.push(el('div', { class: 'stage' }, el('h3', { text: '1 · broadcast' }),
    el('div', { class: 'stage-body' },
      el('div', { class: 'opline' }, el('code', { class: 'opname', text: 'shape' }),
        dimBoxes(p.shape, '', p.shape.map((_, d) => `d${d}`))))));

  sections.push(el('div', { class: 'stage' },
    el('h3', { text: perm ? '2 · reorder: fastest-moving dim first' : '2 · reorder: skipped (fast setup)' }),
    perm ? el('div', { class: 'stage-body perm' },
      dimBoxes(p.shape.length ? p.shape : perm.map(() => '?'), 'faint', p.shape.map((_, d) => `d${d}`)),
      permutationSvg(perm),
      dimBoxes(perm.map((d) => p.shape[d] ?? '?'), '', perm.map((d) => `d${d}`))) : null));

  const strideRows = p.strides.map((s, i) => el('div', { class: 'opline' },
    el('code', { class: 'opname', text: p.names[i], title: p.dtypes[i] }),
    el('div', { class: 'dimboxes' }, ...(s || []).map((b) => el('span', { class: `dimbox stride${b === 0 ? ' zero' : ''}`, title: b === 0 ? 'stride 0: broadcast' : `${b} bytes` },
      el('b', { text: String(b) }), el('small', { text: 'B' }))))));
  sections.push(el('div', { class: 'stage' }, el('h3', { text: '3 · coalesce; byte strides per operand' }),
    el('div', { class: 'stage-body' },
      el('div', { class: 'opline' }, el('code', { class: 'opname', text: 'shape' }), dimBoxes(p.coalesced, 'coal')),
      ...strideRows)));

  const threadCount = threads || 1;
  sections.push(el('div', { class: 'stage' }, el('h3', { text: '4 · loop' }),
    el('div', { class: 'stage-body' },
      el('div', { class: 'pills' },
        p.loop !== undefined ? el('span', { class: 'pill pill-good', id: 'plan-loop', text: `loop: ${p.loop}` }) : null,
        p.fast !== undefined ? el('span', { class: 'pill', text: `fast setup: ${p.fast}` }) : null,
        p.dtype ? el('span', { class: 'pill', text: p.dtype }) : null),
      LOOP_DOC[p.loop] ? el('p', { class: 'help', text: LOOP_DOC[p.loop] }) : null,
      p.chunks !== undefined ? el('div', {},
        el('p', { class: 'help', text: `${p.chunks} parallel chunk${p.chunks === 1 ? '' : 's'}${p.numel !== undefined ? ` over ${p.numel} elements` : ''}, ${threadCount} thread${threadCount === 1 ? '' : 's'}` }),
        chunkBar(p.chunks, threadCount)) : null)));

  root.replaceChildren(el('div', { class: 'stages' }, ...sections),
    el('details', { class: 'raw' }, el('summary', { text: 'raw plan (JSON)' }), el('pre', { text: JSON.stringify(raw, null, 1) })));
}

// getCtx() -> { x: the current tensor, last: { tensor, opId } of the op that made it, or null }
export function setupPlan(ui, wt, getCtx) {
  if (typeof wt.explain !== 'function') {
    ui.form.querySelector('button').disabled = true;
    ui.select.disabled = true;
    ui.select.replaceChildren(el('option', { text: '—' }));
    ui.out.replaceChildren(unavailable('The iterator plan', 'wt.explain(opName, ...args)'));
    ui.out.dataset.state = 'unavailable';
    return { update() {} };
  }
  const run = () => {
    const { x, last } = getCtx();
    const op = PLAN_OPS.find((o) => o.id === ui.select.value);
    if (!x || !op) return;
    let temps = [];
    try {
      const c = op.calls(wt, x, last);
      temps = c.temps;
      let plan;
      let err;
      for (const call of c.calls) {
        try { plan = wt.explain(...call); break; } catch (e) { err = err ?? e; }
      }
      if (plan === undefined) throw err;
      if (typeof plan === 'string') plan = JSON.parse(plan);
      if (plan === null) {
        ui.out.replaceChildren(el('div', { class: 'unavailable' }, el('span', { class: 'pill pill-good', text: 'no iterator' }),
          el('p', { text: 'Nothing to iterate: x is already in that layout, so the op returns x itself without a copy.' })));
        ui.out.dataset.state = 'none';
        return;
      }
      renderPlan(ui.out, plan, backendInfo(wt).threads);
      ui.out.dataset.state = 'ok';
    } catch (e) {
      ui.out.replaceChildren(el('p', { class: 'error-text', text: `${e.name || 'Error'}: ${e.message}` }));
      ui.out.dataset.state = 'error';
    } finally {
      for (const t of temps) t.dispose?.();
    }
  };
  ui.form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  let chosen = false; // the person picked an op: keep it while it applies
  ui.select.addEventListener('change', () => { chosen = true; run(); });
  return {
    update() {
      const { x, last } = getCtx();
      if (!x) return;
      const prev = ui.select.value;
      const ok = PLAN_OPS.filter((o) => o.need(x, last));
      ui.select.replaceChildren(...ok.map((o) => el('option', { value: o.id, text: typeof o.label === 'function' ? o.label(last) : o.label })));
      ui.select.value = chosen && ok.some((o) => o.id === prev) ? prev : ok[0].id;
      run();
    },
  };
}

// ---- dispatch trace -------------------------------------------------------------------

const KEY_CLASS = (k) => String(k).replace(/[^A-Za-z]/g, '').toLowerCase();

export function renderTrace(root, wt, trace, code) {
  if (!wt || typeof wt.trace !== 'function') {
    root.replaceChildren(unavailable('The dispatch trace', 'wt.trace(fn)'));
    root.dataset.state = 'unavailable';
    return;
  }
  if (!trace) {
    root.replaceChildren(el('p', { class: 'help', text: code || 'Apply an op to see its trace.' }));
    root.dataset.state = 'empty';
    return;
  }
  // Build nested lists from the flat (op, key, depth) records.
  const top = el('ul', { class: 'tree' });
  const stack = [{ list: top, depth: -1, last: null }];
  for (const ev of trace) {
    const depth = Number(ev.depth) || 0;
    while (stack.length > 1 && stack[stack.length - 1].depth >= depth) stack.pop();
    const parent = stack[stack.length - 1];
    const li = el('li', { class: ev.redispatch ? 'redispatch' : null, title: ev.redispatch ? 'redispatch: the same op, continued at a lower key' : null },
      el('code', { class: 'op', text: ev.op }), el('span', { class: `key key-${KEY_CLASS(ev.key)}`, text: ev.key }));
    parent.list.append(li);
    const sub = el('ul', {});
    li.append(sub);
    stack.push({ list: sub, depth, last: li });
  }
  for (const ul of top.querySelectorAll('ul')) if (!ul.childElementCount) ul.remove();
  root.replaceChildren(el('p', { class: 'trace-code' }, el('code', { text: code })),
    trace.length ? top : el('p', { class: 'help', text: 'No dispatcher calls: this op only touched metadata in JS.' }));
  root.dataset.state = 'ok';
}

// ---- benchmark ---------------------------------------------------------------------------

const nextFrame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));

function timeIt(fn, reps) {
  fn(); // warm up: first touch of fresh memory, kernel selection
  const ts = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  return ts[ts.length >> 1];
}

export function setupBench(ui, wt) {
  const info = backendInfo(wt);
  const maxThreads = info.maxThreads || 1;
  const canSet = typeof wt.setNumThreads === 'function';
  const canAdd = typeof wt.add === 'function';
  const notes = [];
  if (!canSet) notes.push(el('p', { class: 'help', text: 'wt.setNumThreads is not in this build yet: only the current thread count is measured.' }));
  if (!canAdd) notes.push(el('p', { class: 'help', text: 'wt.add is not in this build yet: only the channels_last conversion is measured.' }));
  if (maxThreads <= 1) notes.push(el('p', { class: 'help', text: 'One thread available here, so there is no 1-vs-N comparison.' }));
  ui.out.replaceChildren(el('p', { class: 'help', text: 'Times the channels_last conversion and an add, with the median of 5 runs.' }), ...notes);

  ui.form.addEventListener('submit', async (e) => {
    e.preventDefault();
    ui.button.disabled = true;
    ui.button.textContent = 'Running…';
    ui.out.setAttribute('aria-busy', 'true');
    const shape = ui.shape.value.split(',').map(Number);
    const counts = canSet && maxThreads > 1 ? [1, maxThreads] : [maxThreads];
    const results = [];
    const held = [];
    try {
      const x = wt.rand(shape);
      held.push(x);
      const a = canAdd ? wt.rand(shape) : null;
      if (a) held.push(a);
      const bytes = shape.reduce((p, s) => p * s, 1) * 4;
      for (const n of counts) {
        if (canSet) wt.setNumThreads(n);
        await nextFrame();
        const cl = timeIt(() => x.contiguous({ memoryFormat: 'channels_last' }).dispose(), 5);
        results.push({ op: 'contiguous(channels_last)', threads: n, ms: cl, gbs: (2 * bytes) / cl / 1e6 });
        if (a) {
          await nextFrame();
          const ad = timeIt(() => wt.add(x, a).dispose(), 5);
          results.push({ op: 'add', threads: n, ms: ad, gbs: (3 * bytes) / ad / 1e6 });
        }
      }
      renderBench(ui.out, results, shape);
    } catch (err) {
      ui.out.replaceChildren(el('p', { class: 'error-text', text: `${err.name || 'Error'}: ${err.message}` }));
    } finally {
      if (canSet) wt.setNumThreads(maxThreads);
      for (const t of held) t.dispose?.();
      ui.button.disabled = false;
      ui.button.textContent = 'Run';
      ui.out.removeAttribute('aria-busy');
    }
  });
}

function speedup(x, threads) {
  const faster = x >= 1;
  return el('span', { class: `speedup${faster ? '' : ' slower'}`, text: `${threads} threads: ${faster ? `${x.toFixed(2)}× faster` : `${(1 / x).toFixed(2)}× slower`}` });
}

function renderBench(root, results, shape) {
  const max = Math.max(...results.map((r) => r.ms));
  const byOp = new Map();
  for (const r of results) (byOp.get(r.op) || byOp.set(r.op, []).get(r.op)).push(r);
  const groups = [...byOp].map(([op, rs]) => {
    const one = rs.find((r) => r.threads === 1);
    const many = rs.find((r) => r.threads > 1);
    return el('div', { class: 'bgroup' },
      el('h3', {}, el('code', { text: op }), one && many ? speedup(one.ms / many.ms, many.threads) : null),
      ...rs.map((r) => el('div', { class: 'brow' },
        el('span', { class: 'blabel', text: `${r.threads} thread${r.threads > 1 ? 's' : ''}` }),
        el('span', { class: 'btrack' }, el('span', { class: `bbar${r.threads > 1 ? ' many' : ''}`, style: { width: `${Math.max(2, (100 * r.ms) / max)}%` } })),
        el('span', { class: 'bfig', text: `${r.ms.toFixed(2)} ms · ${r.gbs.toFixed(1)} GB/s` }))));
  });
  root.replaceChildren(el('p', { class: 'help', text: `float32 [${shape.join(', ')}], median of 5 runs.` }), ...groups);
}

// A drop zone (a <label> around a file <input>): onFile(file) for a dropped
// file or a chosen one; the zone is outlined while a file is dragged over it.
export function onFileDrop(drop, input, onFile) {
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    onFile(ev.dataTransfer?.files?.[0]);
  });
  input.addEventListener('change', () => onFile(input.files[0]));
}

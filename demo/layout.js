// Draws one tensor: its metadata, its logical view (a grid per 2-D slice) and
// the storage it points into, with colours linking the two. Pure DOM, no state
// beyond what render() is given.

export const MAX_DRAWN = 1024;          // logical cells; beyond this we summarise
const DIM_COLORS = ['#d1495b', '#edae49', '#00798c', '#30638e', '#8f5ea2'];
export const dimColor = (d) => DIM_COLORS[d % DIM_COLORS.length];

export function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'style' && typeof v === 'object') {
      for (const [prop, val] of Object.entries(v)) {
        if (prop.startsWith('--')) e.style.setProperty(prop, val);
        else e.style[prop] = val;
      }
    }
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k);
  return e;
}

export function formatValue(v, dtype) {
  if (dtype === 'bool') return v ? 'T' : 'F';
  if (typeof v === 'bigint') return v.toString();
  if (v === undefined || Number.isNaN(v)) return '·';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2);
}

// Colour of an element by where it first lived, so that copies keep colours
// and the reordering in memory shows.
export function originColor(origin, total, strong = false) {
  if (origin === undefined) return strong ? '#9aa3b2' : '#eef0f4';
  const h = Math.round((origin / Math.max(total, 1)) * 320 + 15);
  return strong ? `oklch(0.45 0.13 ${h})` : `oklch(0.88 0.075 ${h})`;
}

export function unravel(lin, shape) {
  const idx = new Array(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = lin % shape[d];
    lin = Math.floor(lin / shape[d]);
  }
  return idx;
}

export function storageIndex(idx, strides, offset) {
  let s = offset;
  for (let d = 0; d < idx.length; d++) s += idx[d] * strides[d];
  return s;
}

export const numelOf = (shape) => shape.reduce((a, b) => a * b, 1);

// ---- metadata --------------------------------------------------------------

function pill(on, label, title) {
  return el('span', { class: `flag ${on ? 'on' : 'off'}`, title, 'data-flag': label, 'data-on': String(on) },
    el('span', { class: 'mark', 'aria-hidden': 'true', text: on ? '✓' : '✗' }),
    el('span', { class: 'sr-only', text: on ? 'yes: ' : 'no: ' }), label);
}

export function renderMeta(root, info) {
  const { shape, strides, offset, dtype, itemsize, flags, name } = info;
  const dims = shape.length
    ? el('table', { class: 'dims' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'dim' }),
        ...shape.map((_, d) => el('th', { scope: 'col', style: { color: dimColor(d) }, text: String(d) })))),
      el('tbody', {},
        el('tr', {}, el('th', { scope: 'row', text: 'size' }), ...shape.map((s) => el('td', { text: String(s) }))),
        el('tr', {}, el('th', { scope: 'row', text: 'stride' }),
          ...strides.map((s, d) => el('td', { class: s === 0 ? 'zero' : '', style: { color: dimColor(d) }, text: String(s) }))),
        el('tr', { class: 'bytes' }, el('th', { scope: 'row', text: 'bytes' }),
          ...strides.map((s) => el('td', { text: String(s * itemsize) })))))
    : el('p', { class: 'help', text: 'A 0-dim tensor: no sizes, no strides, one element at the offset.' });

  root.replaceChildren(
    el('div', { class: 'meta-line' },
      el('code', { class: 'var', text: name }),
      kv('shape', `[${shape.join(', ')}]`, 'meta-shape'),
      kv('stride', `[${strides.join(', ')}]`, 'meta-stride'),
      kv('storage offset', String(offset), 'meta-offset'),
      kv('dtype', `${dtype} · ${itemsize} B`, 'meta-dtype')),
    el('div', { class: 'meta-body' }, dims,
      el('div', { class: 'flags', role: 'list', 'aria-label': 'Contiguity flags' },
        ...flags.map((f) => el('span', { role: 'listitem' }, pill(f.on, f.label, f.title))))));
}

function kv(k, v, id) {
  return el('span', { class: 'kv' }, el('span', { class: 'k', text: k }), el('code', { class: 'v', id, text: v }));
}

// ---- logical view + memory ---------------------------------------------------

export function renderViews(ui, info) {
  const { shape, strides, offset, values, dtype, storage, source, name } = info;
  const n = numelOf(shape);
  const cells = [];                  // logical linear index -> element
  const toStorage = new Array(n);    // logical linear index -> storage index
  const users = new Map();           // storage index -> [logical linear indices]
  for (let i = 0; i < n; i++) {
    const s = storageIndex(unravel(i, shape), strides, offset);
    toStorage[i] = s;
    if (!users.has(s)) users.set(s, []);
    users.get(s).push(i);
  }
  const total = storage.originTotal;

  // Logical: rows = second-to-last dim, cols = last dim, one card per leading index.
  const cols = shape.length >= 1 ? shape[shape.length - 1] : 1;
  const rows = shape.length >= 2 ? shape[shape.length - 2] : 1;
  const per = rows * cols;
  const slices = [];
  if (n > MAX_DRAWN) {
    slices.push(el('p', { class: 'help', text: `${n} elements: too many to draw. Undo or select/slice to shrink it.` }));
  } else if (n === 0) {
    slices.push(el('p', { class: 'help', text: 'No elements (a size is 0).' }));
  } else {
    for (let base = 0; base < n; base += per) {
      const lead = unravel(base, shape).slice(0, Math.max(shape.length - 2, 0));
      const label = shape.length > 2 ? `${name}[${[...lead, ':', ':'].join(', ')}]` : shape.length === 0 ? `${name} (0-dim)` : name;
      const grid = el('div', { class: 'grid', role: 'group', 'aria-label': label, style: { gridTemplateColumns: `repeat(${cols}, var(--cell))` } });
      for (let i = base; i < base + per; i++) {
        const s = toStorage[i];
        const origin = storage.origin[s];
        const c = el('div', {
          class: 'cell', tabindex: i === 0 ? '0' : '-1', 'data-lin': String(i), 'data-s': String(s),
          'aria-label': `${name}[${unravel(i, shape).join(', ')}] = ${formatValue(values[s], dtype)}, storage element ${s}`,
          style: { background: originColor(origin, total), color: originColor(origin, total, true) },
          text: formatValue(values[s], dtype),
        });
        cells[i] = c;
        grid.append(c);
      }
      slices.push(el('figure', { class: 'slice', 'data-lead': String(lead[0] ?? 0) }, el('figcaption', { text: label }), grid));
    }
  }
  ui.logical.replaceChildren(...groupByLead(slices, shape.length));

  // Memory: every element of the storage; the ones this view reaches are solid.
  const memCells = [];
  const mem = el('div', { class: `mem-row${info.fresh ? ' fresh' : ''}`, role: 'group', 'aria-label': `storage ${storage.label}, ${storage.size} elements` });
  for (let s = 0; s < storage.size; s++) {
    const used = users.has(s);
    const origin = storage.origin[s];
    const c = el('div', {
      class: `mcell${used ? ' used' : ''}${s === offset ? ' start' : ''}`, tabindex: s === 0 ? '0' : '-1', 'data-s': String(s),
      'aria-label': `storage element ${s} = ${formatValue(storage.values[s], dtype)}, ${used ? `used by ${users.get(s).length} index${users.get(s).length > 1 ? 'es' : ''}` : 'not in this view'}`,
      style: { '--bg': originColor(origin, total), '--fg': originColor(origin, total, true) },
    }, el('span', { class: 'val', text: formatValue(storage.values[s], dtype) }), el('span', { class: 'idx', text: String(s) }));
    memCells[s] = c;
    mem.append(c);
  }
  const src = source ? renderSource(source, dtype) : null;
  ui.memory.replaceChildren(mem, ...(src ? [src] : []));

  const ctx = { shape, strides, offset, name, dtype, itemsize: info.itemsize, values, toStorage, users, cells, memCells, formula: ui.formula };
  wireHover(ui, ctx);
  return ctx;
}

// 4-D and 5-D: one row of slices per index of dim 0, so the nesting shows.
function groupByLead(slices, ndim) {
  if (ndim < 4 || slices.every((s) => s.dataset.lead === '0')) return slices;
  const groups = new Map();
  for (const s of slices) {
    const k = s.dataset.lead;
    if (!groups.has(k)) groups.set(k, el('div', { class: 'slice-group' }));
    groups.get(k).append(s);
  }
  return [...groups.values()];
}

// The storage a copy read from, drawn small beneath, so both orders can be compared.
function renderSource(src, dtype) {
  const row = el('div', { class: 'mem-row small', 'aria-hidden': 'true' });
  for (let s = 0; s < src.size; s++) {
    row.append(el('div', { class: 'mcell used', style: { '--bg': originColor(src.origin[s], src.originTotal), '--fg': originColor(src.origin[s], src.originTotal, true) } },
      el('span', { class: 'val', text: formatValue(src.values[s], dtype) }), el('span', { class: 'idx', text: String(s) })));
  }
  return el('div', { class: 'source' }, el('p', { class: 'help', text: `Copied from storage ${src.label} (still alive, held by an earlier step). Same colours, new order:` }), row);
}

// ---- hover / focus: offset + Σ index·stride -------------------------------------

function clearHighlights(ctx) {
  for (const c of ctx.hl || []) c.classList.remove('hl', 'hl-alias');
  ctx.hl = [];
}

function mark(ctx, c, cls) {
  if (!c) return;
  c.classList.add(cls);
  ctx.hl.push(c);
}

function showLogical(ctx, i) {
  clearHighlights(ctx);
  const idx = unravel(i, ctx.shape);
  const s = ctx.toStorage[i];
  for (const j of ctx.users.get(s)) mark(ctx, ctx.cells[j], j === i ? 'hl' : 'hl-alias');
  mark(ctx, ctx.memCells[s], 'hl');
  const f = ctx.formula;
  const terms = idx.flatMap((v, d) => [
    el('span', { class: 'op', text: ' + ' }),
    el('span', { class: 'term', style: { color: dimColor(d) } }, el('b', { text: String(v) }), '·', String(ctx.strides[d])),
  ]);
  const aliases = ctx.users.get(s).length - 1;
  f.replaceChildren(
    el('code', { class: 'idx-expr' }, `${ctx.name}[`, ...idx.map((v, d) => [d ? ', ' : '', el('b', { style: { color: dimColor(d) }, text: String(v) })]).flat(), ']'),
    el('span', { class: 'arrow', text: ' → ' }),
    el('code', {}, el('span', { class: 'term off', text: String(ctx.offset) }), ...terms, ' = ', el('b', { class: 'result', text: String(s) })),
    el('span', { class: 'bytes', text: `· byte ${s * ctx.itemsize}` }),
    aliases > 0 ? el('span', { class: 'alias', text: `· shared with ${aliases} other index${aliases > 1 ? 'es' : ''} (stride 0)` }) : '');
}

function showMemory(ctx, s) {
  clearHighlights(ctx);
  mark(ctx, ctx.memCells[s], 'hl');
  const us = ctx.users.get(s) || [];
  for (const j of us) mark(ctx, ctx.cells[j], 'hl');
  const names = us.slice(0, 6).map((j) => `${ctx.name}[${unravel(j, ctx.shape).join(', ')}]`);
  ctx.formula.replaceChildren(
    el('code', {}, `storage[${s}]`),
    el('span', { class: 'arrow', text: us.length ? ' ← ' : ' ' }),
    us.length ? el('code', { text: names.join(', ') + (us.length > 6 ? `, … (${us.length})` : '') })
      : el('span', { class: 'muted', text: 'not reachable from this view (the view skips it)' }));
}

function moveFocus(list, from, to) {
  const next = list[to];
  if (!next) return;
  if (from) from.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

function wireHover(ui, ctx) {
  ui.ctx = ctx;
  if (ui.wired) return;
  ui.wired = true;
  const onLogical = (e) => {
    const c = e.target.closest('.cell');
    if (c && ui.ctx) showLogical(ui.ctx, +c.dataset.lin);
  };
  const onMem = (e) => {
    const c = e.target.closest('.mcell');
    if (c && c.dataset.s !== undefined && ui.ctx) showMemory(ui.ctx, +c.dataset.s);
  };
  ui.logical.addEventListener('pointerover', onLogical);
  ui.logical.addEventListener('focusin', onLogical);
  ui.memory.addEventListener('pointerover', onMem);
  ui.memory.addEventListener('focusin', onMem);
  ui.logical.addEventListener('keydown', (e) => {
    const c = e.target.closest('.cell');
    const ctx = ui.ctx;
    if (!c || !ctx) return;
    const cols = ctx.shape.length ? ctx.shape[ctx.shape.length - 1] : 1;
    const i = +c.dataset.lin;
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -cols, ArrowDown: cols, Home: -i, End: ctx.cells.length - 1 - i }[e.key];
    if (step === undefined) return;
    e.preventDefault();
    moveFocus(ctx.cells, c, i + step);
  });
  ui.memory.addEventListener('keydown', (e) => {
    const c = e.target.closest('.mcell');
    const ctx = ui.ctx;
    if (!c || c.dataset.s === undefined || !ctx) return;
    const s = +c.dataset.s;
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1, Home: -s, End: ctx.memCells.length - 1 - s }[e.key];
    if (step === undefined) return;
    e.preventDefault();
    moveFocus(ctx.memCells, c, s + step);
  });
}

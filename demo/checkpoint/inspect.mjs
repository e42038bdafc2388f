// What a checkpoint holds, as rows a page or a terminal shows: each tensor
// (dotted name, dtype, shape, strides, storage offset, layout, bytes, first
// values) with the storage it views, each storage with the tensors sharing
// it, and the values that are no tensors (an epoch, a learning rate).
// Used by demo/checkpoint.js and demo/node/inspect_checkpoint.mjs.

const PREVIEW = 6;
const PREVIEW_COPY_LIMIT = 1 << 20; // a non-contiguous tensor larger than this shows no values

/** 'torch.save' (a zip, 'PK') or 'safetensors' (anything else is tried as that). */
export const formatOf = (u8) => (u8.length >= 2 && u8[0] === 0x50 && u8[1] === 0x4b ? 'torch.save' : 'safetensors');

/** Loads bytes of either format: { format, value }. */
export function loadCheckpoint(wt, u8) {
  const format = formatOf(u8);
  return { format, value: format === 'torch.save' ? wt.load(u8) : wt.loadSafetensors(u8) };
}

class SameAs {
  constructor(name) { this.name = name; }
}

// [name, value] of every leaf under value: dict keys joined with '.', list
// items as [i]; a container met again (a file may share one) is listed once.
function leaves(wt, value, name = '', out = [], seen = new Map()) {
  const container = value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof wt.Tensor);
  if (container && seen.has(value)) {
    out.push([name, new SameAs(seen.get(value) || 'the file')]);
  } else if (container) {
    seen.set(value, name);
    const items = Array.isArray(value) ? value.map((v, i) => [`${name}[${i}]`, v]) :
      Object.entries(value).map(([k, v]) => [name ? `${name}.${k}` : k, v]);
    for (const [n, v] of items) leaves(wt, v, n, out, seen);
  } else {
    out.push([name || '(the file)', value]);
  }
  return out;
}

function layoutOf(t) {
  if (t.dim() === 4 && t.isContiguous('channels_last') && !t.isContiguous()) return 'channels_last';
  return t.isContiguous() ? 'contiguous' : 'strided';
}

function preview(wt, t) {
  if (t.device !== 'cpu' || t.numel() === 0) return [];
  const cheap = t.isContiguous();
  if (!cheap && t.numel() > PREVIEW_COPY_LIMIT) return null;
  const values = wt.tidy(() => {
    const flat = cheap ? t.view(-1) : t.flatten();
    return [...flat.narrow(0, 0, Math.min(PREVIEW, t.numel())).data()];
  });
  return values.map((v) => (t.dtype === 'bool' ? String(v !== 0) : typeof v === 'bigint' ? String(v) : Number(v.toPrecision(5)).toString()));
}

const text = (v) => (v instanceof SameAs ? `(the same as ${v.name})` : v === null ? 'None' : typeof v === 'string' ? JSON.stringify(v) : v instanceof Uint8Array ? `bytes (${v.length})` : String(v));

/**
 * { tensors: [row], storages: [{ label, dtype, elements, bytes, tensors }],
 *   values: [{ name, text }], totalBytes } of a loaded checkpoint.
 */
export function inspect(wt, value) {
  const tensors = [];
  const values = [];
  const storages = new Map(); // base address -> storage row
  const seen = new Map(); // tensor -> row (a tensor listed twice)
  for (const [name, v] of leaves(wt, value)) {
    if (!(v instanceof wt.Tensor)) {
      values.push({ name, text: text(v) });
      continue;
    }
    const row = {
      name, dtype: v.dtype, shape: v.shape, stride: v.stride(), offset: v.storageOffset(), numel: v.numel(),
      bytes: v.numel() * v.elementSize(), layout: layoutOf(v), device: v.device, requiresGrad: v.requiresGrad,
      storage: v.device === 'meta' ? 'meta' : '—', values: preview(wt, v), same: seen.get(v)?.name ?? null,
    };
    seen.set(v, seen.get(v) ?? row);
    tensors.push(row);
    if (v.device !== 'cpu' || row.numel === 0) continue;
    const address = v.dataPtr() - row.offset * v.elementSize();
    const reach = row.shape.reduce((n, d, i) => n + (d - 1) * row.stride[i], row.offset) + 1;
    let s = storages.get(address);
    if (!s) {
      s = { label: `S${storages.size}`, dtype: v.dtype, elements: 0, bytes: 0, tensors: [] };
      storages.set(address, s);
    }
    s.elements = Math.max(s.elements, reach);
    s.bytes = s.elements * v.elementSize();
    if (!s.tensors.includes(name)) s.tensors.push(name);
    row.storage = s.label;
  }
  const list = [...storages.values()];
  return { tensors, storages: list, values, totalBytes: list.reduce((n, s) => n + s.bytes, 0) };
}

/** Every tensor in a loaded value, to dispose once inspected. */
export function tensorsOf(wt, value) {
  return [...new Set(leaves(wt, value).map(([, v]) => v).filter((v) => v instanceof wt.Tensor))];
}

export const formatBytes = (n) => (n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`);

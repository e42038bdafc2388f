// The ops the demo can apply: their arguments, defaults and how they read as code.
// Defaults are picked to be valid for the current tensor, so "Apply" always
// does something interesting first time.

const range = (n) => [...Array(n).keys()];

function defaultPermutation(t) {
  const n = t.shape.length;
  if (n === 4) return [0, 2, 3, 1];          // NCHW -> NHWC, the classic
  if (n < 2) return range(n);
  return [n - 1, ...range(n - 1)];           // rotate the last dim to the front
}

function largestDim(t) {
  const s = t.shape;
  return s.length ? s.indexOf(Math.max(...s)) : 0;
}

export const OPS = [
  {
    id: 'permute', label: 'permute(dims)',
    doc: 'Reorders the dims. Sizes and strides are shuffled together; memory is untouched.',
    args: [{ name: 'dims', kind: 'list', def: defaultPermutation }],
    call: (t, a) => t.permute(a.dims),
    code: (a) => `permute(${a.dims.join(', ')})`,
  },
  {
    id: 'transpose', label: 'transpose(dim0, dim1)',
    doc: 'Swaps two dims (a permute of two). A view: only the strides change places.',
    args: [{ name: 'dim0', kind: 'int', def: (t) => Math.max(t.shape.length - 2, 0) },
      { name: 'dim1', kind: 'int', def: (t) => Math.max(t.shape.length - 1, 0) }],
    call: (t, a) => t.transpose(a.dim0, a.dim1),
    code: (a) => `transpose(${a.dim0}, ${a.dim1})`,
  },
  {
    id: 'slice', label: 'slice(dim, start, end, step)',
    doc: 'x[..., start:end:step]. The offset moves to start, the stride is multiplied by step.',
    args: [{ name: 'dim', kind: 'int', def: largestDim }, { name: 'start', kind: 'int', def: () => 1 },
      { name: 'end', kind: 'int', def: (t) => t.shape[largestDim(t)] ?? 1 }, { name: 'step', kind: 'int', def: () => 2, min: 1 }],
    call: (t, a) => t.slice(a.dim, a.start, a.end, a.step),
    code: (a) => `slice(${a.dim}, ${a.start}, ${a.end}, ${a.step})`,
  },
  {
    id: 'select', label: 'select(dim, index)',
    doc: 'x[..., index]: drops a dim and moves the offset by index × stride.',
    args: [{ name: 'dim', kind: 'int', def: () => 0 }, { name: 'index', kind: 'int', def: (t) => (t.shape[0] > 1 ? 1 : 0) }],
    call: (t, a) => t.select(a.dim, a.index),
    code: (a) => `select(${a.dim}, ${a.index})`,
  },
  {
    id: 'expand', label: 'expand(sizes)',
    doc: 'Broadcasts size-1 dims (or new leading dims) to a larger size with stride 0: many indices, one element.',
    args: [{ name: 'sizes', kind: 'list', def: (t) => [2, ...t.shape] }],
    call: (t, a) => t.expand(a.sizes),
    code: (a) => `expand(${a.sizes.join(', ')})`,
  },
  {
    id: 'unsqueeze', label: 'unsqueeze(dim)',
    doc: 'Inserts a size-1 dim. Its stride is chosen so the tensor stays as contiguous as it was.',
    args: [{ name: 'dim', kind: 'int', def: () => 0 }],
    call: (t, a) => t.unsqueeze(a.dim),
    code: (a) => `unsqueeze(${a.dim})`,
  },
  {
    id: 'view', label: 'view(sizes)',
    doc: 'New sizes over the same memory. Fails when the strides cannot express it (then use reshape).',
    args: [{ name: 'sizes', kind: 'list', def: () => [-1] }],
    call: (t, a) => t.view(a.sizes),
    code: (a) => `view(${a.sizes.join(', ')})`,
  },
  {
    id: 'reshape', label: 'reshape(sizes)',
    doc: 'Like view when it can be; otherwise copies into new memory first.',
    args: [{ name: 'sizes', kind: 'list', def: (t) => [...t.shape].reverse() }],
    call: (t, a) => t.reshape(a.sizes),
    code: (a) => `reshape(${a.sizes.join(', ')})`,
  },
  {
    id: 'contiguous', label: 'contiguous()',
    doc: 'Row-major memory. Returns x itself when it already is; otherwise copies.',
    args: [],
    call: (t) => t.contiguous(),
    code: () => 'contiguous()',
  },
  {
    id: 'contiguous_cl', label: 'contiguous(channels_last)',
    doc: 'NHWC memory for a 4-D NCHW tensor: the channel stride becomes 1. Shape stays [N, C, H, W].',
    args: [],
    call: (t) => t.contiguous({ memoryFormat: 'channels_last' }),
    code: () => "contiguous({ memoryFormat: 'channels_last' })",
  },
];

export const opById = (id) => OPS.find((o) => o.id === id);

// "2, 3, 4", "2 3 4", "[2,3,4]" -> [2, 3, 4]; null when not a list of integers.
export function parseList(text) {
  const parts = String(text).replace(/[[\]()]/g, ' ').split(/[\s,]+/).filter(Boolean);
  const nums = parts.map(Number);
  return nums.every(Number.isInteger) ? nums : null;
}

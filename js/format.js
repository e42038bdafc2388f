// PyTorch's tensor printing (torch/_tensor_str.py, 1.13 defaults: precision 4,
// threshold 1000, edgeitems 3, linewidth 80), applied to a tensor's logical
// values. Numbers are formatted the way Python's format() does, including
// round-half-even on exact ties and two-digit exponents.

const PRECISION = 4;
const THRESHOLD = 1000;
const EDGEITEMS = 3;
const LINEWIDTH = 80;

// Python's '{:.Nf}' (kind 'f') or '{:.Ne}' (kind 'e') for a finite or
// non-finite double.
export function pyFormat(v, prec, kind) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v < 0 ? '-inf' : 'inf';
  const neg = v < 0 || Object.is(v, -0);
  const a = Math.abs(v);
  let s = kind === 'f' ? a.toFixed(prec) : a.toExponential(prec);
  // JS rounds exact ties away from zero, Python to even: redo those.
  const exact = kind === 'f' ? a.toFixed(100) : a.toExponential(100);
  const point = exact.indexOf('.');
  const cut = kind === 'f' ? point + 1 + prec : 2 + prec;
  const mantissaEnd = kind === 'f' ? exact.length : exact.indexOf('e');
  const rest = exact.slice(cut, mantissaEnd);
  if (/^50*$/.test(rest)) {
    const roundedMantissa = kind === 'f' ? s : s.slice(0, s.indexOf('e'));
    const last = roundedMantissa.charCodeAt(roundedMantissa.length - 1) - 48;
    if (last % 2 === 1) {
      let truncated = exact.slice(0, prec === 0 ? point : cut);
      if (kind === 'e') truncated += exact.slice(mantissaEnd);
      s = truncated;
    }
  }
  if (kind === 'e') s = s.replace(/e([+-])(\d)$/, 'e$10$2');
  return (neg ? '-' : '') + s;
}

class Formatter {
  // values: numbers (floating), bigints or numbers (integral), booleans (bool)
  constructor(values, floating) {
    this.floating = floating;
    this.intMode = true;
    this.sciMode = false;
    this.maxWidth = 1;
    if (!floating) {
      for (const v of values) this.maxWidth = Math.max(this.maxWidth, plain(v).length);
      return;
    }
    const nz = values.filter((v) => Number.isFinite(v) && v !== 0);
    if (nz.length === 0) return;
    let min = Infinity;
    let max = 0;
    for (const v of nz) {
      const a = Math.abs(v);
      if (a < min) min = a;
      if (a > max) max = a;
      if (v !== Math.ceil(v)) this.intMode = false;
    }
    const width = (f) => { for (const v of nz) this.maxWidth = Math.max(this.maxWidth, f(v)); };
    if (this.intMode) {
      if (max / min > 1000 || max > 1e8) {
        this.sciMode = true;
        width((v) => pyFormat(v, PRECISION, 'e').length);
      } else {
        width((v) => pyFormat(v, 0, 'f').length + 1);
      }
    } else if (max / min > 1000 || max > 1e8 || min < 1e-4) {
      this.sciMode = true;
      width((v) => pyFormat(v, PRECISION, 'e').length);
    } else {
      width((v) => pyFormat(v, PRECISION, 'f').length);
    }
  }

  format(v) {
    let s;
    if (!this.floating) s = plain(v);
    else if (this.sciMode) s = pyFormat(v, PRECISION, 'e');
    else if (this.intMode) s = pyFormat(v, 0, 'f') + (Number.isFinite(v) ? '.' : '');
    else s = pyFormat(v, PRECISION, 'f');
    return s.padStart(this.maxWidth);
  }
}

function plain(v) {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return String(v);
}

// A read-only view of the logical values: get(flatIndex).
function tensorStr(shape, get, floating, indent) {
  const numel = shape.reduce((a, b) => a * b, 1);
  const summarize = numel > THRESHOLD;
  const strides = [];
  for (let d = shape.length - 1, s = 1; d >= 0; d--) { strides[d] = s; s *= shape[d]; }
  // The indices printed along one dim.
  const edges = (n) => {
    if (summarize && n > 2 * EDGEITEMS) {
      const head = [...Array(EDGEITEMS).keys()];
      return { head, tail: head.map((i) => n - EDGEITEMS + i) };
    }
    return { head: [...Array(n).keys()], tail: null };
  };
  const printed = [];
  const collect = (dim, base) => {
    if (dim === shape.length) { printed.push(get(base)); return; }
    const { head, tail } = edges(shape[dim]);
    for (const i of [...head, ...(tail || [])]) collect(dim + 1, base + i * strides[dim]);
  };
  collect(0, 0);
  const fmt = new Formatter(printed, floating);
  if (shape.length === 0) return fmt.format(get(0));

  const vector = (base, ind) => {
    const n = shape[shape.length - 1];
    const st = strides[shape.length - 1];
    const perLine = Math.max(1, Math.floor((LINEWIDTH - ind) / (fmt.maxWidth + 2)));
    const { head, tail } = edges(n);
    const data = head.map((i) => fmt.format(get(base + i * st)));
    if (tail) data.push(' ...', ...tail.map((i) => fmt.format(get(base + i * st))));
    const lines = [];
    for (let i = 0; i < data.length; i += perLine) lines.push(data.slice(i, i + perLine).join(', '));
    return '[' + lines.join(',\n' + ' '.repeat(ind + 1)) + ']';
  };
  const rec = (dim, base, ind) => {
    if (dim === shape.length - 1) return vector(base, ind);
    const { head, tail } = edges(shape[dim]);
    const slices = head.map((i) => rec(dim + 1, base + i * strides[dim], ind + 1));
    if (tail) slices.push('...', ...tail.map((i) => rec(dim + 1, base + i * strides[dim], ind + 1)));
    const left = shape.length - dim;
    return '[' + slices.join(',' + '\n'.repeat(left - 1) + ' '.repeat(ind + 1)) + ']';
  };
  return rec(0, 0, indent);
}

function pyTuple(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

function addSuffixes(body, suffixes, indent) {
  const parts = [body];
  let lastLineLen = body.length - body.lastIndexOf('\n') + 1;
  for (const s of suffixes) {
    if (lastLineLen + s.length + 2 > LINEWIDTH) {
      parts.push(',\n' + ' '.repeat(indent) + s);
      lastLineLen = indent + s.length;
    } else {
      parts.push(', ' + s);
      lastLineLen += s.length + 2;
    }
  }
  parts.push(')');
  return parts.join('');
}

const DEFAULT_DTYPES = new Set(['float32', 'int64', 'bool']);

// info: { shape, dtype, device }; values(): the logical values, in order, as
// numbers (floating and small integral), bigints (int64) or 0/1 (bool).
export function formatTensor(info, values) {
  const prefix = 'tensor(';
  const indent = prefix.length;
  const { shape, dtype, device } = info;
  const numel = shape.reduce((a, b) => a * b, 1);
  const suffixes = [];
  if (device !== 'cpu') suffixes.push(`device='${device}'`);
  let body;
  // no values: meta has none, a webgpu tensor's are read asynchronously
  if (device === 'meta' || device === 'webgpu') {
    suffixes.push('size=' + pyTuple(shape));
    if (dtype !== 'float32') suffixes.push('dtype=torch.' + dtype);
    body = '...';
  } else if (numel === 0) {
    if (shape.length !== 1) suffixes.push('size=' + pyTuple(shape));
    if (dtype !== 'float32') suffixes.push('dtype=torch.' + dtype);
    body = '[]';
  } else {
    if (!DEFAULT_DTYPES.has(dtype)) suffixes.push('dtype=torch.' + dtype);
    const data = values();
    const floating = dtype.startsWith('float') || dtype === 'bfloat16';
    const get = dtype === 'bool' ? (i) => data[i] !== 0 : (i) => data[i];
    body = tensorStr(shape, get, floating, indent);
  }
  return addSuffixes(prefix + body, suffixes, indent);
}

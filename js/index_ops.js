// Indexing's JS calling forms over the op table's nonzero, select, slice,
// unsqueeze and index.Tensor / index_put_ (when the build has them), whose
// generated functions js/ops.js installed:
//   wt.nonzero(x, { asTuple: true })  one int64 1-D tensor per dim (views of nonzero's columns)
//   wt.where(cond)                    the same as nonzero(cond, { asTuple: true })
//   wt.where(cond, 1, 0)              two numbers: the default dtype (float32)
//   x.index(...items)                 PyTorch's x[items]
//   x.indexPut_(items, values, { accumulate })   PyTorch's x[items] = values (index_put_)
// Items are PyTorch's __getitem__ forms: an integer (select; negative counts
// from the end), a slice string ('1:3', '::2', ':', '-1:', '1:-1:2'), null
// (a new axis), '...', an integer tensor (int64 / uint8 as PyTorch's long /
// byte) or a bool tensor (a mask over as many dims as it has), or an array
// of integers (an int64 tensor). Integers, slices, null and '...' give views;
// tensors make one index.Tensor call over the view, which copies.
export function installIndexing(api, k) {
  const { Tensor, WeftError, isOptions } = k;
  // the generated entry points these forms call (index.Tensor and index_put_ by their boxed names)
  const gen = { nonzero: api.nonzero, where: api.where };
  const names = new Set(api.ops.list().map((o) => o.name));
  const has = (name) => names.has(name);
  if (has('aten::index.Tensor')) gen.indexTensor = (v, list) => api.ops.call('index.Tensor', v, list);
  if (has('aten::index_put_')) gen.indexPut_ = (v, list, val, acc) => api.ops.call('index_put_', v, list, val, acc);
  const fail = (code, msg) => { throw new WeftError(code, msg); };

  // nonzero's columns as 1-D views (PyTorch's as_tuple: nonzero().unbind(1))
  function columns(nz, ndim) {
    try {
      const cols = [];
      for (let d = 0; d < ndim; d++) cols.push(nz.select(1, d));
      return cols;
    } finally {
      nz.dispose();
    }
  }

  function nonzero(x, ...rest) {
    const last = rest[rest.length - 1];
    const kw = rest.length && isOptions(last) && !(last instanceof Tensor) ? last : null;
    const asTuple = kw ? (kw.asTuple ?? kw.as_tuple ?? false) : false;
    if (typeof asTuple !== 'boolean') fail('TypeError', `nonzero(): argument 'asTuple' must be bool, not ${typeof asTuple}`);
    if (!asTuple) {
      if (kw && ('asTuple' in kw || 'as_tuple' in kw)) {
        const { asTuple: _a, as_tuple: _b, ...other } = kw;
        return gen.nonzero(x, ...rest.slice(0, -1), other);
      }
      return gen.nonzero(x, ...rest);
    }
    if (kw && kw.out != null) fail('InvalidArgument', 'nonzero(): asTuple does not take an out tensor');
    if (!(x instanceof Tensor)) fail('TypeError', 'nonzero(): argument \'input\' must be a Tensor');
    // a 0-dim input counts as 1-D, as PyTorch's as_tuple does
    if (x.ndim === 0) {
      const v = x.unsqueeze(0);
      try { return columns(gen.nonzero(v), 1); } finally { v.dispose(); }
    }
    return columns(gen.nonzero(x), x.ndim);
  }

  function where(...args) {
    if (args.length === 1 && args[0] instanceof Tensor) return nonzero(args[0], { asTuple: true });
    // where(cond, 1, 0): two JS numbers and no tensor to take a dtype from make
    // the default dtype, as wt.tensor's numbers do (JS cannot tell 1.0 from 1,
    // so where.Scalar would make int64 and data() BigInts)
    if (typeof args[1] === 'number' && typeof args[2] === 'number') {
      const dtype = api.getDefaultDtype();
      const a = api.tensor(args[1], { dtype }), b = api.tensor(args[2], { dtype });
      try { return gen.where(args[0], a, b, ...args.slice(3)); } finally { a.dispose(); b.dispose(); }
    }
    return gen.where(...args);
  }

  // ---- x.index(...items) / x.indexPut_(items, values) ----

  const quote = (item) => (typeof item === 'string' ? `'${item}'` : String(item));
  const shapeStr = (s) => `[${s.join(', ')}]`;
  const SLICE = /^\s*(-?\d+)?\s*:\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?$/;

  // 'a:b:c' -> [start | null, end | null, step]
  function parseSlice(op, item) {
    const m = SLICE.exec(item);
    if (!m) {
      fail('InvalidArgument', `${op}(): could not read the index item '${item}' (expected an integer, a slice such as ` +
        '\'1:3\' or \'::2\', \'...\', null, or a tensor)');
    }
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (step === 0) fail('InvalidArgument', `${op}(): slice step cannot be zero (in '${item}')`);
    if (step < 0) fail('InvalidArgument', `${op}(): step must be greater than zero (in '${item}')`);
    return [m[1] === undefined ? null : Number(m[1]), m[2] === undefined ? null : Number(m[2]), step];
  }

  const isMask = (t) => t.dtype === 'bool' || t.dtype === 'uint8';

  // The dims an item consumes of the indexed tensor.
  function consumes(op, item) {
    if (item === null || item === '...') return 0;
    if (typeof item === 'number' || typeof item === 'string') return 1;
    if (item instanceof Tensor) {
      if (isMask(item)) return item.ndim;
      if (item.dtype !== 'int64') {
        fail('IndexError', 'tensors used as indices must be long, byte or bool tensors' +
          (/float/.test(item.dtype) && k.floatIndexFix ? k.floatIndexFix(item.dtype) : ''));
      }
      return 1;
    }
    return fail('TypeError', `${op}(): only integers, slices (strings such as '1:3'), '...', null and int64 or bool ` +
      `tensors are valid indices (got ${quote(item)}: ${Array.isArray(item) ? 'an array' : typeof item})`);
  }

  // items -> { view, adv, made }: view is x's view after the integers,
  // slices, nulls and '...'; adv[d] the index tensor of view's dim d (or
  // undefined); made the tensors to dispose (every intermediate but view).
  function parse(op, x, rawItems) {
    const made = [];
    let v = x;
    try {
      return parseInto(op, x, rawItems, made, (next) => {
        if (v !== x) made.push(v);
        v = next;
      }, () => v);
    } catch (e) {
      if (v !== x) v.dispose();
      for (const t of made) t.dispose();
      throw e;
    }
  }

  function parseInto(op, x, rawItems, made, step, current) {
    const items = rawItems.map((it) => (Array.isArray(it) ? (made.push(api.tensor(it, { dtype: 'int64' })), made[made.length - 1]) : it));
    if (items.filter((it) => it === '...').length > 1) fail('IndexError', `${op}(): an index can only have a single ellipsis ('...')`);
    const used = items.reduce((n, it) => n + consumes(op, it), 0);
    if (used > x.ndim) fail('IndexError', `too many indices for tensor of dimension ${x.ndim}`);
    const adv = [];
    let dim = 0;
    for (const it of items) {
      if (typeof it === 'number') {
        if (!Number.isInteger(it)) fail('IndexError', `${op}(): index ${it} is not an integer`);
        const size = current().shape[dim];
        if (it < -size || it >= size) fail('IndexError', `index ${it} is out of bounds for dimension ${dim} with size ${size}`);
        step(current().select(dim, it));
      } else if (it === '...') {
        dim += x.ndim - used;
      } else if (typeof it === 'string') {
        const [a, b, c] = parseSlice(op, it);
        step(current().slice(dim, a, b, c));
        dim++;
      } else if (it === null) {
        step(current().unsqueeze(dim));
        dim++;
      } else if (!isMask(it)) {
        adv[dim++] = it;
      } else if (it.ndim === 0) { // a 0-dim mask: a new axis of size 1 indexed by [0] or by nothing
        step(current().unsqueeze(dim));
        const any = it.item();
        const t = any ? api.zeros([1], { dtype: 'int64' }) : api.empty([0], { dtype: 'int64' });
        made.push(t);
        adv[dim++] = t;
      } else {
        const shape = current().shape;
        it.shape.forEach((n, j) => {
          if (n !== shape[dim + j]) {
            fail('IndexError', `The shape of the mask ${shapeStr(it.shape)} at index ${j} does not match the shape of ` +
              `the indexed tensor ${shapeStr(shape)} at index ${dim + j}`);
          }
        });
        const nz = it.nonzero();
        made.push(nz);
        for (let j = 0; j < it.ndim; j++) {
          const col = nz.select(1, j);
          made.push(col);
          adv[dim++] = col;
        }
      }
    }
    return { view: current(), adv, made };
  }

  const advancedList = (adv) => Array.from({ length: adv.length }, (_, d) => adv[d] ?? null);

  function index(x, ...items) {
    if (!(x instanceof Tensor)) fail('TypeError', 'index(): self must be a Tensor');
    const p = parse('index', x, items);
    let keep = false;
    try {
      if (p.adv.length === 0) {
        keep = true;
        return p.view === x ? x.view(x.shape) : p.view;
      }
      if (!gen.indexTensor) fail('NotImplemented', 'index(): tensor indices need the index.Tensor operator');
      return gen.indexTensor(p.view, advancedList(p.adv));
    } finally {
      if (!keep && p.view !== x) p.view.dispose();
      for (const t of p.made) t.dispose();
    }
  }

  function indexPut_(x, items, values, options) {
    if (!(x instanceof Tensor)) fail('TypeError', 'indexPut_(): self must be a Tensor');
    const list = Array.isArray(items) ? items : [items];
    const accumulate = options?.accumulate ?? false;
    if (typeof accumulate !== 'boolean') fail('TypeError', `indexPut_(): argument 'accumulate' must be bool, not ${typeof accumulate}`);
    const p = parse('indexPut_', x, list);
    if (p.view !== x) p.made.push(p.view);
    let val = null;
    try {
      if (p.adv.length === 0) {
        if (accumulate) p.view.add_(values);
        else if (values instanceof Tensor) p.view.copy_(values);
        else p.view.fill_(values);
        return x;
      }
      if (!gen.indexPut_) fail('NotImplemented', 'indexPut_(): tensor indices need the index_put_ operator');
      val = values instanceof Tensor ? values : api.tensor(values, { dtype: x.dtype });
      gen.indexPut_(p.view, advancedList(p.adv), val, accumulate);
      return x;
    } finally {
      if (val && val !== values) val.dispose();
      for (const t of p.made) t.dispose();
    }
  }

  api.nonzero = nonzero;
  api.where = where;
  const methods = { nonzero, index, indexPut_ };
  for (const [name, fn] of Object.entries(methods)) {
    Object.defineProperty(Tensor.prototype, name, {
      value: function indexingMethod(...args) { return fn(this, ...args); }, writable: true, configurable: true,
    });
  }
}

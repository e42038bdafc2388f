// The layer check (scripts/check_layers.mjs, also run by scripts/test.sh):
// the tree passes, and the checker does catch an upward include or call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkIncludes, checkSymbols, objectSymbols } from '../../scripts/check_layers.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the tree: every include and call points down', () => {
  const out = execFileSync(process.execPath, ['scripts/check_layers.mjs', 'build/native'], { cwd: root, encoding: 'utf8' });
  assert.match(out, /layers' symbols: every arrow points down/);
});

test('an upward include is caught, a downward one is not', () => {
  const bad = checkIncludes('core', '#include "core/internal.h"\n#include "ops/ops.h"\n#include "weft/view.h"\n');
  assert.deepEqual(bad.map((v) => [v.line, v.text]), [[2, 'ops/ops.h'], [3, 'weft/view.h']]);
  assert.deepEqual(checkIncludes('ops', '#include "iter/iter_internal.h"\n#include "weft/iter.h"\n'), []);
  assert.equal(checkIncludes('iter', '#include "dispatch/opgen.h"\n').length, 1); // siblings do not see each other
  assert.equal(checkIncludes('kernels', '#include "base/error.h"\n').length, 1); // kernels see no error module
  assert.deepEqual(checkIncludes('kernels', '#include "vec_sse2.h"\n#include "base/tls.h"\n'), []);
});

test('an upward call is caught in the real object files', () => {
  const syms = objectSymbols(`${root}/build/native`);
  assert.ok(syms && syms.core && syms.ops, 'build/native has per-layer object libraries');
  assert.deepEqual(checkSymbols(syms), []);
  syms.core.undefined.add('weft_empty'); // core calling a factory op
  syms.iter.undefined.add('weft_op_find'); // the iterator calling the dispatcher
  syms.kernels.undefined.add('weft_parallel_for'); // a kernel threading itself
  syms['ops/cpu'].undefined.add('weft_explain_boxed'); // a driver calling back into ops
  const found = checkSymbols(syms).map((v) => `${v.layer}->${v.definedIn}:${v.symbol}`).sort();
  assert.deepEqual(found, ['core->ops:weft_empty', 'iter->dispatch:weft_op_find', 'kernels->parallel:weft_parallel_for',
    'ops/cpu->ops:weft_explain_boxed']);
});

test('ops/cpu/ drivers are a tier below the operators', () => {
  const syms = objectSymbols(`${root}/build/native`);
  // the drivers' objects are their own layer, not ops'
  assert.ok(syms['ops/cpu'].defined.size > 0 && ![...syms['ops/cpu'].defined].some((s) => syms.ops.defined.has(s)));
  assert.equal(checkIncludes('ops/cpu', '#include "ops/ops.h"\n').length, 1); // a driver sees no operator
  assert.equal(checkIncludes('ops/cpu', '#include "weft/view.h"\n').length, 1);
  assert.deepEqual(checkIncludes('ops/cpu', '#include "ops/cpu/gemm.h"\n#include "iter/iter_internal.h"\n'), []);
  assert.deepEqual(checkIncludes('ops', '#include "ops/cpu/gemm.h"\n'), []); // operators call drivers
});

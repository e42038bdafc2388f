// The files made from the op tables are committed (so C builds need no node and
// readers see them): they must be what the generators make of the tables now.
//   src/ops/gen_elementwise.mjs  src/ops/elementwise_table.h -> elementwise.def,
//                                elementwise_kernels.inc, include/weft/elementwise.h
//   scripts/gen_types.mjs        src/ops/ops.def (+ elementwise.def) -> js/optable.d.ts
// npm run build regenerates them; a clean checkout must not need it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { emit, generate, ROOT, TABLE } from '../../src/ops/gen_elementwise.mjs';
import { generate as generateTypes } from '../../scripts/gen_types.mjs';

const generated = () => {
  const c = generate();
  return new Map([...c, ...generateTypes(c)]);
};
const INPUTS = [TABLE, 'src/ops/gen_elementwise.mjs', 'scripts/gen_types.mjs', 'src/ops/ops.def', 'js/ops.js'];

test('the generated files are what the op tables make', () => {
  const stale = emit(generated(), { check: true });
  assert.deepEqual(stale, [], 'npm run build (or node src/ops/gen_elementwise.mjs && node scripts/gen_types.mjs) remakes them');
});

test('committed together with the tables they are made from', (t) => {
  const status = (paths) => execFileSync('git', ['status', '--porcelain', '--', ...paths], { cwd: ROOT, encoding: 'utf8' });
  let inputs;
  try {
    inputs = status(INPUTS);
  } catch {
    t.skip('not a git checkout');
    return;
  }
  if (inputs) {
    t.skip('the tables or generators have uncommitted changes');
    return;
  }
  // npm run build regenerated these if the committed ones were stale
  assert.equal(status([...generated().keys()]), '', 'commit the regenerated files');
});

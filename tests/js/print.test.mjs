// Printing replays PyTorch 1.13's str(t) (tests/fixtures/print/print.json,
// made by tests/fixtures/print/gen_print.py), plus util.inspect and String().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { init, VARIANTS } from './helpers.mjs';

const cases = JSON.parse(readFileSync(new URL('../fixtures/print/print.json', import.meta.url), 'utf8'));
const dec = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === '-0' ? -0 : v);

function build(wt, c) {
  const n = c.shape.reduce((a, b) => a * b, 1);
  const values = c.arange
    ? Array.from({ length: n }, (_, i) => (i * c.arange[0]) / c.arange[1])
    : c.values.map(dec);
  return wt.tidy(() => {
    if (c.shape.length === 0) return wt.tensor(values[0], { dtype: c.dtype });
    return wt.tensor(values, { dtype: c.dtype }).view(c.shape);
  });
}

for (const variant of VARIANTS) {
  test(`${variant}: str(t) matches PyTorch for ${cases.length} tensors`, async () => {
    const wt = await init({ variant });
    const bad = [];
    for (const c of cases) {
      const t = build(wt, c);
      const got = t.toString();
      if (got !== c.str) bad.push(`${c.name}:\n  torch: ${JSON.stringify(c.str)}\n  weft:  ${JSON.stringify(got)}`);
      assert.equal(String(t), got);
      assert.equal(`${t}`, got);
      assert.equal(inspect(t), got);
      assert.ok(inspect({ t }).includes(got.split('\n')[0]));
      t.dispose();
    }
    assert.deepEqual(bad, []);
  });
}

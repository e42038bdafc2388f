// torch.promote_types over the 10 dtypes (tests/fixtures/promote.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../js/index.js';
import { loadFixture } from './fixtures-lib.mjs';

const fx = loadFixture('promote.json');

test('promote_types table', async (t) => {
  const wt = await init();
  if (typeof wt.promoteTypes !== 'function') {
    t.skip('wt.promoteTypes is not in the JS API');
    return;
  }
  const bad = [];
  fx.dtypes.forEach((a, i) => fx.dtypes.forEach((b, j) => {
    const got = wt.promoteTypes(a, b);
    if (got !== fx.table[i][j]) bad.push(`promoteTypes(${a}, ${b}) = ${got}, want ${fx.table[i][j]}`);
  }));
  assert.deepEqual(bad, []);
});

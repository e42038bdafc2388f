// JS without traps (js/traps.js): index arrays, for..of, to(dtype, { memoryFormat }); checked by tsc --noEmit.
import { init } from 'weft';
import type { IndexArray, Tensor } from 'weft';

async function traps() {
  const wt = await init();
  const x: Tensor = wt.rand([3, 4]);
  const rows: IndexArray = [0, 2];
  const a: Tensor = x.indexSelect(0, rows);
  const b: Tensor = wt.gather(x, 1, [[0], [1], [3]]);
  const c: Tensor = x.scatter(1, [[0n], [1n], [3n]], 7);
  const d: Tensor = wt.take(x, new Int32Array([0, 11]));
  const e: Tensor<'float32'> = x.to('float32', { memoryFormat: 'channels_last' });
  const sums: number[] = [];
  for (const row of x) sums.push(row.sum().item() as number);
  return [a, b, c, d, e, sums] as const;
}

void traps;

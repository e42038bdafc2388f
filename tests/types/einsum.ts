// Issue 25's einsum declarations (js/einsum.d.ts), checked by tsc --noEmit.
import { init } from 'weft';
import type { EinsumOptions, Tensor } from 'weft';

async function einsum() {
  const wt = await init();
  const a = wt.randn([2, 3]);
  const b = wt.randn([3, 4]);
  const opts: EinsumOptions = { path: [0, 1] };
  const c: Tensor = wt.einsum('ij,jk->ik', a, b);
  const d: Tensor = wt.einsum('ij,jk->ik', [a, b]);
  const e: Tensor = wt.einsum('ij,jk->ik', [a, b], opts);
  const f: Tensor = wt.einsum('ij,jk,kl->il', a, b, wt.ones([4, 2]), { path: [1, 2, 0, 1] });
  const g: Tensor = wt.einsum('ii', wt.eye(3));
  console.log(c, d, e, f, g);
  // @ts-expect-error the equation is a string
  wt.einsum(1, a);
}
void einsum;

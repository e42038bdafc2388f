// Issue 25's wt.linalg (js/linalg.d.ts and the generated LinalgFunctions), checked by tsc --noEmit.
import { init } from 'weft';
import type { EighOptions, MatrixNormOptions, Tensor, VectorNormOptions } from 'weft';

async function linalg() {
  const wt = await init();
  const a: Tensor = wt.randn([2, 3, 3], { dtype: 'float64' });
  const x: Tensor = wt.linalg.solve(a, wt.randn([3, 2], { dtype: 'float64' }), { left: true });
  const inv: Tensor = wt.linalg.inv(a);
  const det: Tensor = wt.linalg.det(a);
  const { sign, logabsdet } = wt.linalg.slogdet(a);
  const l: Tensor = wt.linalg.cholesky(a.matmul(a.transpose(-2, -1)), { upper: false });
  const vo: VectorNormOptions = { ord: Infinity, dim: [-1], keepdim: true, dtype: 'float64' };
  const mo: MatrixNormOptions = { ord: 'fro', dim: [-2, -1], keepdim: false };
  const n1: Tensor = wt.linalg.vectorNorm(a, vo);
  const n2: Tensor = wt.linalg.vectorNorm(a, 1, [0, 1]);
  const n3: Tensor = wt.linalg.matrixNorm(a, mo);
  const n4: Tensor = wt.linalg.matrixNorm(a, -1);
  const eo: EighOptions = { UPLO: 'U' };
  const { eigenvalues, eigenvectors } = wt.linalg.eigh(a, eo);
  const [lam, vec] = wt.linalg.eigh(a, 'L');
  const ev: Tensor = wt.linalg.eigvalsh(a, { UPLO: 'l' });
  console.log(x, inv, det, sign, logabsdet, l, n1, n2, n3, n4, eigenvalues, eigenvectors, lam, vec, ev);
  // @ts-expect-error UPLO is 'L' or 'U'
  wt.linalg.eigh(a, { UPLO: 'X' });
  // @ts-expect-error upper is a boolean
  wt.linalg.cholesky(a, { upper: 1 });
}
void linalg;

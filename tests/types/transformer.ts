// Issue 24's declarations (js/transformer.d.ts, nn.Embedding / nn.RMSNorm in js/nn.d.ts), checked by tsc --noEmit.
import { init } from 'weft';
import type { EmbeddingOptions, Tensor } from 'weft';

async function transformer() {
  const wt = await init();
  const ids: Tensor = wt.tensor([1n, 2n]);
  const weight = wt.randn([5, 3]);
  const opts: EmbeddingOptions = { paddingIdx: 0, maxNorm: 1, normType: 2, scaleGradByFreq: true, sparse: false };
  const a: Tensor = wt.embedding(ids, weight, opts);
  const b: Tensor = wt.rmsNorm(a, [3], null, { eps: null });
  const c: Tensor = wt.rmsNorm(a, 3, wt.ones([3]));
  const d: Tensor = wt.indexCopy(weight, 0, ids, wt.zeros([2, 3]));
  const e: Tensor = weight.indexCopy_(0, ids, wt.zeros([2, 3]));
  const tok = new wt.nn.Embedding(10, 4, { paddingIdx: 0, _weight: null });
  const frozen = wt.nn.Embedding.fromPretrained(weight, { freeze: true });
  const norm = new wt.nn.RMSNorm(4, { eps: 1e-6, elementwiseAffine: true });
  const n: number = (tok.paddingIdx ?? 0) + frozen.numEmbeddings + frozen.embeddingDim;
  tok.resetParameters();
  norm.resetParameters();
  console.log(a, b, c, d, e, n, tok.forward(ids), norm.forward(tok.weight), norm.weight);
  // @ts-expect-error paddingIdx is a number
  wt.embedding(ids, weight, { paddingIdx: '0' });
}
void transformer;

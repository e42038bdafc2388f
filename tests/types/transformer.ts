// wt.nn's attention and transformer declarations (js/transformer.d.ts), checked by tsc --noEmit.
import { init } from 'weft';
import type { Tensor, MultiheadAttention, AttentionCallOptions, TransformerEncoder } from 'weft';

async function transformer() {
  const wt = await init();
  const mha: MultiheadAttention = new wt.nn.MultiheadAttention(8, 2, { batchFirst: true, kdim: 4, vdim: 4, addBiasKv: true });
  const x = wt.randn(2, 3, 8);
  const kv = wt.randn(2, 5, 4);
  const opts: AttentionCallOptions = { keyPaddingMask: wt.zeros([2, 5], { dtype: 'bool' }), needWeights: true, averageAttnWeights: false };
  const [out, weights]: [Tensor, Tensor | null] = mha(x, kv, kv, opts);
  const dims: number[] = [mha.embedDim, mha.numHeads, mha.headDim, mha.kdim, mha.vdim];
  const ws = [mha.inProjWeight, mha.inProjBias, mha.qProjWeight, mha.kProjWeight, mha.vProjWeight, mha.biasK, mha.biasV];
  console.log(out, weights, dims, ws, mha.outProj.weight, mha.batchFirst, mha.dropout, mha.addZeroAttn);
  const layer = new wt.nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, activation: 'gelu', normFirst: true, batchFirst: true });
  const enc: TransformerEncoder = new wt.nn.TransformerEncoder(layer, 2, { norm: new wt.nn.LayerNorm(8) });
  const mask = wt.nn.Transformer.generateSquareSubsequentMask(3);
  const memory: Tensor = enc(x, { mask, srcKeyPaddingMask: null, isCausal: true });
  console.log(enc.layers.length, enc.numLayers, enc.norm, layer.selfAttn.numHeads, layer.linear1, layer.linear2, layer.norm1, layer.norm2,
    layer.normFirst, layer.forward(x, { srcMask: mask }));
  const dec = new wt.nn.TransformerDecoderLayer(8, 2, { activation: (t: Tensor) => wt.relu(t), layerNormEps: 1e-6 });
  const stack = new wt.nn.TransformerDecoder(dec, 2);
  const y: Tensor = stack(x, memory, { tgtMask: mask, memoryKeyPaddingMask: null, tgtIsCausal: true, memoryIsCausal: false });
  console.log(y, stack.layers, stack.numLayers, stack.norm, dec.selfAttn, dec.multiheadAttn, dec.norm3, dec.linear1, dec.linear2,
    dec.norm1, dec.norm2, dec.normFirst, dec.forward(x, memory, { memoryMask: null, tgtKeyPaddingMask: null }));
  const t = new wt.nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16 });
  const z: Tensor = t.forward(x, x, { tgtMask: mask, srcIsCausal: false });
  console.log(z, t.encoder, t.decoder, t.dModel, t.nhead, new wt.nn.NonDynamicallyQuantizableLinear(2, 2));
  const [o2] = wt.nn.functional.multiHeadAttentionForward(x, x, x, 8, 2, null, null, null, null, false, 0, mha.outProj.weight, null,
    { useSeparateProjWeight: true, qProjWeight: null, kProjWeight: null, vProjWeight: null, staticK: null, staticV: null, training: false });
  console.log(o2);
}
transformer();

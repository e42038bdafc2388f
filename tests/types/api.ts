// The rest of the hand-written API and what the types infer: dtypes from names, options and data,
// item() and toArray() per dtype, the PyTorch shortcuts, safetensors. Compiled by tsc --strict
// (tests/js/types.test.mjs, which also checks this tour uses every hand-written declaration); never
// run. Equal<A, B> fails to compile unless the inferred type is exactly the one written.
import { init, initWorker } from 'weft';
import type {
  DType, DTypeName, DTypeOf, Item, Nested, SafetensorsInfo, SafetensorsMetadata, Tensor, TensorMap, WorkerTensor,
} from 'weft';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function expectType<T extends true>(): void {}

async function tour(): Promise<void> {
  const wt = await init();

  // ---- dtype names: a union of literals, aliases resolved ----
  const names: DTypeName[] = ['float32', 'half', 'torch.int64', 'torch.long', 'bfloat16'];
  // @ts-expect-error: a misspelled dtype
  const typo: DTypeName = 'flaot32';
  // @ts-expect-error: not a dtype of weft
  wt.zeros(2, { dtype: 'complex64' });
  expectType<Equal<DTypeOf<'torch.half'>, 'float16'>>();
  expectType<Equal<DTypeOf<'long'>, 'int64'>>();
  expectType<Equal<DTypeOf<DTypeName>, DType>>();
  console.log(names, typo);

  // ---- dtypes the factories give ----
  const b = wt.tensor([true, false]);
  expectType<Equal<typeof b, Tensor<'bool'>>>();
  const f = wt.tensor([[1, 2], [3, 4]]);
  expectType<Equal<typeof f, Tensor<'float32' | 'float64'>>>();
  const i64 = wt.tensor([1n, 2n]);
  expectType<Equal<typeof i64, Tensor<'int64'>>>();
  const u8 = wt.tensor(new Uint8Array(4));
  expectType<Equal<typeof u8, Tensor<'uint8'>>>();
  const h = wt.tensor(new Uint16Array([0x3c00]), { dtype: 'torch.half', bits: true });
  expectType<Equal<typeof h, Tensor<'float16'>>>();
  const i32 = wt.zeros(2, 3, { dtype: 'int' });
  expectType<Equal<typeof i32, Tensor<'int32'>>>();
  const z = wt.zeros([2, 3]);
  expectType<Equal<typeof z, Tensor<'float32' | 'float64'>>>();
  const e = wt.empty([2, 3, 4, 5], { dtype: 'float64', memoryFormat: 'channels_last' });
  expectType<Equal<typeof e, Tensor<'float64'>>>();
  const es = wt.emptyStrided([2, 2], [1, 2], { dtype: 'int16' });
  expectType<Equal<typeof es, Tensor<'int16'>>>();
  const el = wt.emptyLike(es, { memoryFormat: 'preserve_format' });
  expectType<Equal<typeof el, Tensor<'int16'>>>();
  const elf = wt.emptyLike(es, { dtype: 'bfloat16' });
  expectType<Equal<typeof elf, Tensor<'bfloat16'>>>();
  const fb = wt.full([2], true);
  expectType<Equal<typeof fb, Tensor<'bool'>>>();
  const fi = wt.full(3, 7, { dtype: 'uint8' });
  expectType<Equal<typeof fi, Tensor<'uint8'>>>();
  const r = wt.randn(4, 4, { dtype: 'float64' });
  expectType<Equal<typeof r, Tensor<'float64'>>>();
  const ar = wt.arange(0, 10, 2, { dtype: 'int8' });
  expectType<Equal<typeof ar, Tensor<'int8'>>>();
  const dyn: DTypeName = names[0] ?? 'bool';
  const anyDtype = wt.ones(2, { dtype: dyn });
  expectType<Equal<typeof anyDtype, Tensor<DType>>>();
  wt.setDefaultDtype('float64');
  const dd: 'float32' | 'float64' = wt.getDefaultDtype();
  // @ts-expect-error: the default dtype is floating
  wt.setDefaultDtype('int64');
  wt.manualSeed(7);
  console.log(dd, el, elf, e, r, ar);

  // ---- item() and toArray() per dtype ----
  const flag: boolean = b.item();
  const n: number = f.item();
  const any: number | boolean = anyDtype.item();
  expectType<Equal<Item<'bool' | 'int32'>, boolean | number>>();
  // @ts-expect-error: a bool tensor's item() is a boolean
  const notNumber: number = b.item();
  const m = f.toArray<number[][]>();
  const row: number[] = m[0];
  const nested: Nested<boolean> = b.toArray();
  const listed: Nested<number> = i32.tolist();
  // @ts-expect-error: a float tensor's values are numbers
  f.toArray<boolean[]>();
  console.log(flag, n, any, notNumber, row, nested, listed);

  // ---- PyTorch's shortcuts ----
  const x = wt.rand([2, 3, 4]);
  const xt: Tensor<'float32' | 'float64'> = x.T;
  const xmt = x.mT.contiguous();
  const nd: number = x.ndim;
  expectType<Equal<ReturnType<typeof x.float>, Tensor<'float32'>>>();
  expectType<Equal<ReturnType<typeof x.bool>, Tensor<'bool'>>>();
  const casts = [x.double(), x.half(), x.bfloat16(), x.int(), x.long(), x.byte(), x.short(), x.char(), x.float(), x.bool()];
  const toLong = x.to('torch.long', { copy: true });
  expectType<Equal<typeof toLong, Tensor<'int64'>>>();
  // to.device and to.other
  const onCpu = x.to('cpu');
  const cpuF64 = x.to('cpu', 'float64', { copy: true });
  expectType<Equal<typeof cpuF64, Tensor<'float64'>>>();
  const likeLong = x.to(toLong);
  expectType<Equal<typeof likeLong, Tensor<'int64'>>>();
  console.log(onCpu, cpuF64, likeLong);
  // div's roundingMode
  const q = wt.div(x, 2, { roundingMode: 'trunc' });
  const q2 = x.div(q, { roundingMode: 'floor', out: q });
  x.div_(2, { roundingMode: null });
  // @ts-expect-error: PyTorch's spelling of the option
  x.div(2, { rounding_mode: 'floor' });
  // @ts-expect-error: not a rounding mode
  wt.div(x, 2, { roundingMode: 'round' });
  console.log(q2);
  // @ts-expect-error: t.Tt is no property of a tensor
  x.Tt;
  console.log(xt, xmt, nd, casts);

  // ---- the rest of a tensor's hand-written members ----
  const dims: number[] = x.size();
  const d0: number = x.size(0);
  console.log(dims, d0, x.device, x.isDisposed, x.storageOffset(), x.ndimension(), x.numel(), x.elementSize(),
    x.dataPtr(), x.isContiguous('channels_last'), x.isNonOverlappingAndDense(), x.suggestMemoryFormat(),
    x.movedim(0, -1).shape, x.movedim([0, 1], [1, 0]).shape, x.handle());
  const calls = wt.trace(() => wt.add(x, 1));
  console.log(calls[0]?.op);

  // ---- safetensors ----
  const bytes: Uint8Array = wt.saveSafetensors({ weight: x, bias: wt.zeros(3) }, { metadata: { format: 'pt' } });
  const tensors: TensorMap = wt.loadSafetensors(bytes);
  const w: Tensor | undefined = tensors['weight'];
  const withMeta = wt.loadSafetensors(bytes.buffer, { metadata: true });
  const meta: SafetensorsMetadata | null = withMeta.metadata;
  const header = wt.readSafetensorsHeader(bytes);
  const info: SafetensorsInfo | undefined = header.tensors['bias'];
  const end: number | undefined = info?.dataOffsets[1];
  // @ts-expect-error: metadata values are strings
  wt.saveSafetensors({ weight: x }, { metadata: { epoch: 3 } });
  // @ts-expect-error: tensors by name, not a tensor
  wt.saveSafetensors(x);
  console.log(w, meta, withMeta.tensors, end, header.metadata);

  // ---- worker mode ----
  const ww = await initWorker();
  const wx: WorkerTensor = ww.rand([2, 3]);
  const wT: WorkerTensor = wx.T;
  const wnd: number = await wx.ndim;
  const saved: Uint8Array = await ww.saveSafetensors({ a: wx, b: wT });
  const loaded: { [name: string]: WorkerTensor } = await ww.loadSafetensors(saved, { transfer: true });
  const { tensors: wts, metadata } = await ww.loadSafetensors(saved, { metadata: true });
  const wh = await ww.readSafetensorsHeader(saved);
  console.log(wnd, loaded, wts, metadata, wh.tensors);
  await ww.terminate();
}

tour();

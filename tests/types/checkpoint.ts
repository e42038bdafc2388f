// The checkpoint declarations (js/checkpoint.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { BytesSource, CheckpointValue, Tensor, TensorMap } from 'weft';

async function checkpoints(bytes: Uint8Array, source: BytesSource) {
  const wt = await init();
  const any: CheckpointValue = wt.load(bytes);
  const sd = wt.load<TensorMap>(bytes.buffer);
  const later: TensorMap = await wt.load<TensorMap>(source);
  const w: Tensor | undefined = sd['fc.weight'];
  const saved: Uint8Array = wt.save({ model: sd, epoch: 3, lr: 1e-3, name: 'run', steps: [1, 2n], note: null,
    raw: new Uint8Array(2), byId: new Map([[0, wt.zeros([2])]]) });
  const st: TensorMap = await wt.loadSafetensors(source);
  const header = await wt.readSafetensorsHeader(source);
  console.log(any, later, w, saved, st, header.metadata);
  // @ts-expect-error a function is no checkpoint value
  wt.save({ f: () => 1 });
  // @ts-expect-error a string is no bytes
  wt.load('model.pt');
}
void checkpoints;

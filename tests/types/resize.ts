// Padding and resizing's declarations (js/resize.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { InterpolateOptions, PadMode, PadOptions, Tensor } from 'weft';

async function resizing() {
  const wt = await init();
  const x: Tensor = wt.rand([1, 3, 8, 8]);
  const mode: PadMode = 'reflect';
  const po: PadOptions = { mode, value: null };
  const a: Tensor = wt.pad(x, [1, 1, 2, 0], po);
  const b: Tensor = x.pad([-1, -1], 'constant', 2);
  const io: InterpolateOptions = { size: [224, 224], mode: 'bilinear', alignCorners: false };
  const c: Tensor = wt.interpolate(x, io);
  const d: Tensor = x.interpolate({ scaleFactor: 1.5, mode: 'bicubic', recomputeScaleFactor: true });
  const e: Tensor = wt.interpolate(x, null, 2, 'nearest-exact');
  console.log(a, b, c, d, e);
  // @ts-expect-error not a padding mode
  wt.pad(x, [1, 1], { mode: 'wrap' });
  // @ts-expect-error sizes are numbers
  x.interpolate({ size: '224' });
}
void resizing;

// The seed example: an NCHW tensor copied to channels_last (NHWC in memory).
// node demo/node/channels_last.mjs   (after npm run build)
import { init } from 'weft';

const wt = await init();
const x = wt.rand([1, 64, 5, 4]);
const y = x.contiguous({ memoryFormat: 'channels_last' });
const list = (a) => `[${a.join(', ')}]`;
console.log(list(y.shape));
console.log(list(y.stride()));
console.log(y.isContiguous());
console.log(y.isContiguous('channels_last'));
x.dispose();
y.dispose();

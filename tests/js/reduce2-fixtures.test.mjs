// Every case of tests/fixtures/reduce2.json (PyTorch 1.13: max.dim, min.dim,
// var_mean, std_mean, cumsum, cumprod and their out= / in-place forms; made by
// tests/fixtures/gen_reduce2_fixtures.py, replayed natively by
// tests/c/test_reduce2.c) through the JS API on each wasm variant, via ops.call
// and the generated API (reduce-replay.mjs): two-result ops return by return
// ({ max, maxValues } / { out0, out1 } for their out= forms), in-place ones as
// methods (x.cumsum_(dim)).
import { replayFixture } from './reduce-replay.mjs';

replayFixture('reduce2.json');

// Every case of tests/fixtures/reduce.json (PyTorch 1.13, made by
// tests/fixtures/gen_reduce_fixtures.py; the native replay is tests/c/test_reduce.c)
// replayed through the JS API on each wasm variant, via ops.call and the
// generated API (how and what is checked: reduce-replay.mjs).
import { replayFixture } from './reduce-replay.mjs';

replayFixture('reduce.json');

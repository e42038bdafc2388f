// Random view chains recorded from PyTorch 1.13 (tests/fixtures/chains.json):
// shape, stride, storage offset, contiguity flags, values and errors after
// every step, and no leaked tensors/storages once everything is disposed.
import { test } from 'node:test';
import { init } from '../../js/index.js';
import { registerChains } from './fixtures-lib.mjs';

const wt = init();
registerChains(test, wt, 'chains.json');

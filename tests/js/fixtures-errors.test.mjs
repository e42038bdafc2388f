// Error cases: weft must throw WeftError whose message contains PyTorch's
// (tests/fixtures/errors.json, field `match`).
import { test } from 'node:test';
import { init } from '../../js/index.js';
import { registerChains } from './fixtures-lib.mjs';

const wt = init();
registerChains(test, wt, 'errors.json');

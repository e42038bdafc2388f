// empty / empty_like / contiguous / clone under every memory format, on
// inputs covering PyTorch's size-0/size-1 ambiguities (tests/fixtures/memformat.json).
import { test } from 'node:test';
import { init } from '../../js/index.js';
import { registerChains } from './fixtures-lib.mjs';

const wt = init();
registerChains(test, wt, 'memformat.json');

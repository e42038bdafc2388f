// wt.nn: the module system (js/nn/module.js), containers, layers, init,
// functional, and the training-step memory rule (js/nn/memory.js).
import { makeArgParser, makeChecks } from './args.js';
import { makeModule } from './module.js';
import { makeInit } from './init.js';
import { makeLayers } from './layers.js';
import { makeNorm } from './norm.js';
import { makeEmbeddingLayers } from './embedding.js';
import { makeActivations } from './activation.js';
import { makeContainers } from './containers.js';
import { makeFunctional } from './functional.js';
import { makeTransformer } from './transformer.js';
import { makeDistanceLayers } from '../distance.js';
import { installStepRule } from './memory.js';

export function installNn(api, k) {
  const parse = makeArgParser(k);
  const checks = makeChecks(k);
  const { Module, Parameter, STATE } = makeModule(api, k);
  const init = makeInit(api, { ...k, parse });
  // a layer's parameter: filled with `fill`, or uninitialized (its reset fills it)
  function param(shape, { device, dtype }, fill = null) {
    const opts = { ...(device ? { device } : {}), ...(dtype ? { dtype } : {}) };
    const t = fill === null ? api.empty(shape, opts) : api.full(shape, fill, opts);
    return new Parameter(t); // takes t over
  }
  const deps = { ...k, Module, Parameter, STATE, parse, checks, init, param };
  const functional = makeFunctional(api);
  // other parts of wt.nn (wt.nn.utils) may already be there: added to, not replaced
  // wt.nn.Parameter(t) as PyTorch writes it, or with new
  const ParameterFn = new Proxy(Parameter, { apply: (P, _, args) => new P(...args) });
  api.nn = Object.assign(api.nn ?? {}, {
    Module, Parameter: ParameterFn, init, functional, F: functional,
    ...makeContainers(api, deps), ...makeLayers(api, deps), ...makeNorm(api, deps), ...makeActivations(api, deps),
    ...makeEmbeddingLayers(api, deps), ...makeDistanceLayers(api, deps),
  });
  // the attention modules build on Linear, LayerNorm, Dropout and ModuleList
  const transformer = makeTransformer(api, { ...deps, nn: api.nn });
  Object.assign(api.nn, transformer.modules);
  Object.assign(functional, transformer.functional);
  installStepRule(api, { ...k, Parameter });
}

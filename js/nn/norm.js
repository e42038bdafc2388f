// torch.nn's normalization layers: BatchNorm1d/2d (torch/nn/modules/batchnorm.py
// _NormBase/_BatchNorm), GroupNorm and LayerNorm, over wt.batchNorm,
// wt.groupNorm and wt.layerNorm.
import { REQUIRED as R } from './args.js';
import { pyFloat, pyStr } from './module.js';

export function makeNorm(api, { Module, param, parse, checks, init }) {
  const { int, num, bool, fail } = checks;

  const BN = [['numFeatures', R], ['eps', 1e-5], ['momentum', 0.1], ['affine', true], ['trackRunningStats', true],
    ['device', null], ['dtype', null]];

  class BatchNorm extends Module {
    constructor(fn, a) {
      super();
      const o = parse(fn, BN, a);
      this.numFeatures = int(fn, 'numFeatures', o.numFeatures);
      this.eps = num(fn, 'eps', o.eps);
      if (o.momentum !== null) num(fn, 'momentum', o.momentum);
      this.momentum = o.momentum;
      this.affine = bool(fn, 'affine', o.affine);
      this.trackRunningStats = bool(fn, 'trackRunningStats', o.trackRunningStats);
      const n = this.numFeatures;
      if (this.affine) {
        this.weight = param([n], o, 1);
        this.bias = param([n], o, 0);
      } else {
        this.registerParameter('weight', null);
        this.registerParameter('bias', null);
      }
      const opts = { ...(o.device ? { device: o.device } : {}), ...(o.dtype ? { dtype: o.dtype } : {}) };
      if (this.trackRunningStats) {
        this.registerBuffer('running_mean', api.zeros([n], opts));
        this.registerBuffer('running_var', api.ones([n], opts));
        this.registerBuffer('num_batches_tracked', api.tensor(0, { dtype: 'int64', ...(o.device ? { device: o.device } : {}) }));
      } else {
        for (const b of ['running_mean', 'running_var', 'num_batches_tracked']) this.registerBuffer(b, null);
      }
    }

    // the buffers keep PyTorch's names (a checkpoint's keys); camelCase reads too
    get runningMean() { return this.running_mean; }
    get runningVar() { return this.running_var; }
    get numBatchesTracked() { return this.num_batches_tracked; }

    // the running statistics back to zeros/ones and the count to 0 (PyTorch's reset_running_stats)
    resetRunningStats() {
      if (!this.trackRunningStats) return;
      api.noGrad(() => {
        this.running_mean.zero_();
        this.running_var.fill_(1);
        this.num_batches_tracked.zero_();
      });
    }

    resetParameters() {
      this.resetRunningStats();
      if (this.affine) {
        init.ones_(this.weight);
        init.zeros_(this.bias);
      }
    }

    forward(x) {
      this._checkInputDim(x);
      let factor = this.momentum === null ? 0.0 : this.momentum;
      if (this.training && this.trackRunningStats && this.num_batches_tracked !== null) {
        api.noGrad(() => this.num_batches_tracked.add_(1));
        // momentum null: the cumulative moving average
        if (this.momentum === null) factor = 1.0 / this.num_batches_tracked.item();
      }
      const bnTraining = this.training || (this.running_mean === null && this.running_var === null);
      const useStats = !this.training || this.trackRunningStats;
      return api.batchNorm(x, useStats ? this.running_mean : null, useStats ? this.running_var : null, this.weight, this.bias,
        { training: bnTraining, momentum: factor, eps: this.eps });
    }

    // a checkpoint without num_batches_tracked (PyTorch < 0.4.1) loads with 0
    _loadFromStateDict(sd, prefix, missing, unexpected, errors) {
      const key = `${prefix}num_batches_tracked`;
      let filled = null;
      if (this.trackRunningStats && !sd.has(key)) sd.set(key, (filled = api.tensor(0, { dtype: 'int64' })));
      try {
        super._loadFromStateDict(sd, prefix, missing, unexpected, errors);
      } finally {
        filled?.dispose();
      }
    }

    extraRepr() {
      return `${this.numFeatures}, eps=${pyFloat(this.eps)}, momentum=${this.momentum === null ? 'None' : pyFloat(this.momentum)}, ` +
        `affine=${pyStr(this.affine)}, track_running_stats=${pyStr(this.trackRunningStats)}`;
    }
  }

  class BatchNorm1d extends BatchNorm {
    constructor(...a) { super('BatchNorm1d', a); }
    _checkInputDim(x) {
      if (x.dim() !== 2 && x.dim() !== 3) fail('InvalidArgument', `expected 2D or 3D input (got ${x.dim()}D input)`);
    }
  }

  class BatchNorm2d extends BatchNorm {
    constructor(...a) { super('BatchNorm2d', a); }
    _checkInputDim(x) {
      if (x.dim() !== 4) fail('InvalidArgument', `expected 4D input (got ${x.dim()}D input)`);
    }
  }

  class GroupNorm extends Module {
    constructor(...a) {
      super();
      const o = parse('GroupNorm', [['numGroups', R], ['numChannels', R], ['eps', 1e-5], ['affine', true], ['device', null],
        ['dtype', null]], a);
      this.numGroups = int('GroupNorm', 'numGroups', o.numGroups);
      this.numChannels = int('GroupNorm', 'numChannels', o.numChannels);
      if (this.numChannels % this.numGroups !== 0) fail('InvalidArgument', 'num_channels must be divisible by num_groups');
      this.eps = num('GroupNorm', 'eps', o.eps);
      this.affine = bool('GroupNorm', 'affine', o.affine);
      if (this.affine) {
        this.weight = param([this.numChannels], o, 1);
        this.bias = param([this.numChannels], o, 0);
      } else {
        this.registerParameter('weight', null);
        this.registerParameter('bias', null);
      }
    }
    forward(x) { return api.groupNorm(x, this.numGroups, this.weight, this.bias, { eps: this.eps }); }
    extraRepr() { return `${this.numGroups}, ${this.numChannels}, eps=${pyFloat(this.eps)}, affine=${pyStr(this.affine)}`; }
  }

  class LayerNorm extends Module {
    constructor(...a) {
      super();
      const o = parse('LayerNorm', [['normalizedShape', R], ['eps', 1e-5], ['elementwiseAffine', true], ['device', null],
        ['dtype', null]], a);
      const shape = Array.isArray(o.normalizedShape) ? o.normalizedShape : [o.normalizedShape];
      this.normalizedShape = shape.map((v) => int('LayerNorm', 'normalizedShape', v));
      this.eps = num('LayerNorm', 'eps', o.eps);
      this.elementwiseAffine = bool('LayerNorm', 'elementwiseAffine', o.elementwiseAffine);
      if (this.elementwiseAffine) {
        this.weight = param(this.normalizedShape, o, 1);
        this.bias = param(this.normalizedShape, o, 0);
      } else {
        this.registerParameter('weight', null);
        this.registerParameter('bias', null);
      }
    }
    forward(x) { return api.layerNorm(x, this.normalizedShape, this.weight, this.bias, { eps: this.eps }); }
    extraRepr() {
      return `${pyStr(this.normalizedShape)}, eps=${pyFloat(this.eps)}, elementwise_affine=${pyStr(this.elementwiseAffine)}`;
    }
  }

  return { BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm };
}

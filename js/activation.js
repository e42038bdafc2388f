// torch.nn.functional's calling forms of the activations and of dropout
// (issue 23), over the op table's functions js/ops.js installed:
//   wt.elu(x, alpha, { inplace }), wt.leakyRelu(x, slope, { inplace }),
//   wt.hardtanh(x, min, max, { inplace }), wt.relu6(x, { inplace }),
//   wt.silu / mish / hardswish / hardsigmoid(x, { inplace })
//     { inplace: true } runs the in-place op (relu6: hardtanh_(x, 0, 6), as
//     F.relu6 does) and returns x; otherwise the generated function runs
//   wt.dropout(x, p = 0.5, training = true, { p, training, inplace })
//   wt.dropout2d(x, p = 0.5, training = true, { p, training, inplace })
//     PyTorch's positional order, or the same as options; dropout2d is
//     feature_dropout (one draw per (N, C) channel; a 3-D input is (N, C, L),
//     as 1.13 reads it)
export function installActivations(api, k) {
  const { Tensor, WeftError, isOptions } = k;
  const call = api.ops.call;
  const trailing = (args) => args.length > 1 && isOptions(args[args.length - 1]) && !(args[args.length - 1] instanceof Tensor);

  function checkBool(fn, name, v) {
    if (typeof v !== 'boolean') {
      throw new WeftError('TypeError', `${fn}(): argument '${name}' must be bool, not ${v === null ? 'null' : typeof v}`);
    }
  }

  // F.<fn>(x, ...params, inplace=False): the in-place op, or the generated function
  function withInplace(name, fn, inplaceOp, fixed = []) {
    const gen = api[name];
    if (!gen) return;
    api[name] = function activation(...args) {
      if (!trailing(args) || !('inplace' in args[args.length - 1])) return gen(...args);
      const { inplace, ...rest } = args[args.length - 1];
      checkBool(fn, 'inplace', inplace);
      const pos = args.slice(0, -1);
      const kw = Object.keys(rest).length ? [rest] : [];
      if (!inplace) return gen(...pos, ...kw);
      call(inplaceOp, pos[0], ...fixed, ...pos.slice(1), ...kw);
      return pos[0];
    };
  }
  withInplace('elu', 'elu', 'elu_');
  withInplace('leakyRelu', 'leaky_relu', 'leaky_relu_');
  withInplace('hardtanh', 'hardtanh', 'hardtanh_');
  withInplace('relu6', 'relu6', 'hardtanh_', [0, 6]);
  withInplace('silu', 'silu', 'silu_');
  withInplace('mish', 'mish', 'mish_');
  withInplace('hardswish', 'hardswish', 'hardswish_');
  withInplace('hardsigmoid', 'hardsigmoid', 'hardsigmoid_');

  // F.dropout / F.dropout2d: (input, p=0.5, training=True, inplace=False)
  function dropoutForm(fn, op) {
    const names = ['p', 'training'];
    return function dropout(x, ...rest) {
      const kw = trailing([x, ...rest]) ? { ...rest.pop() } : {};
      if (rest.length > 2) {
        throw new WeftError('TypeError', `${fn}() takes from 1 to 3 positional arguments but ${rest.length + 1} were given`);
      }
      for (const key of Object.keys(kw)) {
        if (![...names, 'inplace'].includes(key)) throw new WeftError('TypeError', `${fn}() got an unexpected keyword argument '${key}'`);
      }
      rest.forEach((v, i) => {
        if (names[i] in kw) throw new WeftError('TypeError', `${fn}() got multiple values for argument '${names[i]}'`);
        kw[names[i]] = v;
      });
      const { p = 0.5, training = true, inplace = false } = kw;
      if (typeof p !== 'number') throw new WeftError('TypeError', `${fn}(): argument 'p' must be a number, not ${typeof p}`);
      checkBool(fn, 'training', training);
      checkBool(fn, 'inplace', inplace);
      if (!(p >= 0 && p <= 1)) {
        throw new WeftError('InvalidArgument', `${fn}: dropout probability has to be between 0 and 1, but got ${p}`);
      }
      return call(inplace ? `${op}_` : op, x, p, training);
    };
  }
  if (api.dropout) api.dropout = dropoutForm('dropout', 'dropout');
  if (api.featureDropout) api.dropout2d = dropoutForm('dropout2d', 'feature_dropout');
}

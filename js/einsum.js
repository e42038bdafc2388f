// torch.einsum's calling forms over the op table's einsum (whose generated
// function takes ATen's einsum(equation, tensors, { path })):
//   wt.einsum('ij,jk->ik', a, b)      operands as arguments
//   wt.einsum('ij,jk->ik', [a, b])    or as one array, as PyTorch also takes
//   wt.einsum('ij,jk,kl', a, b, c, { path: [1, 2, 0, 1] })   ATen's contraction path
// Everything else (the equation's checks, the plan) is the C op (src/ops/einsum.c).
export function installEinsum(api, k) {
  const { Tensor, WeftError, isOptions } = k;
  const gen = api.einsum;
  if (!gen) return;
  api.einsum = function einsum(equation, ...rest) {
    if (typeof equation !== 'string') {
      throw new WeftError('TypeError', `einsum(): argument 'equation' must be a string, not ${equation === null ? 'null' : typeof equation}`);
    }
    const last = rest[rest.length - 1];
    const opts = rest.length && isOptions(last) && !(last instanceof Tensor) ? rest.pop() : {};
    const tensors = rest.length === 1 && Array.isArray(rest[0]) ? rest[0] : rest;
    return gen(equation, tensors, opts);
  };
}

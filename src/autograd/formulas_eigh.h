/* _linalg_eigh's backward (included by formulas.c after formulas_linalg.h):
 * PyTorch 1.13's linalg_eig_backward for a Hermitian A, written with the
 * dispatcher ops so createGraph records it. RES is the eigenvalues L, RES2
 * the eigenvectors V; grads[0] and grads[1] their gradients (either NULL):
 *   gA = V (skew(V^T gV) / E + diag(gL)) V^T,  E_ij = L_j - L_i (1 on the
 * diagonal), skew(X) = (X - X^T) / 2; only gL: gA = V diag(gL) V^T.
 * Repeated eigenvalues give inf/NaN when gV is used, as in 1.13: the loss
 * then depends on an arbitrary choice of basis. */
static T eye_like(weft__bctx* c, T l) {
  return l ? keep(c, weft_eye(l->sizes[l->ndim - 1], l->dtype, l->device)) : NULL;
}

static T linalg_eigh_backward(weft__bctx* c) {
  T gl = c->grads[0], gv = c->grads[1], l = RES, v = RES2;
  if (!gv) return matmul2(c, mul(c, v, unsq(c, gl, -2)), mT(c, v));
  T vg = matmul2(c, mT(c, v), gv);
  T skew = scale(c, sub(c, vg, mT(c, vg)), weft_scalar_double(0.5));
  T eye = eye_like(c, l);
  T e = add(c, sub(c, unsq(c, l, -2), unsq(c, l, -1)), eye);
  T inner = div(c, skew, e);
  if (gl) inner = add(c, inner, mul(c, eye, unsq(c, gl, -2)));
  return matmul2(c, v, matmul2(c, inner, mT(c, v)));
}

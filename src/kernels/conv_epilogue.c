/* A convolution's epilogue where the output tile cannot take it as it is
 * stored (the depthwise kernels write, they do not accumulate): in place over
 * n outputs just written, still in L1,
 *   y[i] = clamp(y[i] + r[i], lo, hi)      (r NULL: no residual)
 * relu is lo = 0, hi = +inf; relu6 lo = 0, hi = 6; no activation -inf, +inf.
 * The clamp is PyTorch's (wv_f32x4_clamp): a NaN stays NaN and -0 stays -0,
 * as in the unfused ops, on every backend. */
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

void WEFT_UKERNEL(f32_conv_epilogue, u8)(size_t n, const float* r, float* y, const struct weft_f32_clamp_params* p) {
  const wv128 lo = wv_f32x4_splat(p->lo), hi = wv_f32x4_splat(p->hi);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    wv128 a = wv_v128_load(y + i), b = wv_v128_load(y + i + 4);
    if (r) a = wv_f32x4_add(a, wv_v128_load(r + i)), b = wv_f32x4_add(b, wv_v128_load(r + i + 4));
    wv_v128_store(y + i, wv_f32x4_clamp(a, lo, hi));
    wv_v128_store(y + i + 4, wv_f32x4_clamp(b, lo, hi));
  }
  for (; i + 4 <= n; i += 4) {
    wv128 a = wv_v128_load(y + i);
    if (r) a = wv_f32x4_add(a, wv_v128_load(r + i));
    wv_v128_store(y + i, wv_f32x4_clamp(a, lo, hi));
  }
  if (i < n) {
    size_t bytes = (n - i) * 4;
    wv128 a = wv_v128_load_partial(y + i, bytes);
    if (r) a = wv_f32x4_add(a, wv_v128_load_partial(r + i, bytes));
    wv_v128_store_partial(y + i, wv_f32x4_clamp(a, lo, hi), bytes);
  }
}

/* NaN-keeping clamp in plain C: a comparison with NaN is false, so v stays */
void WEFT_UKERNEL(f64_conv_epilogue, u1)(size_t n, const double* r, double* y, const struct weft_f64_clamp_params* p) {
  for (size_t i = 0; i < n; i++) {
    double v = r ? y[i] + r[i] : y[i];
    y[i] = v < p->lo ? p->lo : v > p->hi ? p->hi : v;
  }
}

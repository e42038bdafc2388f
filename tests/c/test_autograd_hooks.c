/* Tensor hooks (weft_register_hook, issue 23): on a leaf before accumulation,
 * on a non-leaf before its gradient flows on, in registration order; a
 * replacement takes the gradient's place (and must keep its shape and dtype);
 * a failing hook stops the backward with its status and leaks nothing;
 * removal, also from inside a running hook; free_ctx once per hook. The JS
 * replay against PyTorch's numbers is tests/js/hooks.test.mjs. */
#include "test.h"

typedef struct {
  double scale;       /* the replacement is grad * scale (0: keep grad) */
  int calls, freed;
  double first;       /* element 0 of the last grad seen */
  weft_status fail;   /* returned instead, when set */
  weft_tensor* owner; /* remove this hook from owner while running */
  int64_t bad_size;   /* return a tensor of this many elements instead */
} hook_ctx;

static int order[8], norder;

static weft_status hook(void* p, const weft_tensor* g, weft_tensor** out) {
  hook_ctx* c = p;
  c->calls++;
  order[norder++ % 8] = (int)(c->scale * 10);
  c->first = weft_tensor_get_double(g, 0);
  if (c->owner) weft_remove_hook(c->owner, c);
  if (c->fail) return c->fail;
  if (c->bad_size) *out = weft_full(&c->bad_size, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  else if (c->scale) *out = weft_mul_scalar(g, weft_scalar_double(c->scale));
  return WEFT_OK;
}
static void freed(void* p) { ((hook_ctx*)p)->freed++; }

static const int64_t S3[] = {3};

static weft_tensor* leaf(void) {
  weft_tensor* x = weft_full(S3, 1, 2.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(weft_set_requires_grad(x, true) == WEFT_OK);
  return x;
}

/* loss = sum(y * y) */
static weft_status backward_sq(weft_tensor* y) {
  weft_tensor* yy = weft_mul(y, y);
  weft_tensor* l = weft_sum(yy, (weft_dtype)-1);
  weft_status s = weft_backward(&l, NULL, 1, false, false);
  weft_tensor_release(yy);
  weft_tensor_release(l);
  return s;
}

static void test_leaf_and_nonleaf(void) {
  weft_tensor* x = leaf();
  hook_ctx a = {.scale = 2}, b = {.scale = 3}, c = {.scale = 0};
  CHECK(weft_register_hook(x, hook, &a, freed) == WEFT_OK);
  weft_tensor* y = weft_mul_scalar(x, weft_scalar_double(5)); /* y = 10 */
  CHECK(weft_register_hook(y, hook, &b, freed) == WEFT_OK);
  CHECK(weft_register_hook(y, hook, &c, freed) == WEFT_OK);
  norder = 0;
  CHECK(backward_sq(y) == WEFT_OK);
  /* dy = 2y = 20, b: 60 (c sees 60, keeps it), dx = 5 * 60 = 300, a: 600 */
  CHECK(b.calls == 1 && b.first == 20 && c.first == 60 && a.first == 300);
  CHECK(norder == 3 && order[0] == 30 && order[1] == 0 && order[2] == 20);
  weft_tensor* g = weft_tensor_grad(x);
  CHECK(g && weft_tensor_get_double(g, 0) == 600);
  weft_tensor_release(g);
  /* removal: the hook is freed at once, and runs no more */
  CHECK(weft_remove_hook(x, &a) && a.freed == 1 && !weft_remove_hook(x, &a));
  CHECK(weft_set_grad(x, NULL) == WEFT_OK);
  weft_tensor* y2 = weft_mul_scalar(x, weft_scalar_double(5));
  CHECK(backward_sq(y2) == WEFT_OK && a.calls == 1);
  weft_tensor_release(y2);
  /* the non-leaf's hooks live on its node: freed with it */
  weft_tensor_release(y);
  CHECK(b.freed == 1 && c.freed == 1);
  weft_tensor_release(x);
}

static void test_failures(void) {
  weft_tensor* x = leaf();
  weft_tensor* w = leaf();
  weft_tensor* y = weft_mul(x, w);
  hook_ctx f = {.fail = WEFT_INVALID_ARGUMENT};
  CHECK(weft_register_hook(y, hook, &f, freed) == WEFT_OK);
  CHECK(backward_sq(y) == WEFT_INVALID_ARGUMENT);
  CHECK(weft_tensor_grad(x) == NULL);
  weft_tensor_release(y);
  /* a replacement of another shape is refused */
  hook_ctx s = {.bad_size = 2};
  CHECK(weft_register_hook(x, hook, &s, NULL) == WEFT_OK);
  CHECK(backward_sq(x) == WEFT_INVALID_ARGUMENT);
  CHECK(strstr(weft_last_error(), "changed the size") != NULL);
  CHECK(weft_remove_hook(x, &s));
  /* a hook removing itself while it runs: it ran once, is freed once, and the next one still runs */
  hook_ctx self = {.scale = 1, .owner = x}, next = {.scale = 1};
  CHECK(weft_register_hook(x, hook, &self, freed) == WEFT_OK);
  CHECK(weft_register_hook(x, hook, &next, freed) == WEFT_OK);
  CHECK(backward_sq(x) == WEFT_OK);
  CHECK(backward_sq(x) == WEFT_OK);
  CHECK(self.calls == 1 && self.freed == 1 && next.calls == 2);
  /* no hooks on what does not require grad */
  weft_tensor* plain = weft_full(S3, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(weft_register_hook(plain, hook, &f, NULL) == WEFT_INVALID_ARGUMENT);
  weft_tensor_release(plain);
  weft_tensor_release(w);
  weft_tensor_release(x);
  CHECK(next.freed == 1); /* with the leaf's meta */
}

/* weft_apply_hooks (backward(inputs=)): a leaf's and a non-leaf's hooks on a given gradient */
static void test_apply(void) {
  weft_tensor* x = leaf();
  weft_tensor* y = weft_mul_scalar(x, weft_scalar_double(5));
  hook_ctx a = {.scale = 2}, b = {.scale = 3};
  CHECK(weft_register_hook(x, hook, &a, NULL) == WEFT_OK && weft_register_hook(y, hook, &b, NULL) == WEFT_OK);
  weft_tensor* ones = weft_full(S3, 1, 1.0, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor *gx = NULL, *gy = NULL, *plain = NULL;
  CHECK(weft_apply_hooks(x, ones, &gx) == WEFT_OK && weft_tensor_get_double(gx, 0) == 2);
  CHECK(weft_apply_hooks(y, ones, &gy) == WEFT_OK && weft_tensor_get_double(gy, 0) == 3);
  CHECK(weft_apply_hooks(ones, ones, &plain) == WEFT_OK && plain == ones); /* no hooks: the same tensor */
  a.fail = WEFT_INVALID_ARGUMENT;
  weft_tensor* none = ones;
  CHECK(weft_apply_hooks(x, ones, &none) == WEFT_INVALID_ARGUMENT && none == NULL);
  weft_tensor* all[] = {gx, gy, plain, ones, y, x};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

int main(void) {
  test_leaf_and_nonleaf();
  test_apply();
  test_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}

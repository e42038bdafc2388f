/* The reference decoder of benchmark W10: a Llama-style transformer read from
 * a llama2.c legacy (v0) checkpoint and run token by token in float32 loops,
 * no library, one file. bench/run.mjs compiles it with Emscripten
 * (-O3 -msimd128, one thread, run in Node) and natively (-O3 -march=native,
 * and with -fopenmp for the 2-thread row, where the row loops of the
 * matrix-vector products and the heads of attention are split).
 *
 *   decode <checkpoint.bin> [--steps N] [--start ID] [--prompt id,id,...] [--reps N] [--logits]
 *
 * Greedy decoding, batch 1: --steps tokens from --start (one forward per
 * token), and the token after --prompt (one forward per prompt token, the
 * classifier on the last only); each timed --reps times, medians printed.
 * Prints one JSON line: ids, prefill_next, decode_ms, tok_s, prefill_ms,
 * threads, reps (and with --logits the logits after the prompt).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
  int dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len;
  int shared; /* the classifier is the token embedding (a positive vocab_size in the file) */
} Config;

/* Views into the checkpoint's floats, in the file's order; each per-layer
 * array holds all layers back to back. */
typedef struct {
  const float *embed, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *classifier;
} Weights;

typedef struct {
  float *x, *xn, *q, *att_out, *proj, *gate, *up, *scores, *logits;
  float *k_cache, *v_cache; /* [n_layers][seq_len][n_kv_heads * head_dim] */
} State;

static void die(const char *what) {
  fprintf(stderr, "decode: %s\n", what);
  exit(1);
}

static void *alloc(size_t n) {
  void *p = calloc(n, 1);
  if (!p) die("out of memory");
  return p;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Reads the whole checkpoint; the weights point into the returned buffer. */
static float *load(const char *path, Config *c, Weights *w) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open the checkpoint");
  int h[7];
  if (fread(h, sizeof(int), 7, f) != 7) die("short header");
  *c = (Config){h[0], h[1], h[2], h[3], h[4], abs(h[5]), h[6], h[5] > 0};
  if (c->dim <= 0 || c->n_heads <= 0 || c->dim % c->n_heads || c->n_kv_heads <= 0 || c->n_heads % c->n_kv_heads)
    die("bad header");
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f) - 7 * (long)sizeof(int);
  fseek(f, 7 * (long)sizeof(int), SEEK_SET);
  float *data = alloc((size_t)bytes);
  if (fread(data, 1, (size_t)bytes, f) != (size_t)bytes) die("short read");
  fclose(f);

  size_t L = c->n_layers, d = c->dim, hd = d / c->n_heads, kv = c->n_kv_heads * hd, hid = c->hidden;
  const float *p = data;
#define TAKE(field, n) (w->field = p, p += (n))
  TAKE(embed, c->vocab * d);
  TAKE(rms_att, L * d);
  TAKE(wq, L * d * d);
  TAKE(wk, L * kv * d);
  TAKE(wv, L * kv * d);
  TAKE(wo, L * d * d);
  TAKE(rms_ffn, L * d);
  TAKE(w1, L * hid * d);
  TAKE(w2, L * d * hid);
  TAKE(w3, L * hid * d);
  TAKE(rms_final, d);
#undef TAKE
  p += c->seq_len * hd; /* the legacy rotary tables (cos, sin): recomputed below instead */
  w->classifier = c->shared ? w->embed : p;
  if (!c->shared) p += (size_t)c->vocab * d;
  if ((size_t)(p - data) * sizeof(float) != (size_t)bytes) die("the file's size does not match its header");
  return data;
}

static void state_init(State *s, const Config *c) {
  size_t d = c->dim, kv = c->n_kv_heads * (d / c->n_heads), f = sizeof(float);
  s->x = alloc(d * f);
  s->xn = alloc(d * f);
  s->q = alloc(d * f);
  s->att_out = alloc(d * f);
  s->proj = alloc(d * f);
  s->gate = alloc(c->hidden * f);
  s->up = alloc(c->hidden * f);
  s->scores = alloc((size_t)c->n_heads * c->seq_len * f);
  s->logits = alloc(c->vocab * f);
  s->k_cache = alloc((size_t)c->n_layers * c->seq_len * kv * f);
  s->v_cache = alloc((size_t)c->n_layers * c->seq_len * kv * f);
}

static void state_free(State *s) {
  float *all[] = {s->x, s->xn, s->q, s->att_out, s->proj, s->gate, s->up, s->scores, s->logits, s->k_cache,
                  s->v_cache};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void rmsnorm(float *out, const float *x, const float *weight, int n) {
  float ss = 0.0f;
  for (int i = 0; i < n; i++) ss += x[i] * x[i];
  float inv = 1.0f / sqrtf(ss / n + 1e-5f);
  for (int i = 0; i < n; i++) out[i] = x[i] * inv * weight[i];
}

/* out[rows] = W[rows][cols] x[cols] */
static void matvec(float *out, const float *W, const float *x, int rows, int cols) {
  int r;
#pragma omp parallel for private(r)
  for (r = 0; r < rows; r++) {
    const float *row = W + (size_t)r * cols;
    float acc = 0.0f;
    for (int j = 0; j < cols; j++) acc += row[j] * x[j];
    out[r] = acc;
  }
}

/* Rotates each (even, odd) pair of v [n] (heads of head_dim back to back) by pos * 10000^(-i / head_dim), i the
 * pair's even index within its head. */
static void rope(float *v, int n, int head_dim, int pos) {
  for (int i = 0; i < n; i += 2) {
    float freq = powf(10000.0f, -(float)(i % head_dim) / (float)head_dim);
    float a = pos * freq, co = cosf(a), si = sinf(a);
    float re = v[i], im = v[i + 1];
    v[i] = re * co - im * si;
    v[i + 1] = re * si + im * co;
  }
}

/* Each query head against the cached keys 0..pos of its key/value head: softmax(q k / sqrt(hd)) v. */
static void attend(State *s, const Config *c, size_t layer_off, int pos) {
  int hd = c->dim / c->n_heads, kv = c->n_kv_heads * hd, group = c->n_heads / c->n_kv_heads, h;
  float scale = 1.0f / sqrtf((float)hd);
#pragma omp parallel for private(h)
  for (h = 0; h < c->n_heads; h++) {
    const float *q = s->q + h * hd;
    const float *keys = s->k_cache + layer_off + (h / group) * hd;
    const float *vals = s->v_cache + layer_off + (h / group) * hd;
    float *sc = s->scores + (size_t)h * c->seq_len, max = -INFINITY, sum = 0.0f;
    for (int t = 0; t <= pos; t++) {
      float dot = 0.0f;
      for (int i = 0; i < hd; i++) dot += q[i] * keys[(size_t)t * kv + i];
      sc[t] = dot * scale;
      if (sc[t] > max) max = sc[t];
    }
    for (int t = 0; t <= pos; t++) sum += (sc[t] = expf(sc[t] - max));
    float *out = s->att_out + h * hd;
    memset(out, 0, hd * sizeof(float));
    for (int t = 0; t <= pos; t++) {
      float p = sc[t] / sum;
      for (int i = 0; i < hd; i++) out[i] += p * vals[(size_t)t * kv + i];
    }
  }
}

/* One token at position pos through every layer; the logits too when want_logits. */
static void forward(State *s, const Config *c, const Weights *w, int token, int pos, int want_logits) {
  int d = c->dim, hd = d / c->n_heads, kv = c->n_kv_heads * hd, hid = c->hidden;
  memcpy(s->x, w->embed + (size_t)token * d, d * sizeof(float));
  for (int l = 0; l < c->n_layers; l++) {
    size_t cache = (size_t)l * c->seq_len * kv;
    float *k = s->k_cache + cache + (size_t)pos * kv, *v = s->v_cache + cache + (size_t)pos * kv;
    rmsnorm(s->xn, s->x, w->rms_att + (size_t)l * d, d);
    matvec(s->q, w->wq + (size_t)l * d * d, s->xn, d, d);
    matvec(k, w->wk + (size_t)l * kv * d, s->xn, kv, d);
    matvec(v, w->wv + (size_t)l * kv * d, s->xn, kv, d);
    rope(s->q, d, hd, pos);
    rope(k, kv, hd, pos);
    attend(s, c, cache, pos);
    matvec(s->proj, w->wo + (size_t)l * d * d, s->att_out, d, d);
    for (int i = 0; i < d; i++) s->x[i] += s->proj[i];

    rmsnorm(s->xn, s->x, w->rms_ffn + (size_t)l * d, d);
    matvec(s->gate, w->w1 + (size_t)l * hid * d, s->xn, hid, d);
    matvec(s->up, w->w3 + (size_t)l * hid * d, s->xn, hid, d);
    for (int i = 0; i < hid; i++) s->gate[i] = s->gate[i] / (1.0f + expf(-s->gate[i])) * s->up[i];
    matvec(s->proj, w->w2 + (size_t)l * d * hid, s->gate, d, hid);
    for (int i = 0; i < d; i++) s->x[i] += s->proj[i];
  }
  if (!want_logits) return;
  rmsnorm(s->xn, s->x, w->rms_final, d);
  matvec(s->logits, w->classifier, s->xn, c->vocab, d);
}

static int argmax(const float *v, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return best;
}

/* steps greedy tokens after start into ids; the elapsed ms. */
static double decode(State *s, const Config *c, const Weights *w, int start, int steps, int *ids) {
  double t0 = now_ms();
  int token = start;
  for (int pos = 0; pos < steps; pos++) {
    forward(s, c, w, token, pos, 1);
    ids[pos] = token = argmax(s->logits, c->vocab);
  }
  return now_ms() - t0;
}

/* The prompt through the model, the token after it in *next; the elapsed ms. */
static double prefill(State *s, const Config *c, const Weights *w, const int *prompt, int n, int *next) {
  double t0 = now_ms();
  for (int pos = 0; pos < n; pos++) forward(s, c, w, prompt[pos], pos, pos == n - 1);
  *next = argmax(s->logits, c->vocab);
  return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* "1,2,3" into a new array; its length in *n. */
static int *parse_ids(const char *text, int *n) {
  int cap = 1;
  for (const char *p = text; *p; p++) cap += *p == ',';
  int *ids = alloc(cap * sizeof(int));
  char *end;
  for (*n = 0; *n < cap; (*n)++) {
    ids[*n] = (int)strtol(text, &end, 10);
    if (end == text) die("bad --prompt");
    text = *end == ',' ? end + 1 : end;
  }
  return ids;
}

static void print_ids(const char *key, const int *ids, int n) {
  printf("\"%s\":[", key);
  for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
  printf("],");
}

int main(int argc, char **argv) {
  if (argc < 2) die("usage: decode <checkpoint.bin> [--steps N] [--start ID] [--prompt ids] [--reps N] [--logits]");
  int steps = 128, start = 1, reps = 1, want_logits = 0, n_prompt = 0, *prompt = NULL;
  for (int i = 2; i < argc; i++) {
    int more = i + 1 < argc;
    if (!strcmp(argv[i], "--steps") && more) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--start") && more) start = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && more) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--prompt") && more) prompt = parse_ids(argv[++i], &n_prompt);
    else if (!strcmp(argv[i], "--logits")) want_logits = 1;
    else die("unknown argument");
  }
  Config c;
  Weights w;
  float *data = load(argv[1], &c, &w);
  if (steps < 1 || steps > c.seq_len || n_prompt > c.seq_len || reps < 1) die("--steps, --prompt or --reps out of range");
  for (int i = 0; i < n_prompt; i++)
    if (prompt[i] < 0 || prompt[i] >= c.vocab) die("a prompt id is out of the vocabulary");
  State s;
  state_init(&s, &c);
  int *ids = alloc(steps * sizeof(int)), next = -1;
  double *dt = alloc(reps * sizeof(double)), *pt = alloc(reps * sizeof(double));
  for (int r = 0; r < reps; r++) {
    dt[r] = decode(&s, &c, &w, start, steps, ids);
    pt[r] = n_prompt ? prefill(&s, &c, &w, prompt, n_prompt, &next) : 0.0;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  double decode_ms = median(dt, reps);
  printf("{");
  print_ids("ids", ids, steps);
  if (want_logits && n_prompt) {
    printf("\"logits\":[");
    for (int i = 0; i < c.vocab; i++) printf(i ? ",%.9g" : "%.9g", s.logits[i]);
    printf("],");
  }
  printf("\"prefill_next\":%d,\"decode_ms\":%.3f,\"tok_s\":%.2f,\"prefill_ms\":%.3f,\"threads\":%d,\"reps\":%d}\n", next,
         decode_ms, steps * 1e3 / decode_ms, n_prompt ? median(pt, reps) : 0.0, threads, reps);
  state_free(&s);
  free(ids);
  free(dt);
  free(pt);
  free(prompt);
  free(data);
  return 0;
}

/* Where the NCHW -> NHWC transpose of [32, 64, 56, 56] float32 spends its
 * time, on one thread, next to memcpy of the same 25.7 MB:
 *   seq read / seq write   one stream each way alone (the parts of memcpy)
 *   transpose              the x32 kernel over 64 x 64 blocks (as the driver)
 *   transpose, reads only  the same reads, every block written to one 16 KB
 *                          buffer that stays in L1
 *   transpose, writes only the same writes, every block read from one block
 *   read K streams         the input, each image's 64 rows taken K at a time,
 *                          round-robin, 256 bytes of each row a turn: K = 64
 *                          is the transpose's read order without the rest
 * Each figure is the median of 11 rounds, as ms and as a ratio of memcpy's
 * time to its own (>1: faster than memcpy), rounds interleaved so machine
 * noise hits all alike. Run: ./build/rel/bench_transpose_probe */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kernels/kernels.h"
#include "kernels/vec/vec.h"

#define N 32
#define C 64
#define HW 3136
#define ROUNDS 11
#define BLOCK 64

enum { MEMCPY, SEQ_READ, SEQ_WRITE, TRANSPOSE, READS_ONLY, WRITES_ONLY, K4, K16, K64, NCASES };
static const char* const names[NCASES] = {"memcpy", "seq read", "seq write", "transpose", "transpose, reads only",
                                          "transpose, writes only", "read 4 streams", "read 16 streams",
                                          "read 64 streams"};

static volatile uint32_t sink;

static uint32_t fold(wv128 v) {
  uint32_t x[4];
  memcpy(x, &v, 16);
  return x[0] ^ x[1] ^ x[2] ^ x[3];
}

static void seq_read(const char* p, size_t n) {
  wv128 acc = wv_v128_load(p);
  for (size_t i = 0; i < n; i += 64) acc = wv_v128_xor(acc, wv_v128_xor(wv_v128_load(p + i), wv_v128_load(p + i + 32)));
  sink = fold(acc);
}

static void seq_write(char* p, size_t n) {
  wv128 z = wv_i32x4_splat(7);
  for (size_t i = 0; i < n; i += 64) {
    wv_v128_store(p + i, z);
    wv_v128_store(p + i + 16, z);
    wv_v128_store(p + i + 32, z);
    wv_v128_store(p + i + 48, z);
  }
}

/* one load per 64-byte line, k rows of an image at a time, 256 bytes a turn */
static void read_streams(const char* p, size_t k) {
  const size_t row = HW * 4;
  wv128 acc = wv_v128_load(p);
  for (size_t n = 0; n < N; n++)
    for (size_t g = 0; g < C; g += k)
      for (size_t off = 0; off < row; off += 256)
        for (size_t r = g; r < g + k; r++) {
          const char* q = p + (n * C + r) * row + off;
          for (size_t b = 0; b < 256 && off + b < row; b += 64) acc = wv_v128_xor(acc, wv_v128_load(q + b));
        }
  sink = fold(acc);
}

/* mode: TRANSPOSE, READS_ONLY (out fixed) or WRITES_ONLY (in fixed) */
static void transpose(const weft_kernels* k, const char* in, char* out, char* l1, int mode) {
  const size_t is = HW * 4, os = C * 4;
  for (size_t n = 0; n < N; n++)
    for (size_t j = 0; j < HW; j += BLOCK) {
      size_t w = HW - j < BLOCK ? HW - j : BLOCK;
      const char* src = mode == WRITES_ONLY ? in : in + n * C * is + j * 4;
      char* dst = mode == READS_ONLY ? l1 : out + n * C * is + j * os;
      k->x32_transposec(src, dst, is, os, w, C);
    }
}

static double run(int c, const weft_kernels* k, const char* in, char* out, char* l1, size_t n) {
  double t0 = now_ms();
  switch (c) {
    case MEMCPY: memcpy(out, in, n); break;
    case SEQ_READ: seq_read(in, n); break;
    case SEQ_WRITE: seq_write(out, n); break;
    case K4: read_streams(in, 4); break;
    case K16: read_streams(in, 16); break;
    case K64: read_streams(in, 64); break;
    default: transpose(k, in, out, l1, c); break;
  }
  return now_ms() - t0;
}

int main(void) {
  const size_t n = (size_t)N * C * HW * 4;
  char* in = malloc(n);
  char* out = malloc(n);
  char* l1 = malloc(BLOCK * C * 4 + 64);
  if (!in || !out || !l1) return 1;
  for (size_t i = 0; i < n / 4; i++) ((float*)in)[i] = (float)(i % 1009);
  memset(out, 0, n);
  memset(l1, 0, BLOCK * C * 4 + 64);
  const weft_kernels* k = weft__kernels();
  static double t[NCASES][ROUNDS], ratio[NCASES][ROUNDS];
  for (int c = 0; c < NCASES; c++) run(c, k, in, out, l1, n); /* page faults, warm-up */
  for (int r = 0; r < ROUNDS; r++) {
    for (int c = 0; c < NCASES; c++) t[c][r] = run(c, k, in, out, l1, n);
    for (int c = 0; c < NCASES; c++) ratio[c][r] = t[MEMCPY][r] / t[c][r];
  }
  printf("x32 transpose probe, %s, 1 thread, 25.7 MB each way; median of %d rounds\n", k->isa, ROUNDS);
  for (int c = 0; c < NCASES; c++) {
    qsort(t[c], ROUNDS, sizeof(double), cmp_d);
    qsort(ratio[c], ROUNDS, sizeof(double), cmp_d);
    printf("%-24s %7.2f ms  %5.2fx memcpy's speed\n", names[c], t[c][ROUNDS / 2], ratio[c][ROUNDS / 2]);
  }
  free(in);
  free(out);
  free(l1);
  return 0;
}

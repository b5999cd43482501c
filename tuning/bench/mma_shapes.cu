/* matxtract-mma-shapes - do Hopper's larger FP64 mma shapes help a hot block SpMV? (issue 3)
 *
 * The DU hot kernel feeds one 8-row x 4-column tile of the matrix to mma.m8n8k4 (A = the tile,
 * B = x of its 4 columns, the same in all 8 N columns). sm_90 also has m16n8k4, m16n8k8 and m16n8k16
 * in FP64. This program measures, for each shape, on the H100/H200 it runs on:
 *  1. issue throughput: every warp of a full grid runs chains of independent mma on registers;
 *     reported as mma/s and as matrix values (A elements) per second;
 *  2. latency: one warp, one dependent chain;
 *  3. a dense-tile SpMV y = H x with H (ROWS x COLS, FP64, every entry stored, beyond L2) kept in each
 *     shape's own fragment order (lane-contiguous, coalesced) and x gathered through a column index
 *     per tile column, one warp per row chunk (16 or 8 rows) as in the DU kernel: the best case of
 *     any hot tiling (no bitmap, no padding). Checked against a CPU double reference, then timed
 *     (CUDA events, median of 50 calls after 10 warm-up).
 * If every shape reaches the same bandwidth in 3 and 1 leaves a wide margin, the shape does not
 * limit the hot kernel: memory does, and the smaller tile (less padding on sparse tiles) wins.
 *
 * matxtract-mma-shapes [ROWS COLS]   (default 65536 x 256: 134 MB of values, 4096-8192 warps) */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <random>
#include <vector>
#include "cuda_check.h"

/* ---- the four FP64 shapes (PTX ISA fragment layouts; g = lane >> 2, t = lane & 3) ----------------- *
 * Each Shape has M rows x K columns of A; lane holds A_PER values of A, B_PER of B, D_PER of D.
 * a_row/a_col: where A fragment i of a lane sits; b_k: the K index of B fragment i (B[k][n] is the
 * same for every n here, so n does not matter); D[g][0] is d[0] of lane 4g, D[g+8][0] is d[2]. */
struct S884 {
  static constexpr int M = 8, K = 4, A_PER = 1, B_PER = 1, D_PER = 2;
  static const char *name() { return "m8n8k4"; }
  __host__ __device__ static int a_row(int lane, int) { return lane >> 2; }
  __host__ __device__ static int a_col(int lane, int) { return lane & 3; }
  __host__ __device__ static int b_k(int lane, int) { return lane & 3; }
  __device__ static void mma(double *d, const double *a, const double *b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
  }
};
struct S1684 {
  static constexpr int M = 16, K = 4, A_PER = 2, B_PER = 1, D_PER = 4;
  static const char *name() { return "m16n8k4"; }
  __host__ __device__ static int a_row(int lane, int i) { return (lane >> 2) + 8 * i; }
  __host__ __device__ static int a_col(int lane, int) { return lane & 3; }
  __host__ __device__ static int b_k(int lane, int) { return lane & 3; }
  __device__ static void mma(double *d, const double *a, const double *b) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  }
};
struct S1688 {
  static constexpr int M = 16, K = 8, A_PER = 4, B_PER = 2, D_PER = 4;
  static const char *name() { return "m16n8k8"; }
  __host__ __device__ static int a_row(int lane, int i) { return (lane >> 2) + 8 * (i & 1); }
  __host__ __device__ static int a_col(int lane, int i) { return (lane & 3) + 4 * (i >> 1); }
  __host__ __device__ static int b_k(int lane, int i) { return (lane & 3) + 4 * i; }
  __device__ static void mma(double *d, const double *a, const double *b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  }
};
struct S16816 : S1688 { /* the fragment layout of m16n8k8, with K and the A/B counts doubled */
  static constexpr int K = 16, A_PER = 8, B_PER = 4;
  static const char *name() { return "m16n8k16"; }
  __device__ static void mma(double *d, const double *a, const double *b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                 "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                   "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
};

/* ---- 1 and 2: register-only chains ----------------------------------------------------------------- */

/* CHAINS independent accumulators, ITERS rounds; the result is stored so nothing is optimised away. */
template <class S, int CHAINS>
__global__ void mma_chain_kernel(int iters, double *sink) {
  double a[S::A_PER], b[S::B_PER], d[CHAINS][S::D_PER];
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < S::A_PER; ++i) a[i] = 1e-3 * (lane + i);
#pragma unroll
  for (int i = 0; i < S::B_PER; ++i) b[i] = 1e-3 * (lane - i);
#pragma unroll
  for (int c = 0; c < CHAINS; ++c)
#pragma unroll
    for (int i = 0; i < S::D_PER; ++i) d[c][i] = 0.0;
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) S::mma(d[c], a, b);
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c)
#pragma unroll
    for (int i = 0; i < S::D_PER; ++i) s += d[c][i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* One warp, one dependent chain: cycles per mma from the SM clock. */
template <class S>
__global__ void mma_latency_kernel(int iters, double *sink, long long *cycles) {
  double a[S::A_PER], b[S::B_PER], d[S::D_PER];
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < S::A_PER; ++i) a[i] = 1e-3 * (lane + i);
#pragma unroll
  for (int i = 0; i < S::B_PER; ++i) b[i] = 1e-3 * (lane - i);
#pragma unroll
  for (int i = 0; i < S::D_PER; ++i) d[i] = 0.0;
  __syncwarp();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) S::mma(d, a, b);
  __syncwarp();
  const long long t1 = clock64();
  double s = 0.0;
#pragma unroll
  for (int i = 0; i < S::D_PER; ++i) s += d[i];
  sink[threadIdx.x] = s;
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

static float time_ms(void (*launch)(void *), void *arg, int warmup, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < warmup; ++i) launch(arg);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0));
    launch(arg);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&t[i], e0, e1));
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}

struct ChainArgs {
  int blocks, threads, iters;
  double *sink;
};
template <class S, int CHAINS>
static void launch_chain(void *p) {
  const ChainArgs *c = (const ChainArgs *)p;
  mma_chain_kernel<S, CHAINS><<<c->blocks, c->threads>>>(c->iters, c->sink);
}

struct ChainResult {
  double mma_per_s, latency_cycles;
};

template <class S>
static ChainResult measure_chains(int sms, double *sink, long long *dcycles) {
  ChainResult r;
  /* throughput: 8 blocks x 256 threads per SM (64 warps), 4 independent chains per warp */
  ChainArgs tp = {8 * sms, 256, 4096, sink};
  const float ms = time_ms(launch_chain<S, 4>, &tp, 3, 11);
  r.mma_per_s = (double)tp.blocks * (tp.threads / 32) * tp.iters * 4 / (ms * 1e-3);
  /* latency: one warp, one chain, the second of two launches (the first warms the instruction cache) */
  const int iters = 1 << 14;
  long long cycles = 0;
  for (int k = 0; k < 2; ++k) mma_latency_kernel<S><<<1, 32>>>(iters, sink, dcycles);
  CK(cudaGetLastError());
  CK(cudaMemcpy(&cycles, dcycles, sizeof cycles, cudaMemcpyDeviceToHost));
  r.latency_cycles = (double)cycles / iters;
  return r;
}

/* ---- 3: dense-tile SpMV ------------------------------------------------------------------------------ *
 * Ownership: warp w owns row chunk w (S::M rows) and walks its ntiles = COLS / K tiles in order;
 * lane 4g (t == 0) writes y of rows g and g + 8 (M == 16) once: no atomics, fixed order.
 * Values of tile (w, j): val[((w * ntiles + j) * A_PER + i) * 32 + lane] is A fragment i of the lane
 * (coalesced); tcol[j * K + k] is the x index of the tile's column k (the same for every chunk).
 * Every shape keeps the same 8 matrix values per lane in flight: U = 8 / A_PER tiles are loaded
 * before their U mma (ntiles is a multiple of U: COLS is a multiple of 128). */
template <class S>
__global__ void __launch_bounds__(128) tile_spmv_kernel(int nchunks, int ntiles, const double *__restrict__ val,
                                                         const int *__restrict__ tcol, const double *__restrict__ x,
                                                         double *__restrict__ y) {
  constexpr int U = 8 / S::A_PER;
  const int lane = threadIdx.x & 31;
  const int w = blockIdx.x * 4 + (threadIdx.x >> 5);
  if (w >= nchunks) return; /* warp-uniform */
  double d[S::D_PER];
#pragma unroll
  for (int i = 0; i < S::D_PER; ++i) d[i] = 0.0;
  const double *v = val + (size_t)w * ntiles * S::A_PER * 32 + lane;
  for (int j = 0; j < ntiles; j += U) {
    double a[U][S::A_PER], b[U][S::B_PER];
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int i = 0; i < S::A_PER; ++i) a[u][i] = __ldcs(v + ((size_t)(j + u) * S::A_PER + i) * 32);
#pragma unroll
      for (int i = 0; i < S::B_PER; ++i) b[u][i] = __ldg(x + __ldg(tcol + (j + u) * S::K + S::b_k(lane, i)));
    }
#pragma unroll
    for (int u = 0; u < U; ++u) S::mma(d, a[u], b[u]);
  }
  if ((lane & 3) == 0) {
    y[w * S::M + (lane >> 2)] = d[0];
    if (S::M == 16) y[w * S::M + 8 + (lane >> 2)] = d[S::D_PER == 4 ? 2 : 0];
  }
}

struct TileArgs {
  int nchunks, ntiles;
  const double *val;
  const int *tcol;
  const double *x;
  double *y;
};
template <class S>
static void launch_tile(void *p) {
  const TileArgs *t = (const TileArgs *)p;
  tile_spmv_kernel<S><<<(t->nchunks + 3) / 4, 128>>>(t->nchunks, t->ntiles, t->val, t->tcol, t->x, t->y);
}

/* H[r][c] = h(r, c), a cheap deterministic pseudo-random value. */
static double h_entry(int r, int c) {
  unsigned u = (unsigned)r * 2654435761u ^ (unsigned)c * 40503u;
  u ^= u >> 13;
  u *= 0x5bd1e995u;
  u ^= u >> 15;
  return (double)(u & 0xffff) / 65536.0 - 0.5;
}

template <class S>
static void measure_tiles(int rows, int cols, const std::vector<double> &ref, const double *dx, const int *dcol, double *dy, double bw,
                          double chain_rate, double lat) {
  const int nchunks = rows / S::M, ntiles = cols / S::K;
  std::vector<double> hv((size_t)rows * cols);
  for (int w = 0; w < nchunks; ++w)
    for (int j = 0; j < ntiles; ++j)
      for (int i = 0; i < S::A_PER; ++i)
        for (int lane = 0; lane < 32; ++lane)
          hv[(((size_t)w * ntiles + j) * S::A_PER + i) * 32 + lane] =
              h_entry(w * S::M + S::a_row(lane, i), j * S::K + S::a_col(lane, i));
  double *dv;
  CK(cudaMalloc(&dv, 8 * hv.size()));
  CK(cudaMemcpy(dv, hv.data(), 8 * hv.size(), cudaMemcpyHostToDevice));
  CK(cudaMemset(dy, 0xff, 8.0 * rows));
  TileArgs ta = {nchunks, ntiles, dv, dcol, dx, dy};
  launch_tile<S>(&ta);
  CK(cudaGetLastError());
  std::vector<double> y(rows);
  CK(cudaMemcpy(y.data(), dy, 8.0 * rows, cudaMemcpyDeviceToHost));
  double dd = 0, rr = 0;
  for (int r = 0; r < rows; ++r) {
    dd += (y[r] - ref[r]) * (y[r] - ref[r]);
    rr += ref[r] * ref[r];
  }
  const double err = std::isnan(dd) ? INFINITY : sqrt(dd / rr);
  const float ms = time_ms(launch_tile<S>, &ta, 10, 51);
  const double us = ms * 1e3, bytes = 8.0 * rows * cols + 8.0 * rows;
  printf("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f | %.3g | %s |\n", S::name(), chain_rate / 1e9,
         2.0 * S::M * 8 * S::K * chain_rate / 1e12, chain_rate * S::M * S::K / 1e12, lat, us, bytes / (us * 1e-6) / 1e9, 100 * bytes / (us * 1e-6) / bw, err,
         err <= 1e-12 ? "ok" : "WRONG");
  CK(cudaFree(dv));
  if (!(err <= 1e-12)) exit(3);
}

/* Device-to-device copy bandwidth (read + write bytes per second) of 1 GiB, median of 11. */
static double copy_bw() {
  const size_t n = (size_t)1 << 30;
  void *a, *b;
  CK(cudaMalloc(&a, n));
  CK(cudaMalloc(&b, n));
  CK(cudaMemset(a, 1, n));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> t(11);
  for (int i = 0; i < 12; ++i) {
    CK(cudaEventRecord(e0));
    CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    if (i) CK(cudaEventElapsedTime(&t[i - 1], e0, e1));
  }
  std::sort(t.begin(), t.end());
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 2.0 * n / (t[5] * 1e-3);
}

int main(int argc, char **argv) {
  const int rows = argc > 2 ? atoi(argv[1]) : 65536, cols = argc > 2 ? atoi(argv[2]) : 256;
  if (rows <= 0 || cols <= 0 || rows % 16 || cols % 128) {
    fprintf(stderr, "usage: matxtract-mma-shapes [ROWS COLS] (ROWS a multiple of 16, COLS of 128)\n");
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    fprintf(stderr, "no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    fprintf(stderr, "needs sm_90 (the m16n8k* FP64 shapes); this GPU is sm_%d%d\n", prop.major, prop.minor);
    return 77;
  }
  const double bw = copy_bw();

  /* x of COLS scattered columns of a 1M-long vector (the hot columns' original indices) */
  const int xlen = 1 << 20;
  std::mt19937 rng(7);
  std::vector<int> colmap(xlen);
  for (int i = 0; i < xlen; ++i) colmap[i] = i;
  std::shuffle(colmap.begin(), colmap.end(), rng);
  colmap.resize(cols);
  std::vector<double> x(xlen);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto &e : x) e = u(rng);
  std::vector<double> ref(rows, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) ref[r] += h_entry(r, c) * x[colmap[c]];
  double *dx, *dy, *sink;
  int *dcol;
  long long *dcycles;
  CK(cudaMalloc(&dcycles, sizeof *dcycles));
  CK(cudaMalloc(&dx, 8.0 * xlen));
  CK(cudaMalloc(&dy, 8.0 * rows));
  CK(cudaMalloc(&dcol, 4.0 * cols));
  CK(cudaMalloc(&sink, 8.0 * 8 * prop.multiProcessorCount * 256));
  CK(cudaMemcpy(dx, x.data(), 8.0 * xlen, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, colmap.data(), 4.0 * cols, cudaMemcpyHostToDevice));

  printf("# %s, %d SMs, D2D copy %.0f GB/s (read+write)\n", prop.name, prop.multiProcessorCount, bw / 1e9);
  printf("# dense-tile SpMV: H %d x %d FP64 (%.0f MB of values), x gathered from %d scattered columns of a 1M vector\n\n",
         rows, cols, 8.0 * rows * cols / 1e6, cols);
  printf("| shape | issue rate (G mma/s) | TFLOP/s (2MNK) | A values/s (T) | latency (cycles) | tile SpMV (us) | "
         "tile SpMV GB/s | %% of copy bw | rel err | check |\n|---|---|---|---|---|---|---|---|---|---|\n");
  ChainResult c;
  c = measure_chains<S884>(prop.multiProcessorCount, sink, dcycles);
  measure_tiles<S884>(rows, cols, ref, dx, dcol, dy, bw, c.mma_per_s, c.latency_cycles);
  c = measure_chains<S1684>(prop.multiProcessorCount, sink, dcycles);
  measure_tiles<S1684>(rows, cols, ref, dx, dcol, dy, bw, c.mma_per_s, c.latency_cycles);
  c = measure_chains<S1688>(prop.multiProcessorCount, sink, dcycles);
  measure_tiles<S1688>(rows, cols, ref, dx, dcol, dy, bw, c.mma_per_s, c.latency_cycles);
  c = measure_chains<S16816>(prop.multiProcessorCount, sink, dcycles);
  measure_tiles<S16816>(rows, cols, ref, dx, dcol, dy, bw, c.mma_per_s, c.latency_cycles);
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dcol));
  CK(cudaFree(sink));
  CK(cudaFree(dcycles));
  return 0;
}

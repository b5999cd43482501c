/* pool_first_use - what a process's first stream-ordered allocation costs on this GPU host, per way
 * of getting a pool (the setup of a one-shot solve pays it: lap3d:100's first GPU build spent 7-11 ms
 * in its first scratch allocation on an H100, MX_TRACE_SETUP). Each way in a fresh process:
 *   created   cudaMemPoolCreate (as src/cuda/mx_scratch_pool.cu), release threshold, first 4-byte
 *             allocation and free, synchronised;
 *   maxsize   the same with cudaMemPoolProps.maxSize = 1 GiB;
 *   default   the device's default pool (cudaDeviceGetDefaultMemPool), threshold, first allocation;
 *   malloc    cudaMalloc + cudaFree of 4 bytes (no pool);
 *   mallocbig cudaMalloc + cudaFree of 32 MiB after a first cudaMalloc (a features scratch's size);
 *   twopools  the default pool's first allocation, 32 MiB from it, then a created pool's first
 *             allocation (is the first use paid once per process or once per pool?);
 *   sizes     cudaMalloc, a memset of its first MiB (waited for) and cudaFree of 0.25-32 MiB after a
 *             first cudaMalloc, the median of 9 each (does a features scratch's cost depend on its size?).
 * Usage: pool_first_use WAY   (prints "WAY: step ms ..."; the context is made before the clock starts)
 * Exit 77 (skipped) when no CUDA device is usable.
 * Built as matxtract-pool-first-use (tuning/bench/CMakeLists.txt), or alone:
 *   nvcc -O2 -I tests/common -o pool_first_use tuning/bench/pool_first_use.cu */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include "cuda_check.h"

static double ms_since(std::chrono::steady_clock::time_point &t) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}

/* a pool made as src/cuda/mx_scratch_pool.cu makes it (capped: at most 1 GiB) */
static cudaMemPool_t created_pool(bool capped) {
  cudaMemPool_t pool;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  if (capped) props.maxSize = (size_t)1 << 30;
  CK(cudaMemPoolCreate(&pool, &props));
  return pool;
}

/* one allocation of bytes from pool and its free, both on s, waited for */
static void alloc_free_sync(cudaMemPool_t pool, size_t bytes, cudaStream_t s) {
  void *p = nullptr;
  CK(cudaMallocFromPoolAsync(&p, bytes, pool, s));
  CK(cudaFreeAsync(p, s));
  CK(cudaStreamSynchronize(s));
}

static double median9(double *v) {
  std::sort(v, v + 9);
  return v[4];
}

/* cudaMalloc, memset of the first MiB on s (waited for), cudaFree: medians of 9 per size */
static void sizes(cudaStream_t s, std::chrono::steady_clock::time_point &t) {
  void *p = nullptr;
  CK(cudaMalloc(&p, 4));
  CK(cudaFree(p));
  for (size_t kib = 256; kib <= (32u << 10); kib *= 2) {
    double a[9], m[9], f[9];
    for (int r = 0; r < 9; ++r) {
      const size_t bytes = kib << 10;
      ms_since(t);
      CK(cudaMalloc(&p, bytes));
      a[r] = ms_since(t);
      CK(cudaMemsetAsync(p, 0, std::min(bytes, (size_t)1 << 20), s));
      CK(cudaStreamSynchronize(s));
      m[r] = ms_since(t);
      CK(cudaFree(p));
      f[r] = ms_since(t);
    }
    printf("sizes: %6zu KiB alloc %.3f ms, memset+sync %.3f ms, free %.3f ms\n", kib, median9(a), median9(m), median9(f));
  }
}

int main(int argc, char **argv) {
  const char *way = argc > 1 ? argv[1] : "created";
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  CK(cudaFree(0)); /* the context, outside the clock */
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto t = std::chrono::steady_clock::now();
  void *p = nullptr;
  if (!strcmp(way, "sizes")) {
    sizes(s, t);
    return 0;
  }
  if (!strcmp(way, "malloc")) {
    CK(cudaMalloc(&p, 4));
    const double a = ms_since(t);
    CK(cudaFree(p));
    printf("%s: alloc %.3f ms, free %.3f ms\n", way, a, ms_since(t));
    return 0;
  }
  if (!strcmp(way, "mallocbig")) { /* a features scratch's size, after the process's first cudaMalloc */
    CK(cudaMalloc(&p, 4));
    CK(cudaFree(p));
    ms_since(t);
    CK(cudaMalloc(&p, 32 << 20));
    const double a = ms_since(t);
    CK(cudaFree(p));
    printf("%s: 32 MiB alloc %.3f ms, free %.3f ms\n", way, a, ms_since(t));
    return 0;
  }
  if (!strcmp(way, "twopools")) { /* is the first use paid per process or per pool? */
    cudaMemPool_t def;
    CK(cudaDeviceGetDefaultMemPool(&def, 0));
    alloc_free_sync(def, 4, s);
    const double d1 = ms_since(t);
    alloc_free_sync(def, 32 << 20, s);
    const double d2 = ms_since(t);
    alloc_free_sync(created_pool(false), 4, s);
    printf("%s: default pool first alloc+free %.3f ms, then 32 MiB %.3f ms; created pool first alloc+free %.3f ms\n", way, d1, d2, ms_since(t));
    return 0;
  }
  cudaMemPool_t pool;
  if (!strcmp(way, "default")) CK(cudaDeviceGetDefaultMemPool(&pool, 0));
  else pool = created_pool(!strcmp(way, "maxsize"));
  const double create = ms_since(t);
  unsigned long long keep = 256ull << 20;
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  const double thr = ms_since(t);
  CK(cudaMallocFromPoolAsync(&p, 4, pool, s));
  const double a1 = ms_since(t);
  CK(cudaFreeAsync(p, s));
  CK(cudaStreamSynchronize(s));
  const double f1 = ms_since(t);
  alloc_free_sync(pool, 64 << 20, s);
  const double a2 = ms_since(t);
  printf("%s: pool %.3f ms, threshold %.3f ms, first alloc %.3f ms, free+sync %.3f ms, 64 MiB alloc+free+sync %.3f ms\n", way, create, thr, a1, f1, a2);
  return 0;
}

/* host_copy_bench.c - what a host copy into fresh memory costs (the MatDuplicate inside MatConvert):
 * one copy of MB megabytes from a resident source into newly allocated memory, with T OpenMP threads,
 * with or without MADV_HUGEPAGE on the destination, in a fresh process (first-touch page faults
 * included, as in a process's first conversion).
 *   host_copy_bench MB THREADS HUGE(0|1)     prints "mb threads huge ms check" (check: 2 when the copy holds
 *                                            the source's bytes)
 * Built as matxtract-host-copy-bench (tuning/bench/CMakeLists.txt), or alone: cc -O2 -fopenmp host_copy_bench.c */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
  if (argc != 4) return fprintf(stderr, "usage: %s MB THREADS HUGE\n", argv[0]), 2;
  size_t bytes = (size_t)atol(argv[1]) << 20;
  int threads = atoi(argv[2]), huge = atoi(argv[3]);
  char *src = malloc(bytes);
  if (!src) return 1;
  memset(src, 1, bytes);
  double t0 = now();
  char *dst = malloc(bytes);
  if (!dst) return 1;
  if (huge) {
    uintptr_t lo = ((uintptr_t)dst + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1), hi = ((uintptr_t)dst + bytes) & ~(uintptr_t)((2u << 20) - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long c = 0; c < 1024; c++) {
    size_t a = bytes * (size_t)c / 1024, b = bytes * (size_t)(c + 1) / 1024;
    memcpy(dst + a, src + a, b - a);
  }
  double t1 = now();
  printf("%zu %d %d %.2f %d\n", bytes >> 20, threads, huge, (t1 - t0) * 1e3, dst[bytes / 2] + dst[bytes - 1]);
  free(dst);
  free(src);
  return 0;
}

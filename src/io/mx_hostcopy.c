/* mx_hostcopy.c - copies of large arrays into memory that nothing has touched yet (a new matrix's
 * arrays), on several threads.
 *
 * Rule: the cost of such a copy is the first touch of the destination's pages (each 4 KiB page
 * faulted and zeroed by the kernel), not the bytes moved; so the destination's whole 2 MiB-aligned
 * interior is advised for transparent huge pages (MADV_HUGEPAGE: a no-op where the kernel has them
 * off) and the pages are touched by the copying threads themselves, each its own contiguous slice.
 * Invariant: the bytes written are exactly the sources' bytes; the advice changes no content. */
#include "io/mx_io_internal.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

#define MX_HUGE_PAGE ((size_t)2 << 20)

static int mx_copy_threads = 0; /* mx_hostcopy_set_threads; 0 = mx_hostcopy_default_threads() */

/* Two cores are left to what runs beside the copy: the GPU warm-up thread (src/cuda/mx_warm.cu) and
 * the CUDA driver's own threads, which contend with a copy on every core (measured:
 * docs/performance.md, "MatConvert's copy"). */
#define MX_HOSTCOPY_CORES_LEFT 2

int mx_hostcopy_default_threads(void)
{
#if defined(_OPENMP)
  int t = omp_get_max_threads() - MX_HOSTCOPY_CORES_LEFT;
  return t < 1 ? 1 : t > MX_HOSTCOPY_MAX_THREADS ? MX_HOSTCOPY_MAX_THREADS : t;
#else
  return 1;
#endif
}

int mx_hostcopy_set_threads(int threads)
{
  if (threads < 0 || threads > MX_HOSTCOPY_MAX_THREADS) return 1;
  mx_copy_threads = threads;
  return 0;
}

int mx_hostcopy_threads(void)
{
#if defined(_OPENMP)
  return mx_copy_threads ? mx_copy_threads : mx_hostcopy_default_threads();
#else
  return 1;
#endif
}

/* advise huge pages on the 2 MiB-aligned interior of [p, p + bytes) */
static void advise_huge(void *p, size_t bytes)
{
#if defined(MADV_HUGEPAGE)
  uintptr_t lo = ((uintptr_t)p + MX_HUGE_PAGE - 1) & ~(uintptr_t)(MX_HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(MX_HUGE_PAGE - 1);
  if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

/* bytes [lo, hi) of the pieces laid end to end */
static void copy_range(const mx_hostcopy_piece *pieces, int npieces, size_t lo, size_t hi)
{
  size_t base = 0;
  for (int p = 0; p < npieces && base < hi; base += pieces[p].bytes, ++p) {
    size_t beg = lo > base ? lo : base, end = hi < base + pieces[p].bytes ? hi : base + pieces[p].bytes;
    if (beg < end) memcpy((char *)pieces[p].dst + (beg - base), (const char *)pieces[p].src + (beg - base), end - beg);
  }
}

void mx_hostcopy(const mx_hostcopy_piece *pieces, int npieces, int threads)
{
  size_t total = 0;
  for (int p = 0; p < npieces; ++p) {
    total += pieces[p].bytes;
    if (pieces[p].bytes >= 2 * MX_HUGE_PAGE) advise_huge(pieces[p].dst, pieces[p].bytes);
  }
  if (threads < 1) threads = 1;
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (int t = 0; t < threads; ++t) copy_range(pieces, npieces, total * (size_t)t / (size_t)threads, total * (size_t)(t + 1) / (size_t)threads);
}

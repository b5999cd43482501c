/* mx_build_check.cu - the GPU builder's column check, in a translation unit of its own: CUDA loads a
 * module's code at its first launch, and this check is the only kernel of the builder that a build
 * without a hot region (the default plan) launches; mx_build.cu's module, with the hot build's CUB
 * sorts, is hundreds of times larger (docs/performance.md, "Setup"). */
#include "mx_device_impl.h"

#define MX_CHECK_THREADS 256

/* bad = 1 if some column index is outside [0, n). */
__global__ void k_check_columns(int64_t nnz, int n, const int *__restrict__ col, int *bad) {
  const int64_t k = (int64_t)blockIdx.x * MX_CHECK_THREADS + threadIdx.x;
  if (k < nnz && (col[k] < 0 || col[k] >= n)) atomicOr(bad, 1);
}

int mx_check_columns_launch(int64_t nnz, int n, const int *col, int *bad) {
  if (nnz > 0) k_check_columns<<<(unsigned)((nnz + MX_CHECK_THREADS - 1) / MX_CHECK_THREADS), MX_CHECK_THREADS>>>(nnz, n, col, bad);
  MX_LAUNCH_CHECK("column check");
  return 0;
}

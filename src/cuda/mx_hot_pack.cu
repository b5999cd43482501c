/* mx_hot_pack.cu - the third cascade on the SE hot region (issue 13: "then the hot region where it
 * pays"): the values of D's SE slots held as ONE value (MX_VAL_DICT0: an unweighted graph's ones) or
 * one value PER COLUMN (MX_VAL_COLCONST: a PageRank transition matrix, a_ij = 1/outdeg(j)), so that
 * the SE kernel reads 4 bytes per slot (its column code) instead of 12.
 *
 * Chosen on the GPU by the bytes a product moves, by the host's rule (mx_hot_values_choose,
 * src/core/mx_hot_pack.h: the host's mx_hot_pack_build decides alike): DICT0 8 bytes in all;
 * COLCONST 24 per column (s_j, and per product x read and xs = s .* x written, then gathered where x
 * was); plain values 8 per slot. Values compare by bit pattern. The SE kernel
 * rounds each product before adding it (no fused multiply-add), so one * x_c == v * x_c and
 * 1.0 * xs_c == round(s_c x_c) == v * x_c: y is bitwise the plain kernel's. COLCONST only while
 * x-hot does not code the cold CSR (the x-hot buffer is then the hot kernel's alone and is gathered
 * from xs). The DU hot mode keeps plain values. Integer atomics only. */
#include <limits.h>
#include "mx_device_impl.h"
#include "mx_hot_pack_dev.h"
#include "mx_scratch.cuh"

#define MX_HPACK_THREADS 256
typedef unsigned long long u64;

static inline int hp_blocks(int64_t n) { return (int)((n + MX_HPACK_THREADS - 1) / MX_HPACK_THREADS); }

/* the column of slot code c: c >= 0 itself, c <= -2 the x-hot column of rank -2-c; -1 (padding) -1 */
__device__ __forceinline__ int hp_column(int c, const int *__restrict__ xhot_col) {
  return c >= 0 ? c : c == -1 ? -1 : xhot_col[-2 - c];
}

/* s[column of slot k] = pattern of se_val[k] (racing writes store the same bits where a column is
 * constant); *first = the smallest slot that holds a nonzero */
__global__ void __launch_bounds__(MX_HPACK_THREADS) mx_hpack_scatter(int n, const int *__restrict__ se_col,
                                                                      const double *__restrict__ se_val,
                                                                      const int *__restrict__ xhot_col, u64 *s, int *first) {
  const int k = blockIdx.x * MX_HPACK_THREADS + threadIdx.x;
  if (k >= n) return;
  const int c = hp_column(se_col[k], xhot_col);
  if (c < 0) return;
  s[c] = (u64)__double_as_longlong(se_val[k]);
  atomicMin(first, k);
}

/* differs[0] = 1 if a slot's pattern is not s[its column] (not column-constant), differs[1] = 1 if
 * it is not the first slot's (two values or more) */
__global__ void __launch_bounds__(MX_HPACK_THREADS) mx_hpack_check(int n, const int *__restrict__ se_col,
                                                                    const double *__restrict__ se_val,
                                                                    const int *__restrict__ xhot_col, const u64 *__restrict__ s,
                                                                    const int *__restrict__ first, int *differs) {
  const int k = blockIdx.x * MX_HPACK_THREADS + threadIdx.x;
  if (k >= n) return;
  const int c = hp_column(se_col[k], xhot_col);
  if (c < 0) return;
  const u64 b = (u64)__double_as_longlong(se_val[k]);
  if (b != s[c]) atomicOr(differs, 1);
  if (b != (u64)__double_as_longlong(se_val[*first])) atomicOr(differs + 1, 1);
}

__global__ void __launch_bounds__(MX_HPACK_THREADS) mx_hpack_scale_x(int n, const double *__restrict__ s, const double *__restrict__ x,
                                                                      double *__restrict__ xs) {
  const int j = blockIdx.x * MX_HPACK_THREADS + threadIdx.x;
  if (j < n) xs[j] = __dmul_rn(s[j], x[j]);
}

static void free_arrays(mx_device *D, mx_hot_pack_dev *H) {
  mx_cuda_free_on(D, &H->s, H->s ? (size_t)D->ncols : 0);
  mx_cuda_free_on(D, &H->xs, H->xs ? (size_t)D->ncols : 0);
  H->enc = MX_VAL_PLAIN;
}

void mx_hot_pack_dev_free(mx_device *D) {
  mx_hot_pack_dev *H = D ? D->hot_pack : nullptr;
  if (!H) return;
  free_arrays(D, H);
  free(H);
  D->hot_pack = nullptr;
}

/* H's value encoding and arrays for D's current se_val (H's arrays are free) */
static int encode(mx_device *D, mx_hot_pack_dev *H) {
  const int n = D->se_nslots;
  H->enc = MX_VAL_PLAIN;
  if (n == 0 || D->ncols == 0) return 0;
  mx_scratch W(0);
  u64 *s;
  int *flags; /* [0] not column-constant, [1] not one value, [2] the first slot with a nonzero */
  if (mx_scratch_alloc(D, W, &s, (size_t)D->ncols, "hot pack: column constants") || mx_scratch_alloc(D, W, &flags, 3, "hot pack: flags"))
    return 1;
  const int init[3] = {0, 0, INT_MAX};
  MX_CUDA_TRY(cudaMemcpyAsync(flags, init, sizeof init, cudaMemcpyHostToDevice, 0));
  MX_CUDA_TRY(cudaMemsetAsync(s, 0, sizeof(u64) * D->ncols, 0));
  mx_hpack_scatter<<<hp_blocks(n), MX_HPACK_THREADS>>>(n, D->se_col, D->se_val, D->xhot_col, s, flags + 2);
  MX_LAUNCH_CHECK("hot pack: column constants");
  int h[3];
  MX_CUDA_TRY(cudaMemcpy(h + 2, flags + 2, sizeof(int), cudaMemcpyDeviceToHost));
  if (h[2] == INT_MAX) return 0; /* no nonzero in the hot region */
  mx_hpack_check<<<hp_blocks(n), MX_HPACK_THREADS>>>(n, D->se_col, D->se_val, D->xhot_col, s, flags + 2, flags);
  MX_LAUNCH_CHECK("hot pack: check");
  MX_CUDA_TRY(cudaMemcpy(h, flags, 2 * sizeof(int), cudaMemcpyDeviceToHost));
  const mx_val_enc e = mx_hot_values_choose(!h[1], !h[0], D->xhot_cold && D->xhot_n > 0, D->ncols, n); /* the host's rule */
  if (e == MX_VAL_DICT0) {
    MX_CUDA_TRY(cudaMemcpy(&H->one, D->se_val + h[2], sizeof(double), cudaMemcpyDeviceToHost));
    H->enc = MX_VAL_DICT0;
    return 0;
  }
  if (e != MX_VAL_COLCONST) return 0;
  if (mx_cuda_alloc_on(D, &H->s, (size_t)D->ncols, "hot pack: column constants") ||
      mx_cuda_alloc_on(D, &H->xs, (size_t)D->ncols, "hot pack: scaled x")) {
    free_arrays(D, H);
    return 1;
  }
  MX_CUDA_TRY(cudaMemcpy(H->s, s, sizeof(double) * D->ncols, cudaMemcpyDeviceToDevice));
  H->enc = MX_VAL_COLCONST;
  return 0;
}

int mx_hot_pack_dev_build(mx_device *D) {
  mx_hot_pack_dev_free(D);
  if (D->mode != MX_HOT_SE) return 0;
  D->hot_pack = (mx_hot_pack_dev *)calloc(1, sizeof *D->hot_pack);
  if (!D->hot_pack) return mx_fail("mx_device_compress: out of host memory");
  if (encode(D, D->hot_pack)) {
    mx_hot_pack_dev_free(D);
    return 1;
  }
  D->hot_pack->prev = D->hot_pack->enc;
  return 0;
}

int mx_hot_pack_dev_refresh(mx_device *D, cudaStream_t s) {
  mx_hot_pack_dev *H = D->hot_pack;
  if (!H) return 0;
  MX_CUDA_TRY(cudaStreamSynchronize(s)); /* se_val was refreshed on s; the checks run on the default stream */
  H->prev = H->enc;
  free_arrays(D, H);
  const int rc = encode(D, H); /* on failure H stays plain: se_val holds the new values */
  H->fell_back = H->prev != MX_VAL_PLAIN && H->enc == MX_VAL_PLAIN;
  return rc;
}

int mx_hot_pack_dev_x(const mx_device *D, const double *x, cudaStream_t s, const double **xh) {
  const mx_hot_pack_dev *H = D->hot_pack;
  *xh = x;
  if (!H || H->enc != MX_VAL_COLCONST) return 0;
  mx_hpack_scale_x<<<hp_blocks(D->ncols), MX_HPACK_THREADS, 0, s>>>(D->ncols, H->s, x, H->xs);
  MX_LAUNCH_CHECK("hot pack: scale x by the column constants");
  *xh = H->xs;
  return 0;
}

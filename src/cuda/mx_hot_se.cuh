/* mx_hot_se.cuh - the SE hot kernel and the split chunks' second pass, templated on the value type V:
 * double for the SpMV (mx_hot.cu), double2 for two columns of the SpMM's pairs (mx_spmm_pair.cu). A
 * double2 product runs every double operation on each component in the same order, so each column
 * is bit for bit the SpMV of that column. ldy: the second column's offset in y (double2 only). */
#ifndef MX_HOT_SE_CUH
#define MX_HOT_SE_CUH

#include "mx_device_impl.h"
#include "mx_hot_pack_dev.h"
#include "mx_kernel_common.cuh"

__device__ __forceinline__ void mx_hot_add(double *y, int row, long long, double v) { y[row] += v; }
__device__ __forceinline__ void mx_hot_add(double *y, int row, long long ldy, double2 v) {
  y[row] += v.x;
  y[row + ldy] += v.y;
}

/* Result of an 8-row chunk: lane 4r holds D[r][0] = sum over its blocks of row r. A whole-chunk
 * item adds into y at hot_row (padding -1 skipped); a piece writes its partial slot instead. */
template <class V>
__device__ __forceinline__ void hot_store(const mx_hot_work &w, int r, V v, const int *__restrict__ hot_row, double *y, long long ldy,
                                          V *__restrict__ partials) {
  if (w.slot >= 0) {
    partials[w.slot * MX_CHUNK_ROWS + r] = v;
  } else {
    const int row = hot_row[w.chunk * MX_CHUNK_ROWS + r];
    if (row >= 0) mx_hot_add(y, row, ldy, v);
  }
}

/* ---- SE: ELL per chunk, slot (k, r) at se_ptr[q] + 8k + r ------------------------------------- */

/* slot k's value under value encoding VE (see mx_hot_se_kernel) */
template <int VE>
__device__ __forceinline__ double se_value(const double *__restrict__ se_val, int k, double one) {
  if (VE == MX_VAL_PLAIN) return mx_ld_stream(se_val + k);
  if (VE == MX_VAL_DICT0) return one;
  return 1.0; /* COLCONST: the column constant is in xs */
}

/* Ownership: warp w processes work item w = slot columns [begin, end) of one chunk; lane l reads
 * slot 8k + l of each group of 4 columns (coalesced), so lane l always meets row l & 7. Lanes of
 * one row are summed by a fixed butterfly (xor 8, 16). Same single-writer rule as DU: no atomics.
 * CUDA cores, not mma: every SE row has its own columns, so there is no shared B operand.
 * XH: x-hot cache mode; padding slots have column -1.
 * VE: how a slot's value is read (mx_hot_pack.cu): MX_VAL_PLAIN se_val; MX_VAL_DICT0 `one`, never
 * loaded; MX_VAL_COLCONST 1.0, x being xs = s .* x. Each product is rounded before it is added
 * (__dmul_rn, __dadd_rn: no fused multiply-add), so the three give the same y bit for bit. */
template <int XH, int VE, class V = double>
__global__ void __launch_bounds__(MX_HOT_WARPS_PER_BLOCK * 32)
mx_hot_se_kernel(int nwork, const mx_hot_work *__restrict__ work, const int *__restrict__ hot_row,
                 const int *__restrict__ se_ptr, const int *__restrict__ se_col,
                 const double *__restrict__ se_val, const double one, const V *__restrict__ x,
                 const V *__restrict__ xhot, double *y, V *__restrict__ partials, long long ldy) {
  const int lane = threadIdx.x & 31;
  const int wid = blockIdx.x * MX_HOT_WARPS_PER_BLOCK + (threadIdx.x >> 5);
  if (wid >= nwork) return;
  const mx_hot_work w = work[wid];
  const int base = se_ptr[w.chunk];
  const int s_end = base + w.end * MX_CHUNK_ROWS;
  V acc0 = mx_zero<V>(), acc1 = mx_zero<V>();
  int s = base + w.begin * MX_CHUNK_ROWS + lane;
  for (; s + 32 < s_end; s += 64) { /* two independent loads in flight */
    const int c0 = mx_ld_stream(se_col + s), c1 = mx_ld_stream(se_col + s + 32);
    const double v0 = se_value<VE>(se_val, s, one), v1 = se_value<VE>(se_val, s + 32, one);
    if (c0 != -1) acc0 = mx_add_rn(acc0, mx_mul_rn(v0, mx_ld_xc<XH>(x, xhot, c0)));
    if (c1 != -1) acc1 = mx_add_rn(acc1, mx_mul_rn(v1, mx_ld_xc<XH>(x, xhot, c1)));
  }
  if (s < s_end) {
    const int c0 = mx_ld_stream(se_col + s);
    if (c0 != -1) acc0 = mx_add_rn(acc0, mx_mul_rn(se_value<VE>(se_val, s, one), mx_ld_xc<XH>(x, xhot, c0)));
  }
  V v = acc0 + acc1;
  v += mx_shfl_xor(v, 8);
  v += mx_shfl_xor(v, 16);
  if (lane < MX_CHUNK_ROWS) hot_store(w, lane, v, hot_row, y, ldy, partials);
}

/* ---- second pass for split chunks --------------------------------------------------------------- */

/* Ownership: thread (s, r) owns row r of split chunk s: sums that chunk's partial slots in piece
 * order and adds into y[hot_row]. The pieces' kernel has finished (same stream): no atomics. */
template <class V = double>
__global__ void __launch_bounds__(256)
mx_hot_split_kernel(int nsplit, const mx_hot_split *__restrict__ split, const int *__restrict__ hot_row,
                    const V *__restrict__ partials, double *y, long long ldy) {
  const int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= nsplit * MX_CHUNK_ROWS) return;
  const mx_hot_split sp = split[i / MX_CHUNK_ROWS];
  const int r = i % MX_CHUNK_ROWS;
  const int row = hot_row[sp.chunk * MX_CHUNK_ROWS + r];
  if (row < 0) return;
  V acc = mx_zero<V>();
  for (int p = 0; p < sp.npieces; ++p) acc += partials[(sp.first_slot + p) * MX_CHUNK_ROWS + r];
  mx_hot_add(y, row, ldy, acc);
}

/* ---- launchers: one for both value types ------------------------------------------------------------ */

/* y += the split chunks' partial sums (hot_nsplit chunks' slots in partials), in piece order */
template <class V>
static int mx_hot_split_run(const mx_device *D, const V *partials, double *y, long long ldy, cudaStream_t s) {
  if (D->hot_nsplit == 0) return 0;
  const int n = D->hot_nsplit * MX_CHUNK_ROWS;
  mx_hot_split_kernel<V><<<(n + 255) / 256, 256, 0, s>>>(D->hot_nsplit, D->hot_split, D->hot_row, partials, y, ldy);
  MX_LAUNCH_CHECK("mx_hot_split_kernel launch");
  return 0;
}

template <int XH, int VE, class V>
static void mx_hot_se_kernel_launch(const mx_device *D, const V *x, const V *xhot, double *y, long long ldy, V *partials, cudaStream_t s) {
  mx_hot_se_kernel<XH, VE, V><<<(D->hot_nwork + MX_HOT_WARPS_PER_BLOCK - 1) / MX_HOT_WARPS_PER_BLOCK, MX_HOT_WARPS_PER_BLOCK * 32, 0, s>>>(
      D->hot_nwork, D->hot_work, D->hot_row, D->se_ptr, D->se_col, D->se_val, D->hot_pack ? D->hot_pack->one : 0.0, x, xhot, y, partials,
      ldy);
}

template <int XH, class V>
static void mx_hot_se_kernel_launch_ve(const mx_device *D, const V *x, const V *xhot, double *y, long long ldy, V *partials, cudaStream_t s) {
  const mx_val_enc ve = D->hot_pack ? D->hot_pack->enc : MX_VAL_PLAIN;
  if (ve == MX_VAL_DICT0) mx_hot_se_kernel_launch<XH, MX_VAL_DICT0>(D, x, xhot, y, ldy, partials, s);
  else if (ve == MX_VAL_COLCONST) mx_hot_se_kernel_launch<XH, MX_VAL_COLCONST>(D, x, xhot, y, ldy, partials, s);
  else mx_hot_se_kernel_launch<XH, MX_VAL_PLAIN>(D, x, xhot, y, ldy, partials, s);
}

/* y += D's SE hot part times x, then the split chunks' second pass: the SpMV (V = double, ldy 0) or
 * a pair of columns (V = double2, the second ldy past the first in y). xhot: x's x-hot values where
 * D's x-hot mode is on; partials: hot_nslots * MX_CHUNK_ROWS values of V. */
template <class V>
static int mx_hot_se_run(const mx_device *D, const V *x, const V *xhot, double *y, long long ldy, V *partials, cudaStream_t s) {
  if (D->hot_nwork == 0) return 0;
  if (D->xhot_mode == MX_XH_ON) mx_hot_se_kernel_launch_ve<MX_XH_ON>(D, x, xhot, y, ldy, partials, s);
  else mx_hot_se_kernel_launch_ve<MX_XH_OFF>(D, x, xhot, y, ldy, partials, s);
  MX_LAUNCH_CHECK("mx_hot_se_kernel launch");
  return mx_hot_split_run(D, partials, y, ldy, s);
}

#endif

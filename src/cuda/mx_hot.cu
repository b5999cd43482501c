/* mx_hot.cu - hot kernels: y[hot_row] += H x, DU on the FP64 tensor cores, SE on CUDA cores. */
#include "mx_device_impl.h"
#include "mx_hot_pack_dev.h"
#include "mx_hot_se.cuh"

/* ---- DU: 8x4 bitmap blocks -> mma.m8n8k4 ------------------------------------------------------ */

/* Fragments of one DU block for this lane. A (8x4, row-major): lane holds A[lane>>2][lane&3],
 * i.e. bitmap bit (lane>>2)*4 + (lane&3) == lane; present -> its value sits at rank popc(lower
 * bits) among the block's packed values, absent -> 0. B (4x8): lane holds B[lane&3][lane>>2] =
 * x[du_col[4*blk + (lane&3)]], the same for every column n (padding column -1 -> 0; column codes
 * <= -2 are x-hot ranks, mx_ld_xc). */
template <int XH>
__device__ __forceinline__ void du_fragments(uint32_t bitmap, int valptr, int colidx, const double *__restrict__ du_val,
                                             const double *__restrict__ x, const double *__restrict__ xhot, int lane,
                                             double &a, double &b) {
  const uint32_t below = bitmap & ((1u << lane) - 1u);
  a = (bitmap >> lane) & 1u ? mx_ld_stream(du_val + valptr + __popc(below)) : 0.0;
  b = colidx != -1 ? mx_ld_xc<XH>(x, xhot, colidx) : 0.0;
}

/* Ownership: warp w processes work item w (all TC blocks of a chunk, or a contiguous piece of a
 * long chunk). Each hot row is in exactly one chunk, and a chunk is either one item (its warp alone
 * adds into y[hot_row]) or split (pieces write private partial slots; mx_hot_split_kernel adds them
 * in piece order afterwards): no atomics. The mma chain runs in block order: reproducible.
 * Metadata (bitmap, value offset) of 32 blocks is loaded coalesced, one block per lane, and
 * broadcast by shuffles; 4 blocks' fragments are loaded before their 4 mma. XH: x-hot cache mode. */
template <int XH>
__global__ void __launch_bounds__(MX_HOT_WARPS_PER_BLOCK * 32, MX_DU_MIN_BLOCKS)
mx_hot_du_kernel(int nwork, const mx_hot_work *__restrict__ work, const int *__restrict__ hot_row,
                 const uint32_t *__restrict__ bitmap, const int *__restrict__ du_col,
                 const int *__restrict__ valptr, const double *__restrict__ du_val,
                 const double *__restrict__ x, const double *__restrict__ xhot, double *y,
                 double *__restrict__ partials) {
  const int lane = threadIdx.x & 31;
  const int wid = blockIdx.x * MX_HOT_WARPS_PER_BLOCK + (threadIdx.x >> 5);
  if (wid >= nwork) return; /* warp-uniform */
  const mx_hot_work w = work[wid];
  double d0 = 0.0, d1 = 0.0;
  for (int base = w.begin; base < w.end; base += 32) {
    const int n = min(32, w.end - base);
    const uint32_t my_bm = lane < n ? mx_ld_stream(bitmap + base + lane) : 0u;
    const int my_vp = lane < n ? mx_ld_stream(valptr + base + lane) : 0;
    const int *cols = du_col + 4 * base + (lane & 3);
    int j = 0;
    for (; j + 4 <= n; j += 4) {
      double a[4], b[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        du_fragments<XH>(__shfl_sync(MX_FULL_MASK, my_bm, j + u), __shfl_sync(MX_FULL_MASK, my_vp, j + u),
                         mx_ld_stream(cols + 4 * (j + u)), du_val, x, xhot, lane, a[u], b[u]);
#pragma unroll
      for (int u = 0; u < 4; ++u) mx_mma_m8n8k4(d0, d1, a[u], b[u]);
    }
    for (; j < n; ++j) {
      double a, b;
      du_fragments<XH>(__shfl_sync(MX_FULL_MASK, my_bm, j), __shfl_sync(MX_FULL_MASK, my_vp, j),
                       mx_ld_stream(cols + 4 * j), du_val, x, xhot, lane, a, b);
      mx_mma_m8n8k4(d0, d1, a, b);
    }
  }
  if ((lane & 3) == 0) hot_store(w, lane >> 2, d0, hot_row, y, 0, partials);
}

/* ---- launchers ----------------------------------------------------------------------------------- */

static int hot_grid(int nwork) { return (nwork + MX_HOT_WARPS_PER_BLOCK - 1) / MX_HOT_WARPS_PER_BLOCK; }

template <int XH>
static void du_kernel_launch(const mx_device *D, const double *x, double *y, cudaStream_t s) {
  mx_hot_du_kernel<XH><<<hot_grid(D->hot_nwork), MX_HOT_WARPS_PER_BLOCK * 32, 0, s>>>(
      D->hot_nwork, D->hot_work, D->hot_row, D->du_bitmap, D->du_col, D->du_valptr, D->du_val, x, D->xhot, y,
      D->hot_partials);
}

int mx_hot_du_launch(const mx_device *D, const double *x, double *y, cudaStream_t s) {
  if (D->hot_nwork == 0) return 0;
  if (D->xhot_mode == MX_XH_ON) du_kernel_launch<MX_XH_ON>(D, x, y, s);
  else du_kernel_launch<MX_XH_OFF>(D, x, y, s);
  MX_LAUNCH_CHECK("mx_hot_du_kernel launch");
  return mx_hot_split_launch(D, y, s);
}

int mx_hot_se_launch(const mx_device *D, const double *x, double *y, cudaStream_t s) {
  return mx_hot_se_run(D, x, (const double *)D->xhot, y, 0, D->hot_partials, s);
}

int mx_hot_split_launch(const mx_device *D, double *y, cudaStream_t s) { return mx_hot_split_run(D, (const double *)D->hot_partials, y, 0, s); }

/* ---- value refresh --------------------------------------------------------------------------------- */

/* Ownership: thread i writes dst[i] only. */
__global__ void __launch_bounds__(MX_GATHER_THREADS)
mx_gather_kernel(double *__restrict__ dst, const int *__restrict__ src, const double *__restrict__ val, int n) {
  const int i = blockIdx.x * MX_GATHER_THREADS + threadIdx.x;
  if (i < n) {
    const int k = src[i];
    dst[i] = k >= 0 ? val[k] : 0.0;
  }
}

int mx_gather_launch(double *dst, const int *src, const double *val, int n, cudaStream_t s) {
  if (n == 0) return 0;
  mx_gather_kernel<<<(n + MX_GATHER_THREADS - 1) / MX_GATHER_THREADS, MX_GATHER_THREADS, 0, s>>>(dst, src, val, n);
  MX_LAUNCH_CHECK("mx_gather_kernel launch");
  return 0;
}

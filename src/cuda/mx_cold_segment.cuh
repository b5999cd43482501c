/* mx_cold_segment.cuh - cold kernel A (paper Alg. 2): y = C x + z over fixed nonzero segments.
 * One kernel template over a decoder (mx_cold_decode.cuh): the plain cold CSR, or its packed form
 * (mx_cold_pack.h, issue 13) decoded in registers; same plan, same products, same summation order,
 * so the packed kernel's y is bitwise the plain one's.
 *
 * The kernel template, instantiated in two translation units: mx_cold_segment.cu (the plain cold CSR,
 * the default plan's product) and mx_cold_segment_pack.cu (every packed encoding). CUDA loads a
 * module's code at its first launch, so the default plan's first product loads the small plain module
 * only (docs/performance.md, "Setup"). */
#ifndef MX_COLD_SEGMENT_CUH
#define MX_COLD_SEGMENT_CUH
#include "mx_cold_decode.cuh"
#include "mx_cold_pack_dev.h"
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"

/* Phase 1: the products of nonzeros [s0, s1) in shared memory, prod[k - s0] = value(k) * x[col(k)]:
 * first the segment [s0, s1_seg) (at most MX_SEG_NNZ), then the short tail [s1_seg, s1) (at most one
 * per thread). Two ways, the same products in the same slots (so the same sums and y, bit for bit):
 *   mx_seg_stage_strided  thread t handles i = j * MX_SEG_THREADS + t (mx_stage_products_dec:
 *                         coalesced scalar loads); the plain kernel's, and the packed one's where
 *                         mx_pack_vec8 says so;
 *   mx_seg_stage_vec8     thread t handles the 8 consecutive i = 8t .. 8t+7 (mx_stage_products_vec8:
 *                         a vector load per array, packed decoders only). */
struct mx_seg_stage_strided {
  template <int XH, class Dec>
  static __device__ __forceinline__ void stage(const Dec &dec, const int *__restrict__ col, const double *__restrict__ val,
                                               const double *__restrict__ x, const double *__restrict__ xhot, int s0,
                                               int s1_seg, int s1, double *prod) {
    mx_stage_products_dec<MX_SEG_THREADS, MX_SEG_PER_THREAD, XH>(dec, col, val, x, xhot, s0, s1_seg, prod); /* Alg. 2 */
    mx_stage_products_dec<MX_SEG_THREADS, 1, XH>(dec, col, val, x, xhot, s1_seg, s1, prod + (s1_seg - s0)); /* short tail */
  }
};
#if MX_SEG_PER_THREAD == 8
struct mx_seg_stage_vec8 {
  template <int XH, class Dec>
  static __device__ __forceinline__ void stage(const Dec &dec, const int *__restrict__ col, const double *__restrict__ val,
                                               const double *__restrict__ x, const double *__restrict__ xhot, int s0,
                                               int s1_seg, int s1, double *prod) {
    mx_stage_products_vec8<XH>(dec, col, val, x, xhot, s0, s1_seg, prod);
    mx_stage_products_dec<MX_SEG_THREADS, 1, XH>(dec, col, val, x, xhot, s1_seg, s1, prod + (s1_seg - s0)); /* short tail */
  }
};
#else /* a tuning build with another segment length (mx_tuning.h): a thread's vector loads need 8 products */
typedef mx_seg_stage_strided mx_seg_stage_vec8;
#endif

/* A row wholly inside a segment longer than max(MX_SEG_LONG_MIN (mx_tuning.h), 4 gk g) is summed by
 * its whole warp (seg_rows_from_shared). */

/* Phase 2: rows [ra, rb) lie wholly inside the segment; their row pointers are in s_rp (s_rp[i] =
 * rowptr[ra+i] - s0). A lane group of g lanes (the largest power of two with gk * g <= the block's
 * mean row length, MX_SEG_GROUP_K in production) sums each row from shared memory, then y[r] =
 * sum + z[r]; a long row (above) is summed by the 32 lanes of its group's warp instead, right after
 * the groups' rows of that round (the warp's long rows one after the other, by a ballot: no block
 * barrier). Every row's order of adds is fixed by its length and g: y is bitwise reproducible.
 * In place (z == y) an empty row is not written: its y is z already (z + 0 would differ only in
 * turning -0 into +0). MPIAIJ's off-diagonal block, y += Ao x_ghost, is mostly such rows, whose
 * z reads and y writes were most of its traffic. */
__device__ __forceinline__ void seg_rows_from_shared(const int *s_rp, int ra, int rb, const double *prod,
                                                     const double *z, double *y, int gk) {
  const int nr = rb - ra;
  if (nr <= 0) return; /* block-uniform */
  const int mean = (s_rp[nr] - s_rp[0]) / nr;
  int g = 1;
  while (g < MX_SEG_MAX_GROUP && gk * g <= mean) g *= 2;
  const int long_len = max(MX_SEG_LONG_MIN, 4 * gk * g);
  const int lane = threadIdx.x & 31, lane_g = threadIdx.x & (g - 1), group = threadIdx.x / g, ngroups = MX_SEG_THREADS / g;
  for (int base = 0; base < nr; base += ngroups) { /* same trip count for every lane */
    const int i = base + group;
    int beg = 0, end = 0; /* past nr: no row, no entries */
    if (i < nr) beg = s_rp[i], end = s_rp[i + 1];
    const bool is_long = end - beg > long_len; /* the group's lanes agree: they see the same row */
    double sum = 0.0;
    if (!is_long)
      for (int k = beg + lane_g; k < end; k += g) sum += prod[k];
    sum = mx_group_sum(sum, g);
    if (i < nr && !is_long && lane_g == 0 && (end > beg || z != y)) y[ra + i] = z ? sum + z[ra + i] : sum;
    for (unsigned longs = __ballot_sync(MX_FULL_MASK, is_long && lane_g == 0); longs; longs &= longs - 1) {
      const int r = __ffs(longs) - 1, ir = __shfl_sync(MX_FULL_MASK, i, r);
      const int br = __shfl_sync(MX_FULL_MASK, beg, r), er = __shfl_sync(MX_FULL_MASK, end, r);
      double lsum = 0.0;
      for (int k = br + lane; k < er; k += 32) lsum += prod[k];
      lsum = mx_group_sum(lsum, 32);
      if (lane == 0) y[ra + ir] = z ? lsum + z[ra + ir] : lsum;
    }
  }
}

/* Phase 3: row r starts in the segment and ends beyond it (only the block's last row can). The
 * whole block sums it: its in-segment part from shared memory, the rest from global memory with
 * four independent accumulators, then a fixed-order block sum. */
template <int XH, class Dec>
__device__ __forceinline__ void seg_crossing_row(const Dec &dec, const int *__restrict__ rowptr, const int *__restrict__ col,
                                                 const double *__restrict__ val, const double *__restrict__ x,
                                                 const double *__restrict__ xhot, int r, int s0, int s1, const double *prod,
                                                 const double *z, double *y,
                                                 double *red) {
  const int beg = dec.row_at(rowptr, r), end = dec.row_at(rowptr, r + 1);
  const int T = MX_SEG_THREADS;
  double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
  for (int k = beg + threadIdx.x; k < s1; k += T) a0 += prod[k - s0];
  int k = s1 + threadIdx.x;
  /* products rounded before the sum (__dmul_rn: no fused multiply-add), as the staged products are:
   * the COLCONST decoder's 1.0 * xs_c is then bitwise val * x_c */
  for (; k + 3 * T < end; k += 4 * T) {
    const int c0 = dec.col_at(col, k), c1 = dec.col_at(col, k, T);
    const int c2 = dec.col_at(col, k, 2 * T), c3 = dec.col_at(col, k, 3 * T);
    const typename Dec::raw_t v0 = dec.raw_at(val, k), v1 = dec.raw_at(val, k, T);
    const typename Dec::raw_t v2 = dec.raw_at(val, k, 2 * T), v3 = dec.raw_at(val, k, 3 * T);
    a0 += __dmul_rn(dec.value(v0, c0), mx_ld_xc<XH>(x, xhot, c0));
    a1 += __dmul_rn(dec.value(v1, c1), mx_ld_xc<XH>(x, xhot, c1));
    a2 += __dmul_rn(dec.value(v2, c2), mx_ld_xc<XH>(x, xhot, c2));
    a3 += __dmul_rn(dec.value(v3, c3), mx_ld_xc<XH>(x, xhot, c3));
  }
  for (; k < end; k += T) { /* value before column: the load order the uncompressed kernel always had */
    const typename Dec::raw_t v = dec.raw_at(val, k);
    const int c = dec.col_at(col, k);
    a0 += __dmul_rn(dec.value(v, c), mx_ld_xc<XH>(x, xhot, c));
  }
  const double s = mx_block_sum((a0 + a1) + (a2 + a3), red);
  if (threadIdx.x == 0) y[r] = z ? s + z[r] : s;
}

/* Ownership: block b multiplies the nonzeros of its segment [seg*SEG, (seg+1)*SEG) (plus the tail of
 * its last row when that tail is at most one product per thread, so the row is summed from shared
 * memory too) and OWNS rows
 * plan[b].x .. plan[b].y-1: rows whose first cold nonzero lies in that segment (empty rows go with
 * the segment holding their rowptr, trailing ones with the last; a segment with very many rows is
 * shared by several blocks, each owning a consecutive part of them). Every row has one owner, which
 * alone writes y[r] (reading past its segment from global memory when the row continues), so no
 * atomics and no inter-block order are needed; each sum is taken in a fixed order, so y is bitwise
 * reproducible. z may alias y: each y[r] is read then written by its owner only.
 * XH: x-hot cache mode (mx_kernel_common.cuh); it changes where x values are read, not the sums.
 * Dec: how nonzero g is read (mx_cold_decode.cuh); it changes the bytes read, not the products.
 * MINB: blocks per SM it is compiled for (the plain CSR: MX_SEG_MIN_BLOCKS; packed: mx_pack_minb).
 * Stg: how the products are staged (phase 1); not which, nor where. */
template <int XH, class Dec, int MINB, class Stg = mx_seg_stage_strided>
__global__ void __launch_bounds__(MX_SEG_THREADS, MINB)
mx_cold_segment_kernel(int cold_nnz, const int *__restrict__ rowptr, const int *__restrict__ col,
                       const double *__restrict__ val, const int4 *__restrict__ plan,
                       const double *__restrict__ x, const double *__restrict__ xhot, const double *z, double *y,
                       const Dec dec, int gk) {
  __shared__ __align__(16) double prod[MX_SEG_NNZ + MX_SEG_THREADS]; /* 16: mx_seg_stage_vec8 stores pairs */
  __shared__ int s_rp[MX_SEG_MAX_ROWS + 1];
  __shared__ double red[MX_SEG_THREADS / 32];
  const int4 p = plan[blockIdx.x];
  const int ra = p.x, rb = p.y;
  const int s0 = p.z * MX_SEG_NNZ;
  const int s1 = p.w; /* segment end, extended over the last row's tail when that is short */
  const int s1_seg = min(s0 + MX_SEG_NNZ, s1);
  /* row t's pointer is loaded before the staging's loads and stored after them, so its latency
   * overlaps theirs instead of coming first (a segment with more rows reads the rest after the
   * staging; a second register for row t + T spills where x-hot is on) */
  const int nr = rb - ra;
  const int rp0 = (int)threadIdx.x <= nr ? dec.row_at(rowptr, ra + threadIdx.x) : 0;
#if MX_SEG_L2_AHEAD > 0 /* tuning A/B (mx_tuning.h): the plan entry MX_SEG_L2_AHEAD on, loaded now, prefetched after the staging */
  const int ahead = blockIdx.x + MX_SEG_L2_AHEAD;
  const int4 pa = ahead < (int)gridDim.x ? plan[ahead] : make_int4(0, 0, 0, 0);
#endif
  Stg::template stage<XH>(dec, col, val, x, xhot, s0, s1_seg, s1, prod);
#if MX_SEG_L2_AHEAD > 0
  if (ahead < (int)gridDim.x) dec.prefetch_l2(rowptr, col, val, pa.z * MX_SEG_NNZ, pa.w, pa.x, pa.y);
#endif
  if ((int)threadIdx.x <= nr) s_rp[threadIdx.x] = rp0 - s0;
  for (int i = threadIdx.x + MX_SEG_THREADS; i <= nr; i += MX_SEG_THREADS) s_rp[i] = dec.row_at(rowptr, ra + i) - s0;
  __syncthreads();
  const bool crossing = rb > ra && s_rp[rb - ra] > s1 - s0;
  seg_rows_from_shared(s_rp, ra, crossing ? rb - 1 : rb, prod, z, y, gk);
  if (crossing) seg_crossing_row<XH>(dec, rowptr, col, val, x, xhot, rb - 1, s0, s1, prod, z, y, red);
}

#endif

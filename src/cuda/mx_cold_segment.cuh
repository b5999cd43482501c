/* mx_cold_segment.cuh - cold kernel A (paper Alg. 2): y = C x + z over fixed nonzero segments.
 * One kernel template over a decoder (mx_cold_decode.cuh): the plain cold CSR, or its packed form
 * (mx_cold_pack.h, issue 13) decoded in registers; same plan, same products, same summation order,
 * so the packed kernel's y is bitwise the plain one's.
 *
 * The kernel template, instantiated in translation units of their own: mx_cold_segment.cu (the plain
 * cold CSR, the default plan's product) and the packed encodings' (mx_cold_segment_pack.cuh). CUDA
 * loads a module's code at its first launch, so the default plan's first product loads the small
 * plain module only, a pack's first product its value encoding's (docs/performance.md, "Setup"). */
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
  template <int XH, class Dec, class V>
  static __device__ __forceinline__ void stage(const Dec &dec, const int *__restrict__ col, const double *__restrict__ val,
                                               const V *__restrict__ x, const V *__restrict__ xhot, int s0,
                                               int s1_seg, int s1, V *prod) {
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

/* Two columns (V = double2, mx_spmm_pair.cu): the kernel stages and sums pairs; y is then C's first
 * column and C's second starts ldy doubles on (z NULL: C = A B). */
__device__ __forceinline__ void seg_store(double *y, const double *z, long long, int r, double s) { y[r] = z ? s + z[r] : s; }
__device__ __forceinline__ void seg_store(double *y, const double *, long long ldy, int r, double2 s) {
  y[r] = s.x;
  y[ldy + r] = s.y;
}

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
template <class V>
__device__ __forceinline__ void seg_rows_from_shared(const int *s_rp, int ra, int rb, const V *prod, const double *z, double *y,
                                                     long long ldy, int gk) {
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
    V sum = mx_zero<V>();
    if (!is_long)
      for (int k = beg + lane_g; k < end; k += g) sum += prod[k];
    sum = mx_group_sum(sum, g);
    if (i < nr && !is_long && lane_g == 0 && (end > beg || z != y)) seg_store(y, z, ldy, ra + i, sum);
    for (unsigned longs = __ballot_sync(MX_FULL_MASK, is_long && lane_g == 0); longs; longs &= longs - 1) {
      const int r = __ffs(longs) - 1, ir = __shfl_sync(MX_FULL_MASK, i, r);
      const int br = __shfl_sync(MX_FULL_MASK, beg, r), er = __shfl_sync(MX_FULL_MASK, end, r);
      V lsum = mx_zero<V>();
      for (int k = br + lane; k < er; k += 32) lsum += prod[k];
      lsum = mx_group_sum(lsum, 32);
      if (lane == 0) seg_store(y, z, ldy, ra + ir, lsum);
    }
  }
}

/* Phase 3: row r starts in the segment and ends beyond it (only the block's last row can). The
 * whole block sums it: its in-segment part from shared memory, the rest from global memory with
 * four independent accumulators, then a fixed-order block sum. */
template <int XH, class Dec, class V>
__device__ __forceinline__ void seg_crossing_row(const Dec &dec, const int *__restrict__ rowptr, const int *__restrict__ col,
                                                 const double *__restrict__ val, const V *__restrict__ x,
                                                 const V *__restrict__ xhot, int r, int s0, int s1, const V *prod,
                                                 const double *z, double *y, long long ldy, V *red) {
  const int beg = dec.row_at(rowptr, r), end = dec.row_at(rowptr, r + 1);
  const int T = MX_SEG_THREADS;
  V a0 = mx_zero<V>(), a1 = mx_zero<V>(), a2 = mx_zero<V>(), a3 = mx_zero<V>();
  for (int k = beg + threadIdx.x; k < s1; k += T) a0 += prod[k - s0];
  int k = s1 + threadIdx.x;
  /* products rounded before the sum (__dmul_rn: no fused multiply-add), as the staged products are:
   * the COLCONST decoder's 1.0 * xs_c is then bitwise val * x_c */
  for (; k < end; k += 4 * T) { /* a thread's last pass may hold 1-3: guarded, every load before the first product */
    const bool h1 = k + T < end, h2 = k + 2 * T < end, h3 = k + 3 * T < end;
    const typename Dec::raw_t v0 = dec.raw_at(val, k); /* value before column: the uncompressed kernel's load order */
    const typename Dec::raw_t v1 = h1 ? dec.raw_at(val, k, T) : (typename Dec::raw_t)0;
    const typename Dec::raw_t v2 = h2 ? dec.raw_at(val, k, 2 * T) : (typename Dec::raw_t)0;
    const typename Dec::raw_t v3 = h3 ? dec.raw_at(val, k, 3 * T) : (typename Dec::raw_t)0;
    const int c0 = dec.col_at(col, k), c1 = h1 ? dec.col_at(col, k, T) : 0;
    const int c2 = h2 ? dec.col_at(col, k, 2 * T) : 0, c3 = h3 ? dec.col_at(col, k, 3 * T) : 0;
    a0 += mx_mul_rn(dec.value(v0, c0), mx_ld_xc<XH>(x, xhot, c0));
    if (h1) a1 += mx_mul_rn(dec.value(v1, c1), mx_ld_xc<XH>(x, xhot, c1));
    if (h2) a2 += mx_mul_rn(dec.value(v2, c2), mx_ld_xc<XH>(x, xhot, c2));
    if (h3) a3 += mx_mul_rn(dec.value(v3, c3), mx_ld_xc<XH>(x, xhot, c3));
  }
  const V s = mx_block_sum((a0 + a1) + (a2 + a3), red);
  if (threadIdx.x == 0) seg_store(y, z, ldy, r, s);
}

/* Long rows in parts. A row is split when it runs more than MX_SEG_SPLIT_TAIL (mx_tuning.h) nonzeros
 * past the end of the segment it starts in (seg_row_split); a crossing row's owner would otherwise
 * read that tail from global memory alone, a chain of dependent loads longer than any other block's
 * work (docs/performance.md, "Cold kernels"). Each segment the row covers sums its own products of
 * the row from shared memory instead:
 *   - the segment the row starts in, and every segment it wholly covers, publishes its sum in
 *     part[seg] (seg_publish_part; a 64-bit slot whose value is the message, mx_kernel_common.cuh);
 *   - the segment holding the row's last nonzero (its finisher) takes each of those slots (polled
 *     until published, then set back to 0) and writes y[r] = ((part[first] + ...) + own) + z[r]
 *     (seg_finish_split_row).
 * A block waits only for blocks of lower segments, which the plan launches before it (the decoupled
 * look-back of single-pass scans relies on the same order). Every sum has a fixed order, so y stays
 * bitwise reproducible; the slots are all 0 again when the launch ends.
 * Invariant: a matrix runs one segment product at a time (its products are ordered on one stream),
 * as its merge kernel's carries already require. */
static_assert(MX_SEG_SPLIT_TAIL >= MX_SEG_THREADS, "a split row's owner never stages past its segment (s1 == s1_seg)");
__device__ __forceinline__ bool seg_row_split(int beg, int end) {
  return (int64_t)end - ((int64_t)beg / MX_SEG_NNZ + 1) * MX_SEG_NNZ > MX_SEG_SPLIT_TAIL;
}

/* row ra - 1 (s_rp[0] + s0 .. s_rp[1] + s0) began before this segment, has products in it, and is split */
__device__ __forceinline__ bool seg_cont_split(const int *s_rp, int s0) {
  return s_rp[0] < 0 && s_rp[1] > 0 && seg_row_split(s_rp[0] + s0, s_rp[1] + s0);
}

/* the block's sum of prod[lo, hi) in a fixed order (in thread 0); every thread calls it */
template <class V>
__device__ __forceinline__ V seg_shared_sum(const V *prod, int lo, int hi, V *red) {
  V a = mx_zero<V>();
  for (int k = lo + (int)threadIdx.x; k < hi; k += MX_SEG_THREADS) a += prod[k];
  __syncthreads(); /* red may still be read by thread 0 of an earlier block sum */
  return mx_block_sum(a, red);
}

/* Slot i of V in part: a double's slot i, a pair's slots 2i and 2i + 1 (mx_device.seg_parts holds
 * two a segment). */
__device__ __forceinline__ void seg_slot_publish(unsigned long long *part, int i, double s) { mx_slot_publish(part + i, s); }
__device__ __forceinline__ void seg_slot_publish(unsigned long long *part, int i, double2 s) {
  mx_slot_publish(part + 2 * i, s.x);
  mx_slot_publish(part + 2 * i + 1, s.y);
}
__device__ __forceinline__ void seg_slot_take(unsigned long long *part, int i, double &s) { s = mx_slot_take(part + i); }
__device__ __forceinline__ void seg_slot_take(unsigned long long *part, int i, double2 &s) {
  s.x = mx_slot_take(part + 2 * i);
  s.y = mx_slot_take(part + 2 * i + 1);
}

/* thread 0: part[seg] = s (mx_slot_publish: the value is the message) */
template <class V>
__device__ __forceinline__ void seg_publish_part(V s, int seg, unsigned long long *part) {
  if (threadIdx.x == 0) seg_slot_publish(part, seg, s);
}

/* Finisher of split row r: parts of segments [first, seg) in order, then own (this segment's sum of
 * the row, in thread 0), then z[r]. Takes the parts in rounds of MX_SEG_THREADS, one slot per
 * thread, through buf (shared, >= MX_SEG_THREADS values, free to overwrite). */
template <class V>
__device__ __forceinline__ void seg_finish_split_row(int r, int first, int seg, V own, unsigned long long *part, const double *z,
                                                     double *y, long long ldy, V *buf) {
  V s = mx_zero<V>();
  for (int base = first; base < seg; base += MX_SEG_THREADS) {
    const int i = base + (int)threadIdx.x;
    __syncthreads(); /* buf: the previous round (or the caller's products) is read */
    if (i < seg) seg_slot_take(part, i, buf[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0)
      for (int t = 0; t < min(MX_SEG_THREADS, seg - base); ++t) s += buf[t];
  }
  if (threadIdx.x == 0) {
    s += own;
    seg_store(y, z, ldy, r, s);
  }
}

/* A block's split-row work, after its own rows (every thread calls it). Not inlined: inlined, it
 * made the packed kernels spill and the plain one slower (docs/performance.md, "Cold kernels").
 * First the part of the split row this segment starts, so that no finisher waits for a block that
 * is itself waiting; then the row running into it: a part where it covers the whole segment, else
 * finished here. s_rp as in the kernel. */
template <class V>
static __device__ __noinline__ void seg_split_rows(const int4 *__restrict__ plan, const int *s_rp, V *prod, V *red,
                                                   unsigned long long *part, const double *z, double *y, long long ldy) {
  const int4 p = plan[blockIdx.x];
  const int nr = p.y - p.x, seg = p.z, s0 = seg * MX_SEG_NNZ, seg_len = min(s0 + MX_SEG_NNZ, p.w) - s0;
  const int *rp = s_rp + 1;
  if (nr > 0 && rp[nr] > seg_len && seg_row_split(rp[nr - 1] + s0, rp[nr] + s0))
    seg_publish_part(seg_shared_sum(prod, rp[nr - 1], seg_len, red), seg, part);
  if (seg_cont_split(s_rp, s0)) {
    const V own = seg_shared_sum(prod, 0, min(rp[0], seg_len), red);
    if (rp[0] > seg_len) seg_publish_part(own, seg, part); /* wholly inside the row: no row starts here */
    else seg_finish_split_row(p.x - 1, (s_rp[0] + s0) / MX_SEG_NNZ, seg, own, part, z, y, ldy, prod);
  }
}

/* Ownership: block b multiplies the nonzeros of its segment [seg*SEG, (seg+1)*SEG) (plus the tail of
 * its last row when that tail is at most one product per thread, so the row is summed from shared
 * memory too) and OWNS rows
 * plan[b].x .. plan[b].y-1: rows whose first cold nonzero lies in that segment (empty rows go with
 * the segment holding their rowptr, trailing ones with the last; a segment with very many rows is
 * shared by several blocks, each owning a consecutive part of them). Every row has one owner, which
 * alone writes y[r] (reading past its segment from global memory when the row continues), so no
 * atomics and no inter-block order are needed; each sum is taken in a fixed order, so y is bitwise
 * reproducible. z may alias y: each y[r] is read then written by its owner only. A long row is
 * the exception: its segments sum it in parts, and the segment holding its end writes y[r] (above).
 * XH: x-hot cache mode (mx_kernel_common.cuh); it changes where x values are read, not the sums.
 * Dec: how nonzero g is read (mx_cold_decode.cuh); it changes the bytes read, not the products.
 * MINB: blocks per SM it is compiled for (the plain CSR: MX_SEG_MIN_BLOCKS; packed: mx_pack_minb).
 * SPLIT: long rows are summed in parts (above). Without it every row is summed by its owner, which is
 * the same y wherever no row is long enough to be split; the launchers take it where the longest
 * cold row is at most MX_SEG_SPLIT_TAIL (mx_device.seg_split), since the split's code slows the
 * kernel down on matrices that never use it (docs/performance.md, "Cold kernels").
 * Stg: how the products are staged (phase 1); not which, nor where.
 * V: double (y = C x + z), or double2 for two columns at once (seg_store: x the two columns as
 * pairs, y = C's first column, ldy the offset of its second, z NULL), each column bitwise the
 * double kernel's y of that column; its staging strided (a pair of products is 16 bytes). */
template <class T> struct mx_seg_named { typedef T type; }; /* V as named by the launch, never deduced */
template <int XH, class Dec, int MINB, bool SPLIT, class Stg = mx_seg_stage_strided, class V = double>
__global__ void __launch_bounds__(MX_SEG_THREADS, MINB)
mx_cold_segment_kernel(int cold_nnz, const int *__restrict__ rowptr, const int *__restrict__ col,
                       const double *__restrict__ val, const int4 *__restrict__ plan,
                       const typename mx_seg_named<V>::type *__restrict__ x, const typename mx_seg_named<V>::type *__restrict__ xhot,
                       const double *z, double *y,
                       const Dec dec, int gk, unsigned long long *part, long long ldy = 0) {
  __shared__ __align__(16) V prod[MX_SEG_NNZ + MX_SEG_THREADS]; /* 16: mx_seg_stage_vec8 stores pairs */
  __shared__ int s_rp[MX_SEG_MAX_ROWS + 2];
  __shared__ V red[MX_SEG_THREADS / 32];
  /* no mx_pdl_trigger: a next kernel launched early is scheduled at this kernel's end, so its blocks
   * never wait beside this one's (mx_device_impl.h, mx_launch_pdl) */
  const int4 p = plan[blockIdx.x];
  const int ra = p.x, rb = p.y;
  const int s0 = p.z * MX_SEG_NNZ;
  const int s1 = p.w; /* segment end, extended over the last row's tail when that is short */
  const int s1_seg = min(s0 + MX_SEG_NNZ, s1);
  /* row t's pointer is loaded before the staging's loads and stored after them, so its latency
   * overlaps theirs instead of coming first (a segment with more rows reads the rest after the
   * staging; a second register for row t + T spills where x-hot is on).
   * s_rp[i] = rowptr[ra - sh + i] - s0 for i = 0 .. nr + sh. With SPLIT (sh = 1) that includes the row
   * before the first owned one, which tells whether a row runs into this segment (s_rp[0] < 0; 0 for
   * row -1, which only the first segment has: ra = 0 means s0 = 0). */
  constexpr int sh = SPLIT ? 1 : 0;
  const int nr = rb - ra;
  const int rp0 = (int)threadIdx.x <= nr + sh && (!SPLIT || ra - 1 + (int)threadIdx.x >= 0) ? dec.row_at(rowptr, ra - sh + threadIdx.x) : 0;
#if MX_SEG_L2_AHEAD > 0 /* tuning A/B (mx_tuning.h): the plan entry MX_SEG_L2_AHEAD on, loaded now, prefetched after the staging */
  const int ahead = blockIdx.x + MX_SEG_L2_AHEAD;
  const int4 pa = ahead < (int)gridDim.x ? plan[ahead] : make_int4(0, 0, 0, 0);
#endif
  mx_pdl_wait(); /* always launched early: x, y and the parts only after the kernel before ends */
  Stg::template stage<XH>(dec, col, val, x, xhot, s0, s1_seg, s1, prod);
#if MX_SEG_L2_AHEAD > 0
  if (ahead < (int)gridDim.x) dec.prefetch_l2(rowptr, col, val, pa.z * MX_SEG_NNZ, pa.w, pa.x, pa.y);
#endif
  if ((int)threadIdx.x <= nr + sh) s_rp[threadIdx.x] = rp0 - s0;
  for (int i = threadIdx.x + MX_SEG_THREADS; i <= nr + sh; i += MX_SEG_THREADS) s_rp[i] = dec.row_at(rowptr, ra - sh + i) - s0;
  __syncthreads();
  const int *rp = s_rp + sh; /* rp[i] = rowptr[ra + i] - s0 */
  const bool crossing = rb > ra && rp[nr] > s1 - s0;
  const bool split_out = SPLIT && crossing && seg_row_split(rp[nr - 1] + s0, rp[nr] + s0); /* then s1 == s1_seg */
  seg_rows_from_shared(rp, ra, crossing ? rb - 1 : rb, prod, z, y, ldy, gk);
  if (crossing && !split_out) seg_crossing_row<XH>(dec, rowptr, col, val, x, xhot, rb - 1, s0, s1, prod, z, y, ldy, red);
  if constexpr (SPLIT)
    if (split_out || seg_cont_split(s_rp, s0)) seg_split_rows(plan, s_rp, prod, red, part, z, y, ldy);
}

#endif

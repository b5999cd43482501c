/* mx_cold_merge.cuh - cold kernel B, merge-path SpMV (Merrill & Garland): the kernel template and its
 * launch, included by the translation units that instantiate it. CUDA loads a module's code, in
 * proportion to its size, at the first launch of any of its kernels: the plain CSR's instantiations
 * sit in mx_cold_merge.cu, the packed forms' in mx_cold_merge_pack.cu, so that a plain merge plan's
 * first product loads a small module (docs/performance.md, "Plan engine costs"). */
#ifndef MX_COLD_MERGE_CUH
#define MX_COLD_MERGE_CUH
#include <limits.h>
#include "mx_cold_decode.cuh"
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"

/* Merge path of A = row end offsets (a[i] = rowptr[r0+1+i], i < a_len) and B = nonzero indices
 * b0, b0+1, ...: the split point on diagonal `diag`, as (rows consumed, nonzeros consumed). A row
 * end is consumed after every nonzero before it. */
__device__ __forceinline__ int2 merge_search(int diag, const int *a, int a_len, int b0, int b_len) {
  int lo = max(diag - b_len, 0), hi = min(diag, a_len);
  while (lo < hi) {
    const int p = (lo + hi) >> 1;
    if (a[p] <= b0 + diag - p - 1) lo = p + 1;
    else hi = p;
  }
  return make_int2(lo, diag - lo);
}

/* The sums the merge kernels carry: one column's double, or two columns' double2 (the SpMM's
 * 2-column panel, mx_spmm_merge.cu); each component is added as the double would be (+ and mx_zero
 * of mx_kernel_common.cuh). */
__device__ __forceinline__ double merge_shfl_up(double v, int off) { return __shfl_up_sync(MX_FULL_MASK, v, off); }
__device__ __forceinline__ double2 merge_shfl_up(double2 v, int off) {
  return make_double2(__shfl_up_sync(MX_FULL_MASK, v.x, off), __shfl_up_sync(MX_FULL_MASK, v.y, off));
}

/* Inclusive segmented scan over the block of (key, val) pairs whose keys never decrease with the
 * thread index: val becomes the sum of val over the preceding threads with the same key and
 * itself. Warp Kogge-Stone steps, then the warps' tails in warp order: fixed addition order. */
template <class T>
__device__ __forceinline__ T block_segmented_scan(int key, T val, int *s_wkey_last, int *s_wkey_first, T *s_wval) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int k2 = __shfl_up_sync(MX_FULL_MASK, key, off);
    const T v2 = merge_shfl_up(val, off);
    if (lane >= off && k2 == key) val = v2 + val;
  }
  if (lane == 31) { s_wkey_last[warp] = key; s_wval[warp] = val; }
  if (lane == 0) s_wkey_first[warp] = key;
  __syncthreads();
  if (key == s_wkey_first[warp]) { /* my segment reaches back to the start of my warp */
    T acc = mx_zero<T>();
    for (int w = warp - 1; w >= 0 && s_wkey_last[w] == key; --w) {
      acc = s_wval[w] + acc;
      if (s_wkey_first[w] != key) break;
    }
    val = acc + val;
  }
  return val;
}

template <class T>
struct merge_state {
  int r; /* tile-local rows consumed */
  T run; /* running sum of the row in progress */
};

/* Walk this thread's ITEMS merge items from (r, n): a nonzero adds its product, a row end emits
 * the running sum (when EMIT: s_sum[r] = it) and restarts it. Returns where it stopped and the open
 * sum. */
template <bool EMIT, class T>
__device__ __forceinline__ merge_state<T> merge_consume(int r, int n, int tile_items, int n0, T run, const int *s_rowend,
                                                        const T *s_prod, T *s_sum) {
#pragma unroll
  for (int it = 0; it < MX_MERGE_ITEMS; ++it) {
    if (r + n < tile_items) {
      if (n0 + n < s_rowend[r]) {
        run = run + s_prod[n];
        ++n;
      } else {
        if (EMIT) s_sum[r] = run;
        run = mx_zero<T>();
        ++r;
      }
    }
  }
  return merge_state<T>{r, run};
}

/* The tile's products into shared memory: the plain CSR as it always was (mx_stage_products_aligned),
 * or the packed form through its decoder (x-hot off: packing is off while x-hot codes the cold CSR).
 * Either way prod[g - s0] = val[g] * x[col[g]], bit for bit. */
template <int THREADS, int PER, int XH>
__device__ __forceinline__ void merge_stage(const mx_dec_plain &, const int *__restrict__ col, const double *__restrict__ val,
                                            const double *__restrict__ x, const double *__restrict__ xhot, int s0, int s1,
                                            double *prod) {
  mx_stage_products_aligned<THREADS, PER, XH>(col, val, x, xhot, s0, s1, prod);
}
template <int THREADS, int PER, int XH, int VE, int IE>
__device__ __forceinline__ void merge_stage(const mx_dec_pack<VE, IE> &dec, const int *__restrict__ col,
                                            const double *__restrict__ val, const double *__restrict__ x,
                                            const double *__restrict__, int s0, int s1, double *prod) {
  mx_stage_products_aligned_dec<THREADS, PER>(dec, col, val, x, s0, s1, prod);
}

/* Carries in the kernel (D->carry_slot, a merge grid of at most MX_MERGE_INLINE_WAVES waves; else
 * the fixup kernel below). Tile t's carry, the sum of its products for the row open at its end
 * (coord[t + 1].x, the next tile's first row), travels in carry_slot[t] (mx_slot_publish: the value
 * is the message). The tile's last thread publishes it as soon as the scan gives it, before the
 * tile waits for anything; every tile but the last publishes. */
__device__ __forceinline__ void merge_publish_carry(double incl, unsigned long long *carry_slot) {
  if (threadIdx.x != MX_MERGE_THREADS - 1 || blockIdx.x + 1 == gridDim.x) return;
  mx_slot_publish(carry_slot + blockIdx.x, incl);
}

/* Warp 0 of tile b (b > 0, with a row end): the total of the carries into its first row r0, from the
 * run of tiles h .. b-1 whose open row is r0 (tile u-1 carries into r0 while coord[u].x == r0), in
 * the fixup kernel's order: a run of one tile is 0.0 + its carry (lane 0; seen: lane 0's early load
 * of the slot); a longer run's head is found 32 tiles a step back, then lane l adds tiles h+l,
 * h+l+32, ... in tile order and the fixed butterfly adds the 32 lane sums. Only tiles of lower index
 * are waited for, and the launch starts those first (the segment kernel's split rows rely on the
 * same order). */
__device__ __forceinline__ double merge_run_total(int r0, bool alone, unsigned long long seen, const int2 *__restrict__ coord,
                                                  unsigned long long *carry_slot) {
  const int b = blockIdx.x, lane = threadIdx.x & 31;
  if (alone) return lane == 0 ? __dadd_rn(0.0, mx_slot_wait(carry_slot + b - 1, seen)) : 0.0;
  int h = 0; /* no stop down to tile 1: the run starts at tile 0 */
  for (int base = b - 2; base > 0; base -= 32) { /* tile b-2 carries into r0 (not alone) */
    const int u = base - lane;
    const unsigned stop = __ballot_sync(MX_FULL_MASK, u <= 0 || __ldg(&coord[u].x) != r0);
    if (stop) {
      h = base - (__ffs(stop) - 1);
      break;
    }
  }
  double acc = 0.0;
  for (int u = h + lane; u < b; u += 32) acc += mx_slot_take(carry_slot + u);
  return mx_group_sum(acc, 32);
}

/* Ownership: tile t (one block) consumes merge items [t*TILE, (t+1)*TILE) of the merge of row ends
 * and nonzeros; thread i of the tile consumes ITEMS consecutive ones. The thread that consumes the
 * END of row r computes y[r], once: its sum = carry-in from the preceding threads of the tile (a
 * fixed-order segmented scan) + its own products; the block stores it (+ z[r]) in row order. What a
 * tile accumulates for the row still open at its end is its carry: with INL (carry_slot) the
 * tile that ends that row adds the carries into it (merge_run_total) before it stores the row; else
 * they go to carry_row/val[t] and mx_merge_fixup adds them, in tile order, after this kernel. Both
 * give y[r] = (sum (+ z)) + total, the same bits. Every y[r] has one writer per kernel, so no atomics;
 * every sum has a fixed order.
 * INL is a template parameter so that the fixup instantiations are the kernel they were before.
 * Invariant (INL): a matrix runs one merge product at a time (its products are ordered on one
 * stream): the slots are the matrix's, and every one is 0 again when a launch ends.
 * XH: x-hot cache mode (mx_kernel_common.cuh); it changes where x values are read, not the sums.
 * Dec: mx_dec_plain (the plain CSR) or a packed form's decoder (merge_stage); the products, hence
 * every sum, are the same bits. */
template <int XH, class Dec, bool INL>
__global__ void __launch_bounds__(MX_MERGE_THREADS, MX_MERGE_MIN_BLOCKS)
mx_cold_merge_kernel(const int *__restrict__ rowptr, const int *__restrict__ col, const double *__restrict__ val,
                     const int2 *__restrict__ coord, const double *__restrict__ x, const double *__restrict__ xhot,
                     const double *z, double *y, int *__restrict__ carry_row, double *__restrict__ carry_val,
                     unsigned long long *carry_slot, const Dec dec) {
  __shared__ double s_prod[MX_MERGE_TILE];
  __shared__ int s_rowend[MX_MERGE_TILE + 1];
  __shared__ int s_wkey_last[MX_MERGE_THREADS / 32], s_wkey_first[MX_MERGE_THREADS / 32];
  __shared__ double s_wval[MX_MERGE_THREADS / 32];
  __shared__ double s_incl[MX_MERGE_THREADS];

  mx_pdl_trigger(); /* the fixup, or a hub kernel, may be scheduled: each waits for this kernel's end */
  const int2 c0 = coord[blockIdx.x], c1 = coord[blockIdx.x + 1];
  const int r0 = c0.x, n0 = c0.y, tile_rows = c1.x - r0, tile_nnz = c1.y - n0;
  const int tile_items = tile_rows + tile_nnz;
  mx_pdl_wait(); /* launched early (INL): x, y and the carries only after the kernel before ends */
  /* carries in the kernel: row r0 has carries (tile b-1's at least) and ends here */
  const bool first = INL && blockIdx.x > 0 && tile_rows > 0;

  /* stage the tile: coalesced products and row ends */
  /* aligned warp loads (measured faster on power-law and random graphs: docs/performance.md, "Cold
   * kernels") */
  merge_stage<MX_MERGE_THREADS, MX_MERGE_ITEMS, XH>(dec, col, val, x, xhot, n0, n0 + tile_nnz, s_prod);
  for (int i = threadIdx.x; i < tile_rows; i += MX_MERGE_THREADS) s_rowend[i] = dec.row_at(rowptr, r0 + 1 + i);
  if (threadIdx.x == 0) s_rowend[tile_rows] = INT_MAX; /* past the tile's last row end: nonzeros only */
  __syncthreads();
  /* lane 0's early loads, answered while the tile is summed: whether tile b-1 alone carries into r0,
   * and its slot (0 if not yet published: then polled at the end) */
  bool alone = true;
  unsigned long long seen = 0;
  if (first && threadIdx.x == 0) {
    alone = blockIdx.x == 1 || __ldg(&coord[blockIdx.x - 1].x) != r0;
    seen = mx_slot_load(carry_slot + blockIdx.x - 1);
  }

  const int diag = min((int)threadIdx.x * MX_MERGE_ITEMS, tile_items);
  const int2 start = merge_search(diag, s_rowend, tile_rows, n0, tile_nnz);
  const merge_state<double> part = merge_consume<false>(start.x, start.y, tile_items, n0, 0.0, s_rowend, s_prod, (double *)nullptr);
  const int key = r0 + part.r;
  const double incl = block_segmented_scan(key, part.run, s_wkey_last, s_wkey_first, s_wval);
  if (INL) merge_publish_carry(incl, carry_slot); /* the last thread's: the tile's carry */
  s_incl[threadIdx.x] = incl;
  __syncthreads();
  /* the previous thread's inclusive sum belongs to the row this thread starts in */
  const double carry_in = threadIdx.x > 0 ? s_incl[threadIdx.x - 1] : 0.0;
  /* The tile's row sums go to s_prod past its products (tile_rows + tile_nnz = tile_items <= TILE:
   * no product is overwritten), then the block stores them (+ z) in row order: coalesced stores and z
   * loads, where a store per row end by its thread hit up to 32 rows per warp instruction (MatMultAdd's
   * z cost less than half of before: docs/performance.md, "Cold kernels"). */
  double *s_sum = s_prod + tile_nnz;
  merge_consume<true>(start.x, start.y, tile_items, n0, carry_in, s_rowend, s_prod, s_sum);
  __syncthreads();
  const int skip = first ? 1 : 0; /* row r0: warp 0, with the carries */
  for (int i = threadIdx.x + skip; i < tile_rows; i += MX_MERGE_THREADS) y[r0 + i] = z ? s_sum[i] + z[r0 + i] : s_sum[i];
  if (first && threadIdx.x < 32) {
    alone = __shfl_sync(MX_FULL_MASK, alone, 0);
    const double total = merge_run_total(r0, alone, seen, coord, carry_slot);
    if (threadIdx.x == 0) y[r0] = (z ? s_sum[0] + z[r0] : s_sum[0]) + total;
  } else if (!INL && threadIdx.x == MX_MERGE_THREADS - 1) {
    carry_row[blockIdx.x] = key;
    carry_val[blockIdx.x] = incl;
  }
}

template <int XH, class Dec, bool INL>
static int merge_kernel_launch_as(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s,
                                  const Dec &dec) {
  static bool carveout = false;
  if (mx_cold_carveout_once(mx_cold_merge_kernel<XH, Dec, INL>, MX_COLD_MERGE, &carveout)) return 1;
  MX_CUDA_TRY(mx_launch_pdl(INL, mx_cold_merge_kernel<XH, Dec, INL>, dim3(D->merge_ntiles), dim3(MX_MERGE_THREADS), 0, s,
                            D->cold_rowptr, D->cold_col, D->cold_val, D->merge_coord, x, D->xhot, z, y, D->carry_row,
                            D->carry_val, D->carry_slot, dec));
  return 0;
}

/* the instantiation of D's carries: in the kernel where the plan holds carry slots */
template <int XH, class Dec>
static int merge_kernel_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s,
                                const Dec &dec) {
  return D->carry_slot ? merge_kernel_launch_as<XH, Dec, true>(D, x, z, y, s, dec) : merge_kernel_launch_as<XH, Dec, false>(D, x, z, y, s, dec);
}

#endif

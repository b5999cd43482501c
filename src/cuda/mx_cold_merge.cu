/* mx_cold_merge.cu - cold kernel B: merge-path SpMV (Merrill & Garland), y = C x + z, no atomics
 * (the kernel: mx_cold_merge.cuh). This module holds the plain CSR's instantiations, the fixup
 * kernel and the plans' carries; on a packed cold region the kernel reads the pack
 * (mx_cold_merge_pack.cu; mx_cold_pack_set_merge(0) makes it read the plain arrays: tuning A/B and
 * tests; the PETSc layer's pack guard keeps plain where the pack is slower). */
#include "mx_cold_merge.cuh"
#include "mx_cold_pack_dev.h"

/* Ownership: only the first tile of a run of tiles carrying into the same row acts. A run's total:
 * lane l sums the carries of tiles h+l, h+l+32, ... of the run (h its head) in tile order, a fixed
 * butterfly adds the 32 lane sums, and y[row] (written by the merge kernel, which has finished) +=
 * the total. Carry rows never decrease with the tile, so a run is contiguous and its length, hence
 * the addition order, depends on the matrix structure only. One writer per row: no atomics, bitwise
 * reproducible. A thread per tile: a run of one tile (most: a row across one tile boundary) adds
 * 0.0 + c, the butterfly's total of c and 31 zeros, by itself; the warp's longer runs, one after
 * another, are summed by the whole warp. (One thread per run, serially, was slow where a row spans
 * ~100 tiles: docs/performance.md, "Cold kernels".) The fixup is launched early (mx_launch_pdl: it
 * is scheduled while the kernel before it runs) and waits for that kernel's end before it reads. */
__device__ __forceinline__ void merge_run_sum(int h, int row, int lane, int ntiles, const int *__restrict__ carry_row,
                                              const double *__restrict__ carry_val, double *y) {
  double acc = 0.0;
  for (int base = h;; base += 32) {
    const int u = base + lane;
    const bool in_run = u < ntiles && carry_row[u] == row;
    if (in_run) acc += carry_val[u];
    if (!__all_sync(MX_FULL_MASK, in_run)) break;
  }
  acc = mx_group_sum(acc, 32);
  if (lane == 0) y[row] += acc;
}

__global__ void __launch_bounds__(MX_FIXUP_THREADS)
mx_merge_fixup_kernel(int ntiles, int nrows, const int *__restrict__ carry_row,
                      const double *__restrict__ carry_val, double *y) {
  mx_pdl_trigger();
  mx_pdl_wait();
  const int lane = threadIdx.x & 31;
  const int t = blockIdx.x * MX_FIXUP_THREADS + threadIdx.x;
  const int row = t < ntiles ? carry_row[t] : INT_MAX;
  const bool head = row < nrows && (t == 0 || carry_row[t - 1] != row);
  const bool alone = head && (t + 1 == ntiles || carry_row[t + 1] != row);
  if (alone) y[row] += __dadd_rn(0.0, carry_val[t]);
  for (unsigned runs = __ballot_sync(MX_FULL_MASK, head && !alone); runs; runs &= runs - 1) {
    const int src = __ffs(runs) - 1;
    merge_run_sum(t - lane + src, __shfl_sync(MX_FULL_MASK, row, src), lane, ntiles, carry_row, carry_val, y);
  }
}

static bool g_pack_merge = true;
extern "C" int mx_cold_pack_set_merge(int on) {
  const int old = g_pack_merge;
  g_pack_merge = on != 0;
  return old;
}
bool mx_cold_pack_merge_on(void) { return g_pack_merge; }

int mx_cold_merge_set_carveout(int percent) {
  MX_CUDA_TRY(cudaFuncSetAttribute(mx_cold_merge_kernel<MX_XH_ON, mx_dec_plain, false>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   percent));
  MX_CUDA_TRY(cudaFuncSetAttribute(mx_cold_merge_kernel<MX_XH_ON, mx_dec_plain, true>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   percent));
  return 0;
}

int mx_cold_merge_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  if (D->nrows == 0) return 0;
  if (D->pack_released && !g_pack_merge) return mx_fail("mx_cold_merge_launch: the plain cold arrays are released and the merge kernel is switched off the pack");
  if (g_pack_merge && mx_cold_pack_dev_active(D)) {
    if (mx_cold_merge_packed_launch(D, x, z, y, s)) return 1;
  } else if (D->xhot_mode == MX_XH_ON && D->xhot_cold) {
    if (merge_kernel_launch<MX_XH_ON>(D, x, z, y, s, mx_dec_plain())) return 1;
  } else if (merge_kernel_launch<MX_XH_OFF>(D, x, z, y, s, mx_dec_plain())) return 1;
  MX_LAUNCH_CHECK("mx_cold_merge_kernel launch");
  if (!D->carry_slot) return mx_merge_fixup_launch(D->merge_ntiles, D->nrows, D->carry_row, D->carry_val, y, s);
  return 0;
}

int mx_merge_fixup_launch(int ntiles, int nrows, const int *carry_row, const double *carry_val, double *y, cudaStream_t s) {
  if (ntiles <= 1) return 0;
  const int nb = (ntiles + MX_FIXUP_THREADS - 1) / MX_FIXUP_THREADS;
  MX_CUDA_TRY(mx_launch_pdl(true, mx_merge_fixup_kernel, dim3(nb), dim3(MX_FIXUP_THREADS), 0, s, ntiles, nrows,
                            carry_row, carry_val, y));
  return 0;
}

static int g_merge_inline = -1;
extern "C" int mx_cold_merge_set_inline(int mode) {
  const int old = g_merge_inline;
  g_merge_inline = mode < 0 ? -1 : mode != 0;
  return old;
}

/* *small = whether ntiles tiles are at most MX_MERGE_INLINE_WAVES waves of MX_MERGE_MIN_BLOCKS per SM */
static int merge_tiles_small(int64_t ntiles, bool *small) {
  int nsm = 0;
  if (mx_sm_count(&nsm)) return 1;
  *small = ntiles <= (int64_t)MX_MERGE_INLINE_WAVES * MX_MERGE_MIN_BLOCKS * nsm;
  return 0;
}

int mx_merge_grid_small(int64_t items, bool *small) { return merge_tiles_small((items + MX_MERGE_TILE - 1) / MX_MERGE_TILE, small); }

/* Carries in the kernel on a small grid (no fixup launch; on larger grids the in-kernel run totals
 * cost more than that launch saves: docs/performance.md, "Cold kernels"), or as
 * mx_cold_merge_set_inline forces. */
static int merge_inline_wanted(int ntiles, bool *inl) {
  if (g_merge_inline >= 0) {
    *inl = g_merge_inline == 1;
    return 0;
  }
  return merge_tiles_small(ntiles, inl);
}

int mx_merge_carries_alloc(mx_device *D, int ntiles) {
  bool inl = false;
  if (merge_inline_wanted(ntiles, &inl)) return 1;
  if (!inl)
    return mx_cuda_alloc_on(D, &D->carry_row, (size_t)ntiles, "alloc merge carry rows") ||
           mx_cuda_alloc_on(D, &D->carry_val, (size_t)ntiles, "alloc merge carry values");
  return mx_slots_alloc_on(D, &D->carry_slot, (size_t)ntiles, "merge carry slots");
}

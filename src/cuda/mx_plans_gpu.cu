/* mx_plans_gpu.cu - the launch plans of the cold and hot kernels and the cold-kernel rule's row
 * statistics, made on the GPU from D's own cold_rowptr and chunk pointers (du_chunkptr / se_ptr): the
 * GPU builder's and mx_device_set_cold_kernel's, so that nothing of the matrix comes back to the host
 * (the host planners and their copies cost a large build tens of ms: docs/performance.md, "Behind
 * the source's constants").
 *
 * Each plan equals its host planner in mx_device.cu (plan_segments, plan_merge, plan_hot: the oracle,
 * still used by mx_device_upload of a host format) entry for entry; tests/cuda/test_cuda_build.cu
 * compares them. A plan is a per-item entry count, an exclusive scan (CUB) and a kernel that writes
 * each item's entries from its offset: deterministic, no atomics. Synchronous (counts come back). */
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include "mx_device_impl.h"
#include "mx_scratch.cuh"

#define MX_PLAN_THREADS 256

static inline int plan_blocks(int64_t n) { return (int)((n + MX_PLAN_THREADS - 1) / MX_PLAN_THREADS); }

typedef thrust::counting_iterator<int> count_it;

/* ---- segment plan ---------------------------------------------------------------------------------------- */

/* rs[b] = first row r < nrows with rowptr[r] >= b * MX_SEG_NNZ (nrows if none), b < nseg; rs[nseg] = nrows */
__global__ void k_segment_rows(int nseg, int nrows, const int *rowptr, int *rs) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > nseg) return;
  if (b == nseg) {
    rs[b] = nrows;
    return;
  }
  const int64_t s0 = (int64_t)b * MX_SEG_NNZ;
  int lo = 0, hi = nrows;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (rowptr[mid] < s0) lo = mid + 1;
    else hi = mid;
  }
  rs[b] = lo;
}

/* blocks of segment b: its rows in shares of MX_SEG_MAX_ROWS, at least one block (0 past the end) */
struct segment_blocks_of {
  int nseg;
  const int *rs;
  __device__ int operator()(int b) const {
    if (b >= nseg) return 0;
    const int n = rs[b + 1] - rs[b];
    return n > 0 ? (n + MX_SEG_MAX_ROWS - 1) / MX_SEG_MAX_ROWS : 1;
  }
};

/* segment b's entries from plan[off[b]]: (first row, end row, segment, end of the staged range) */
__global__ void k_segment_plan(int nseg, int64_t cold_nnz, const int *rowptr, const int *rs, const int *off, int4 *plan) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nseg) return;
  const int s1 = (int)min((int64_t)(b + 1) * MX_SEG_NNZ, cold_nnz);
  int ra = rs[b], k = off[b];
  do {
    const int rb = min(rs[b + 1], ra + MX_SEG_MAX_ROWS);
    const int end = rb > ra ? rowptr[rb] : s1; /* end of the last owned row */
    const int s1_ext = end > s1 && end - s1 <= MX_SEG_THREADS ? end : s1;
    plan[k++] = make_int4(ra, rb, b, s1_ext);
    ra = rb;
  } while (ra < rs[b + 1]);
}

int mx_plan_segments_dev(mx_device *D) {
  mx_scratch W;
  const int nseg = D->cold_nnz > 0 ? (int)((D->cold_nnz + MX_SEG_NNZ - 1) / MX_SEG_NNZ) : 1;
  int *rs, *off;
  if (mx_scratch_alloc(D, W, &rs, (size_t)nseg + 1, "alloc segment rows") ||
      mx_scratch_alloc(D, W, &off, (size_t)nseg + 1, "alloc segment offsets"))
    return 1;
  k_segment_rows<<<plan_blocks(nseg + 1), MX_PLAN_THREADS>>>(nseg, D->nrows, D->cold_rowptr, rs);
  MX_LAUNCH_CHECK("segment rows");
  auto counts = thrust::make_transform_iterator(count_it(0), segment_blocks_of{nseg, rs});
  if (mx_cub_run(D, W, "scan segment blocks", [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, counts, off, nseg + 1); }))
    return 1;
  int nblocks = 0;
  MX_CUDA_TRY(cudaMemcpy(&nblocks, off + nseg, sizeof(int), cudaMemcpyDeviceToHost));
  if (mx_cuda_alloc_on(D, &D->seg_plan, (size_t)nblocks, "alloc segment plan")) return 1;
  D->seg_nblocks = nblocks;
  k_segment_plan<<<plan_blocks(nseg), MX_PLAN_THREADS>>>(nseg, D->cold_nnz, D->cold_rowptr, rs, off, D->seg_plan);
  MX_LAUNCH_CHECK("segment plan");
  return mx_cuda_check(cudaDeviceSynchronize(), "segment plan");
}

/* ---- merge plan ------------------------------------------------------------------------------------------ */

/* c[t] = the merge-path coordinate (rows, nonzeros) at diagonal min(t * MX_MERGE_TILE, items), t <= nt */
__global__ void k_merge_plan(int nt, int nrows, int64_t cold_nnz, const int *rowptr, int2 *c) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t > nt) return;
  const int64_t items = (int64_t)nrows + cold_nnz;
  const int64_t diag = min((int64_t)t * MX_MERGE_TILE, items);
  const int *a = rowptr + 1; /* row end offsets */
  int64_t lo = max(diag - cold_nnz, (int64_t)0), hi = min(diag, (int64_t)nrows);
  while (lo < hi) {
    const int64_t p = (lo + hi) / 2;
    if (a[p] <= diag - p - 1) lo = p + 1;
    else hi = p;
  }
  c[t] = make_int2((int)lo, (int)(diag - lo));
}

int mx_plan_merge_dev(mx_device *D) {
  const int64_t items = (int64_t)D->nrows + D->cold_nnz;
  const int nt = (int)((items + MX_MERGE_TILE - 1) / MX_MERGE_TILE);
  if (mx_cuda_alloc_on(D, &D->merge_coord, (size_t)nt + 1, "alloc merge plan") || mx_merge_carries_alloc(D, nt)) return 1;
  D->merge_ntiles = nt;
  k_merge_plan<<<plan_blocks(nt + 1), MX_PLAN_THREADS>>>(nt, D->nrows, D->cold_nnz, D->cold_rowptr, D->merge_coord);
  MX_LAUNCH_CHECK("merge plan");
  return mx_cuda_check(cudaDeviceSynchronize(), "merge plan");
}

/* ---- hot plan -------------------------------------------------------------------------------------------- */

/* Per chunk: (work items, split entries, partial slots); a chunk of len <= piece units is one item
 * and no split, a longer one ceil(len / piece) items, one split and as many slots. Zero past the end. */
struct hot_counts_of {
  int nchunks, unit_div, piece;
  const int *chunkptr;
  __device__ int4 operator()(int q) const {
    if (q >= nchunks) return make_int4(0, 0, 0, 0);
    const int len = (chunkptr[q + 1] - chunkptr[q]) / unit_div;
    if (len <= piece) return make_int4(1, 0, 0, 0);
    const int np = (len + piece - 1) / piece;
    return make_int4(np, 1, np, 0);
  }
};

struct add_int4 {
  __device__ int4 operator()(const int4 &a, const int4 &b) const { return make_int4(a.x + b.x, a.y + b.y, a.z + b.z, 0); }
};

/* chunk q's work items from work[off[q].x], its split entry at split[off[q].y], slots from off[q].z.
 * DU (unit_div 1): begin/end are absolute TC block indices; SE: slot columns relative to the chunk. */
__global__ void k_hot_plan(int nchunks, int unit_div, int piece, const int *chunkptr, const int4 *off, mx_hot_work *work,
                           mx_hot_split *split) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= nchunks) return;
  const int len = (chunkptr[q + 1] - chunkptr[q]) / unit_div;
  const int base = unit_div == 1 ? chunkptr[q] : 0;
  const int4 o = off[q];
  if (len <= piece) {
    work[o.x] = mx_hot_work{q, base, base + len, -1};
    return;
  }
  const int np = (len + piece - 1) / piece;
  split[o.y] = mx_hot_split{q, o.z, np, 0};
  for (int p = 0; p < np; ++p) work[o.x + p] = mx_hot_work{q, base + p * piece, base + min(len, (p + 1) * piece), o.z + p};
}

int mx_plan_hot_dev(mx_device *D) {
  mx_scratch W;
  const bool du = D->mode == MX_HOT_DU;
  const int nq = D->nchunks, unit_div = du ? 1 : MX_CHUNK_ROWS, piece = du ? MX_DU_BLOCKS_PER_WARP : MX_SE_COLS_PER_WARP;
  const int *chunkptr = du ? D->du_chunkptr : D->se_ptr;
  int4 *off;
  if (mx_scratch_alloc(D, W, &off, (size_t)nq + 1, "alloc hot plan offsets")) return 1;
  auto counts = thrust::make_transform_iterator(count_it(0), hot_counts_of{nq, unit_div, piece, chunkptr});
  if (mx_cub_run(D, W, "scan hot plan", [&](void *t, size_t &b) {
        return cub::DeviceScan::ExclusiveScan(t, b, counts, off, add_int4{}, make_int4(0, 0, 0, 0), nq + 1);
      }))
    return 1;
  int4 total;
  MX_CUDA_TRY(cudaMemcpy(&total, off + nq, sizeof total, cudaMemcpyDeviceToHost));
  if (mx_cuda_alloc_on(D, &D->hot_work, (size_t)total.x, "alloc hot work plan") ||
      mx_cuda_alloc_on(D, &D->hot_split, (size_t)total.y, "alloc hot split plan") ||
      mx_cuda_alloc_on(D, &D->hot_partials, (size_t)total.z * MX_CHUNK_ROWS, "alloc hot partials"))
    return 1;
  D->hot_nwork = total.x;
  D->hot_nsplit = total.y;
  D->hot_nslots = total.z;
  if (nq > 0) k_hot_plan<<<plan_blocks(nq), MX_PLAN_THREADS>>>(nq, unit_div, piece, chunkptr, off, D->hot_work, D->hot_split);
  MX_LAUNCH_CHECK("hot plan");
  return mx_cuda_check(cudaDeviceSynchronize(), "hot plan");
}

/* ---- the cold-kernel rule's statistics ------------------------------------------------------------------- */

/* (row length, its square) of cold row r */
struct row_len_sq_of {
  const int *rowptr;
  __device__ longlong2 operator()(int r) const {
    const long long l = rowptr[r + 1] - rowptr[r];
    return make_longlong2(l, l * l);
  }
};

/* (max, sum): exact in integers, any order */
struct max_sum {
  __device__ longlong2 operator()(const longlong2 &a, const longlong2 &b) const { return make_longlong2(max(a.x, b.x), a.y + b.y); }
};

int mx_cold_row_stats_dev(mx_device *D, int64_t *maxlen, int64_t *sumsq) {
  *maxlen = 0;
  *sumsq = 0;
  if (D->nrows == 0) return 0;
  mx_scratch W;
  longlong2 *d_out, out;
  if (mx_scratch_alloc(D, W, &d_out, 1, "alloc row statistics")) return 1;
  auto it = thrust::make_transform_iterator(count_it(0), row_len_sq_of{D->cold_rowptr});
  if (mx_cub_run(D, W, "row statistics", [&](void *t, size_t &b) {
        return cub::DeviceReduce::Reduce(t, b, it, d_out, D->nrows, max_sum{}, make_longlong2(0, 0));
      }))
    return 1;
  MX_CUDA_TRY(cudaMemcpy(&out, d_out, sizeof out, cudaMemcpyDeviceToHost));
  *maxlen = out.x;
  *sumsq = out.y;
  return 0;
}

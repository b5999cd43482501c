/* mx_build.cu - the hot/cold format built on the GPU (mx_device_build).
 *
 * The steps of mx_format_build run over the uploaded CSR as CUB sorts, scans, selections and
 * segmented reductions, and small one-pass kernels between them:
 *   columns by length (stable radix sort, descending: ties keep index order) -> prefix covering
 *   ceil(tau_c nnz) -> rows by hot length (same) -> prefix covering ceil(tau_r nnz) -> per-entry hot
 *   flag -> cold CSR (stable selection keeps input order) -> hot entries sorted by (chunk, column,
 *   input index) -> local columns (first cascade, duplicates as column occurrences) -> DU bitmaps /
 *   SE slots -> gather maps, then values by the refresh gather.
 * Every step is deterministic (stable sorts, integer atomics only for counts, maxima and bitmap
 * bits), so the result equals mx_device_upload of the host build byte for byte; the host builder
 * (src/core) stays the oracle, tests/cuda/test_cuda_build.cu checks the equality.
 * Nothing of the matrix comes back to the host: the launch plans are made on the GPU too
 * (mx_plans_gpu.cu). */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/binary_search.h>
#include <thrust/functional.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/system/cuda/execution_policy.h>
#include <string.h>
#include <algorithm>
#include <exception>
#include <vector>
#include "mx_device_impl.h"
#include "mx_scratch.cuh"
#include "mx_upload.h"

#define MX_BUILD_THREADS 256

static inline int nblocks_for(int64_t n) { return (int)((n + MX_BUILD_THREADS - 1) / MX_BUILD_THREADS); }

static int bits_for(uint64_t maxval) { /* bits to hold 0..maxval */
  int b = 1;
  while (b < 64 && (maxval >> b) != 0) ++b;
  return b;
}

/* ---- kernels (thread i owns element i; no two threads write one word except through atomics) ---- */

/* len[col[k]] += 1 (integer atomics: the counts do not depend on the order). */
__global__ void k_column_lengths(int64_t nnz, const int *__restrict__ col, int *len) {
  const int64_t k = (int64_t)blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (k < nnz) atomicAdd(len + col[k], 1);
}

/* out[i] = i */
__global__ void k_iota(int n, int *out) {
  const int i = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (i < n) out[i] = i;
}

/* flag[perm[t]] = 1 for t < p */
__global__ void k_mark_prefix(int p, const int *__restrict__ perm, uint8_t *flag) {
  const int t = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (t < p) flag[perm[t]] = 1;
}

/* slot[perm[t]] = t for t < hot_nrows; hot_row[t] = perm[t] or -1 (padding) for t < nslots */
__global__ void k_hot_slots(int hot_nrows, int nslots, const int *__restrict__ perm, int *slot, int *hot_row) {
  const int t = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (t < hot_nrows) slot[perm[t]] = t;
  if (t < nslots) hot_row[t] = t < hot_nrows ? perm[t] : -1;
}

/* row of entry k: the last i with rowptr[i] <= k (rowptr nondecreasing, rowptr[0] = 0 <= k < nnz) */
__device__ __forceinline__ int row_of(int m, const int *__restrict__ rowptr, int k) {
  int lo = 0, hi = m - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (rowptr[mid] <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* hot[k] = 1 iff entry k lies in a hot row and a hot column (the crux's H). */
__global__ void k_entry_hot(int nnz, int m, const int *__restrict__ rowptr, const int *__restrict__ col,
                            const int *__restrict__ slot, const uint8_t *__restrict__ hot_col, uint8_t *hot) {
  const int k = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (k < nnz) hot[k] = slot[row_of(m, rowptr, k)] >= 0 && hot_col[col[k]];
}

/* dst[i] = src[map[i]] (int columns; values go through mx_gather_launch) */
__global__ void k_gather_int(int n, const int *__restrict__ map, const int *__restrict__ src, int *dst) {
  const int i = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (i < n) dst[i] = src[map[i]];
}

/* Sort key and payload of hot entry k (input order): key = chunk * ncols + column, payload =
 * (slot << 32) | k. A stable sort by key then orders a chunk's entries by (column, input index). */
__global__ void k_hot_keys(int h, int m, int n, const int *__restrict__ hk, const int *__restrict__ rowptr,
                           const int *__restrict__ col, const int *__restrict__ slot, uint64_t *key,
                           uint64_t *payload) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e >= h) return;
  const int k = hk[e], t = slot[row_of(m, rowptr, k)];
  key[e] = (uint64_t)(t / MX_CHUNK_ROWS) * (uint64_t)n + (uint64_t)col[k];
  payload[e] = ((uint64_t)t << 32) | (uint32_t)k;
}

/* Entry e (sorted): src, slot, column; group head (new (chunk, column)) and run head (new (chunk,
 * column, row)). Entries of one row are consecutive inside a group: a row's entries have
 * consecutive input indices and the group is sorted by input index. */
__global__ void k_entry_unpack(int h, const uint64_t *__restrict__ key, const uint64_t *__restrict__ payload,
                               int *src, int *eslot, int *group_head, uint8_t *run_head) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e >= h) return;
  const uint64_t p = payload[e];
  src[e] = (int)(uint32_t)p;
  eslot[e] = (int)(p >> 32);
  const bool g = e == 0 || key[e] != key[e - 1];
  group_head[e] = g;
  run_head[e] = g || (payload[e - 1] >> 32) != (p >> 32);
}

/* For each run head: copies[e..] = 1, 2, ... along the run; maxc[group] = max run length. Runs are
 * as long as a row's copies of one column (1 without duplicates). */
__global__ void k_run_copies(int h, const uint8_t *__restrict__ run_head, const int *__restrict__ gid, int *copies,
                             int *maxc) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e >= h || !run_head[e]) return;
  int len = 1;
  copies[e] = 1;
  for (; e + len < h && !run_head[e + len]; ++len) copies[e + len] = len + 1;
  atomicMax(maxc + gid[e], len);
}

/* Per chunk q: first entry ent0 = exclusive hot length prefix at slot 8q, first group g0 = gid[ent0];
 * ncl = local columns = gbase[g0 of q+1] - gbase[g0]; width = longest row = hot length of slot 8q
 * (rows are sorted by hot length, descending). */
__global__ void k_chunk_shape(int nchunks, int ngroups, const int *__restrict__ hlen_sorted,
                              const int *__restrict__ hcum, const int *__restrict__ gid, const int *__restrict__ gbase,
                              int *g0, int *ncl, int *width) {
  const int q = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (q >= nchunks) return;
  const int t0 = q * MX_CHUNK_ROWS, t1 = t0 + MX_CHUNK_ROWS;
  const int e0 = hcum[t0] - hlen_sorted[t0];
  const int first = gid[e0];
  /* the next chunk's first entry, or the end */
  const int next = q + 1 < nchunks ? gid[hcum[t1] - hlen_sorted[t1]] : ngroups;
  g0[q] = first;
  ncl[q] = gbase[next] - gbase[first];
  width[q] = hlen_sorted[t0];
}

/* Local column of entry e inside its chunk: the group's base (columns before it in the chunk) plus
 * its copy number - 1. */
__global__ void k_local_columns(int h, const int *__restrict__ eslot, const int *__restrict__ gid,
                                const int *__restrict__ copies, const int *__restrict__ gbase,
                                const int *__restrict__ g0, int *lcol) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e < h) lcol[e] = gbase[gid[e]] - gbase[g0[eslot[e] / MX_CHUNK_ROWS]] + copies[e] - 1;
}

/* DU: bitmap bit r*4 + lcol%4 of block chunkptr[q] + lcol/4 (integer atomicOr). */
__global__ void k_du_bits(int h, const int *__restrict__ eslot, const int *__restrict__ lcol,
                          const int *__restrict__ chunkptr, uint32_t *bitmap) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e >= h) return;
  const int q = eslot[e] / MX_CHUNK_ROWS, r = eslot[e] % MX_CHUNK_ROWS, l = lcol[e];
  atomicOr(bitmap + chunkptr[q] + l / MX_BLOCK_COLS, 1u << (r * MX_BLOCK_COLS + l % MX_BLOCK_COLS));
}

/* DU: each group head writes its column into the group's local columns (one writer per word). */
__global__ void k_du_columns(int h, const int *__restrict__ group_head, const int *__restrict__ eslot,
                             const int *__restrict__ lcol, const int *__restrict__ gid, const int *__restrict__ maxc,
                             const int *__restrict__ src, const int *__restrict__ col,
                             const int *__restrict__ chunkptr, int *du_col) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e >= h || !group_head[e]) return;
  const int q = eslot[e] / MX_CHUNK_ROWS, j = col[src[e]], base = lcol[e]; /* a head is copy 1 */
  for (int c = 0; c < maxc[gid[e]]; ++c) {
    const int l = base + c;
    du_col[(int64_t)(chunkptr[q] + l / MX_BLOCK_COLS) * MX_BLOCK_COLS + l % MX_BLOCK_COLS] = j;
  }
}

/* DU: hot_src at the value position of entry e: valptr[blk] + popcount of the bits before its own. */
__global__ void k_du_sources(int h, const int *__restrict__ eslot, const int *__restrict__ lcol,
                             const int *__restrict__ src, const int *__restrict__ chunkptr,
                             const uint32_t *__restrict__ bitmap, const int *__restrict__ valptr, int *hot_src) {
  const int e = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (e >= h) return;
  const int q = eslot[e] / MX_CHUNK_ROWS, r = eslot[e] % MX_CHUNK_ROWS, l = lcol[e];
  const int blk = chunkptr[q] + l / MX_BLOCK_COLS;
  const unsigned bit = (unsigned)(r * MX_BLOCK_COLS + l % MX_BLOCK_COLS);
  hot_src[valptr[blk] + __popc(bitmap[blk] & ((1u << bit) - 1u))] = src[e];
}

/* SE: entries sorted by slot t (then column, input index): the rank-th entry of row slot t goes
 * to slot se_ptr[t/8] + rank*8 + t%8, rank = position - first position of t. */
__global__ void k_se_place(int h, const int *__restrict__ order, const int *__restrict__ eslot,
                           const int *__restrict__ src, const int *__restrict__ col, const int *__restrict__ hlen_sorted,
                           const int *__restrict__ hcum, const int *__restrict__ se_ptr, int *se_col, int *hot_src) {
  const int p = blockIdx.x * MX_BUILD_THREADS + threadIdx.x;
  if (p >= h) return;
  const int e = order[p], t = eslot[e], rank = p - (hcum[t] - hlen_sorted[t]);
  const int s = se_ptr[t / MX_CHUNK_ROWS] + rank * MX_CHUNK_ROWS + t % MX_CHUNK_ROWS;
  se_col[s] = col[src[e]];
  hot_src[s] = src[e];
}

/* ---- functors for CUB iterators -------------------------------------------------------------------- */

struct is_hot_entry { /* k -> hot_col[col[k]] (row length inside the hot columns) */
  const uint8_t *hot_col;
  const int *col;
  __host__ __device__ int operator()(int k) const { return hot_col[col[k]]; }
};
struct is_cold_flag {
  __host__ __device__ bool operator()(uint8_t h) const { return !h; }
};
struct cold_row_length { /* i -> cold entries of row i (0 at i = m, for the exclusive scan's end) */
  int m;
  const int *rowptr, *slot, *hlen;
  __host__ __device__ int operator()(int i) const {
    if (i >= m) return 0;
    return rowptr[i + 1] - rowptr[i] - (slot[i] >= 0 ? hlen[i] : 0);
  }
};
struct padded_at { /* i -> a[i] for i < n, else 0 */
  int n;
  const int *a;
  __host__ __device__ int operator()(int i) const { return i < n ? a[i] : 0; }
};
struct du_blocks_of { /* q -> ceil(ncl[q]/4), 0 at q = nchunks */
  int n;
  const int *ncl;
  __host__ __device__ int operator()(int q) const { return q < n ? (ncl[q] + MX_BLOCK_COLS - 1) / MX_BLOCK_COLS : 0; }
};
struct se_slots_of { /* q -> 8*width[q], 0 at q = nchunks */
  int n;
  const int *width;
  __host__ __device__ int operator()(int q) const { return q < n ? MX_CHUNK_ROWS * width[q] : 0; }
};
struct popcount_of { /* b -> popcount(bitmap[b]), 0 at b = nblocks */
  int n;
  const uint32_t *bm;
  __device__ int operator()(int b) const { return b < n ? __popc(bm[b]) : 0; }
};
struct minus_one {
  __host__ __device__ int operator()(int v) const { return v - 1; }
};
struct widen64 {
  __host__ __device__ int64_t operator()(int v) const { return v; }
};

typedef thrust::counting_iterator<int> count_it;

/* ---- steps ------------------------------------------------------------------------------------------- */

/* Everything a step needs from the ones before it. */
struct build_state {
  int m, n, nnz;
  int64_t target_c, target_r;
  int *rowptr, *col; /* uploaded */
  double *val;       /* uploaded: kept as D->val_in (or D->cold_val when all cold) */
  uint8_t *hot_col;
  int hot_ncols;
  int *hlen, *hlen_sorted, *hcum, *rperm, *slot; /* rows: hot length, sorted, inclusive prefix, order, slot */
  int hot_nrows, hot_nnz, nchunks;
};

/* Shortest prefix p of the sorted lengths whose sum (inclusive prefix cum, nondecreasing) reaches
 * target: one vectorised binary search on the GPU and one download. Thrust reports a CUDA error by
 * throwing: caught here, so that no exception leaves the C-callable builder. */
static int prefix_cover(mx_device *D, mx_scratch &W, const int *cum, int count, int64_t target, int *p) {
  if (target <= 0 || count == 0) return *p = 0, 0;
  int64_t *first, h_first; /* first index with cum >= target (exists: cum[count-1] = total >= target) */
  if (mx_scratch_alloc(D, W, &first, 1, "alloc prefix index")) return 1;
  const auto t = thrust::make_constant_iterator(target);
  try {
    thrust::lower_bound(thrust::cuda::par_nosync.on(W.stream), cum, cum + count, t, t + 1, first, thrust::less<int64_t>());
  } catch (const std::exception &e) {
    return mx_fail("mx_device_build: prefix cover: %s", e.what());
  }
  MX_LAUNCH_CHECK("prefix cover");
  MX_CUDA_TRY(cudaMemcpy(&h_first, first, sizeof h_first, cudaMemcpyDeviceToHost));
  *p = (int)h_first + 1;
  return 0;
}

/* Hot columns: lengths, stable sort descending, prefix covering target_c. */
static int select_columns(mx_device *D, mx_scratch &W, build_state &B) {
  int *len, *len_sorted, *idx, *perm, *cum;
  if (mx_scratch_alloc(D, W, &len, B.n, "alloc column lengths") || mx_scratch_alloc(D, W, &len_sorted, B.n, "alloc sorted lengths") ||
      mx_scratch_alloc(D, W, &idx, B.n, "alloc column index") || mx_scratch_alloc(D, W, &perm, B.n, "alloc column order") ||
      mx_scratch_alloc(D, W, &cum, B.n, "alloc column prefix") || mx_scratch_alloc(D, W, &B.hot_col, B.n, "alloc hot column flags"))
    return 1;
  MX_CUDA_TRY(cudaMemset(len, 0, sizeof(int) * B.n));
  MX_CUDA_TRY(cudaMemset(B.hot_col, 0, B.n));
  k_column_lengths<<<nblocks_for(B.nnz), MX_BUILD_THREADS>>>(B.nnz, B.col, len);
  k_iota<<<nblocks_for(B.n), MX_BUILD_THREADS>>>(B.n, idx);
  MX_LAUNCH_CHECK("column lengths");
  if (mx_cub_run(D, W, "sort cols", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairsDescending(t, b, len, len_sorted, idx, perm, B.n); })) return 1;
  if (mx_cub_run(D, W, "scan cols", [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, len_sorted, cum, B.n); })) return 1;
  if (prefix_cover(D, W, cum, B.n, B.target_c, &B.hot_ncols)) return 1;
  if (B.hot_ncols > 0) k_mark_prefix<<<nblocks_for(B.hot_ncols), MX_BUILD_THREADS>>>(B.hot_ncols, perm, B.hot_col);
  MX_LAUNCH_CHECK("hot column flags");
  return 0;
}

/* Hot rows: length inside the hot columns, stable sort descending, prefix covering target_r; slots. */
static int select_rows(mx_device *D, mx_scratch &W, build_state &B, int **hot_row) {
  int *idx;
  if (mx_scratch_alloc(D, W, &B.hlen, B.m, "alloc hot row lengths") || mx_scratch_alloc(D, W, &B.hlen_sorted, B.m, "alloc sorted hot lengths") ||
      mx_scratch_alloc(D, W, &idx, B.m, "alloc row index") || mx_scratch_alloc(D, W, &B.rperm, B.m, "alloc row order") ||
      mx_scratch_alloc(D, W, &B.hcum, B.m, "alloc row prefix") || mx_scratch_alloc(D, W, &B.slot, B.m, "alloc row slots"))
    return 1;
  auto hot_entries = thrust::make_transform_iterator(count_it(0), is_hot_entry{B.hot_col, B.col});
  if (mx_cub_run(D, W, "row lengths", [&](void *t, size_t &b) { return cub::DeviceSegmentedReduce::Sum(t, b, hot_entries, B.hlen, B.m, B.rowptr, B.rowptr + 1); })) return 1;
  k_iota<<<nblocks_for(B.m), MX_BUILD_THREADS>>>(B.m, idx);
  MX_LAUNCH_CHECK("row index");
  if (mx_cub_run(D, W, "sort rows", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairsDescending(t, b, B.hlen, B.hlen_sorted, idx, B.rperm, B.m); })) return 1;
  if (mx_cub_run(D, W, "scan rows", [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, B.hlen_sorted, B.hcum, B.m); })) return 1;
  if (prefix_cover(D, W, B.hcum, B.m, B.target_r, &B.hot_nrows)) return 1;
  B.hot_nnz = 0;
  if (B.hot_nrows > 0) MX_CUDA_TRY(cudaMemcpy(&B.hot_nnz, B.hcum + B.hot_nrows - 1, sizeof(int), cudaMemcpyDeviceToHost));
  B.nchunks = (B.hot_nrows + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS;
  const int nslots = B.nchunks * MX_CHUNK_ROWS;
  MX_CUDA_TRY(cudaMemset(B.slot, 0xff, sizeof(int) * B.m)); /* -1: cold row */
  if (mx_cuda_alloc_on(D, hot_row, (size_t)nslots, "alloc hot_row")) return 1;
  mx_note_peak(D, W);
  if (nslots > 0) k_hot_slots<<<nblocks_for(nslots), MX_BUILD_THREADS>>>(B.hot_nrows, nslots, B.rperm, B.slot, *hot_row);
  MX_LAUNCH_CHECK("hot slots");
  return 0;
}

/* Cold CSR: entries outside H in input order (stable selection), columns gathered, row pointers
 * from the per-row cold counts; cold_src is the gather map. */
static int build_cold(mx_device *D, mx_scratch &W, build_state &B, const uint8_t *hot) {
  const int cnnz = B.nnz - B.hot_nnz;
  D->cold_nnz = cnnz;
  int *nsel;
  if (mx_scratch_alloc(D, W, &nsel, 1, "alloc selection count") ||
      mx_cuda_alloc_on(D, &D->cold_src, (size_t)cnnz, "alloc cold_src") ||
      mx_cuda_alloc_on(D, &D->cold_col, (size_t)cnnz, "alloc cold_col") ||
      mx_cuda_alloc_on(D, &D->cold_val, (size_t)cnnz, "alloc cold_val") ||
      mx_cuda_alloc_on(D, &D->cold_rowptr, (size_t)B.m + 1, "alloc cold_rowptr"))
    return 1;
  mx_note_peak(D, W);
  auto cold_flags = thrust::make_transform_iterator(hot, is_cold_flag{});
  if (mx_cub_run(D, W, "select cold", [&](void *t, size_t &b) { return cub::DeviceSelect::Flagged(t, b, count_it(0), cold_flags, D->cold_src, nsel, B.nnz); })) return 1;
  auto cold_len = thrust::make_transform_iterator(count_it(0), cold_row_length{B.m, B.rowptr, B.slot, B.hlen});
  if (mx_cub_run(D, W, "scan cold", [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, cold_len, D->cold_rowptr, B.m + 1); })) return 1;
  if (cnnz > 0) k_gather_int<<<nblocks_for(cnnz), MX_BUILD_THREADS>>>(cnnz, D->cold_src, B.col, D->cold_col);
  MX_LAUNCH_CHECK("cold columns");
  return mx_gather_launch(D->cold_val, D->cold_src, B.val, cnnz, 0);
}

/* Hot entries of the first cascade, sorted by (chunk, column, input index). */
struct hot_entries {
  int *src, *eslot, *gid, *copies, *lcol, *maxc, *gbase, *g0, *ncl, *width, *group_head;
  uint8_t *run_head;
  int ngroups;
};

static int sort_hot_entries(mx_device *D, mx_scratch &W, build_state &B, const uint8_t *hot, hot_entries &E) {
  const int h = B.hot_nnz;
  int *hk, *nsel;
  uint64_t *key, *key_sorted, *pay, *pay_sorted;
  if (mx_scratch_alloc(D, W, &hk, h, "alloc hot entries") || mx_scratch_alloc(D, W, &nsel, 1, "alloc selection count") ||
      mx_scratch_alloc(D, W, &key, h, "alloc hot keys") || mx_scratch_alloc(D, W, &key_sorted, h, "alloc hot keys") ||
      mx_scratch_alloc(D, W, &pay, h, "alloc hot payload") || mx_scratch_alloc(D, W, &pay_sorted, h, "alloc hot payload") ||
      mx_scratch_alloc(D, W, &E.src, h, "alloc entry sources") || mx_scratch_alloc(D, W, &E.eslot, h, "alloc entry slots") ||
      mx_scratch_alloc(D, W, &E.group_head, h, "alloc group heads") || mx_scratch_alloc(D, W, &E.run_head, h, "alloc run heads"))
    return 1;
  if (mx_cub_run(D, W, "select hot", [&](void *t, size_t &b) { return cub::DeviceSelect::Flagged(t, b, count_it(0), hot, hk, nsel, B.nnz); })) return 1;
  k_hot_keys<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, B.m, B.n, hk, B.rowptr, B.col, B.slot, key, pay);
  MX_LAUNCH_CHECK("hot keys");
  const int end_bit = bits_for((uint64_t)B.nchunks * (uint64_t)B.n);
  if (mx_cub_run(D, W, "sort hot", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairs(t, b, key, key_sorted, pay, pay_sorted, h, 0, end_bit); })) return 1;
  k_entry_unpack<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, key_sorted, pay_sorted, E.src, E.eslot, E.group_head, E.run_head);
  MX_LAUNCH_CHECK("hot entries");
  return 0;
}

/* First cascade: group ids, copies, local columns per entry; ncl and width per chunk. */
static int local_columns(mx_device *D, mx_scratch &W, build_state &B, hot_entries &E) {
  const int h = B.hot_nnz, nq = B.nchunks;
  if (mx_scratch_alloc(D, W, &E.gid, h, "alloc group ids") || mx_scratch_alloc(D, W, &E.copies, h, "alloc copies") ||
      mx_scratch_alloc(D, W, &E.lcol, h, "alloc local columns") || mx_scratch_alloc(D, W, &E.g0, nq, "alloc chunk groups") ||
      mx_scratch_alloc(D, W, &E.ncl, nq, "alloc chunk columns") || mx_scratch_alloc(D, W, &E.width, nq, "alloc chunk widths"))
    return 1;
  auto gid_out = thrust::make_transform_output_iterator(E.gid, minus_one{}); /* 0-based group ids */
  if (mx_cub_run(D, W, "scan groups", [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, E.group_head, gid_out, h); })) return 1;
  MX_CUDA_TRY(cudaMemcpy(&E.ngroups, E.gid + h - 1, sizeof(int), cudaMemcpyDeviceToHost));
  E.ngroups += 1;
  if (mx_scratch_alloc(D, W, &E.maxc, E.ngroups, "alloc group copies") || mx_scratch_alloc(D, W, &E.gbase, (size_t)E.ngroups + 1, "alloc group bases"))
    return 1;
  MX_CUDA_TRY(cudaMemset(E.maxc, 0, sizeof(int) * E.ngroups));
  k_run_copies<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, E.run_head, E.gid, E.copies, E.maxc);
  MX_LAUNCH_CHECK("run copies");
  auto maxc_padded = thrust::make_transform_iterator(count_it(0), padded_at{E.ngroups, E.maxc});
  if (mx_cub_run(D, W, "scan bases", [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, maxc_padded, E.gbase, E.ngroups + 1); })) return 1;
  k_chunk_shape<<<nblocks_for(nq), MX_BUILD_THREADS>>>(nq, E.ngroups, B.hlen_sorted, B.hcum, E.gid, E.gbase, E.g0, E.ncl, E.width);
  k_local_columns<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, E.eslot, E.gid, E.copies, E.gbase, E.g0, E.lcol);
  MX_LAUNCH_CHECK("local columns");
  return 0;
}

/* Sum over chunks of f(q) in int64 (block and slot counts for the mode choice). */
template <typename F>
static int sum_chunks(mx_device *D, mx_scratch &W, F f, int nq, int64_t *out) {
  int64_t *d_out;
  if (mx_scratch_alloc(D, W, &d_out, 1, "alloc sum")) return 1;
  auto it = thrust::make_transform_iterator(thrust::make_transform_iterator(count_it(0), f), widen64{});
  if (mx_cub_run(D, W, "sum chunks", [&](void *t, size_t &b) { return cub::DeviceReduce::Sum(t, b, it, d_out, nq); })) return 1;
  MX_CUDA_TRY(cudaMemcpy(out, d_out, sizeof(int64_t), cudaMemcpyDeviceToHost));
  return 0;
}

/* DU arrays and hot_src. */
static int encode_du(mx_device *D, mx_scratch &W, build_state &B, const hot_entries &E, int nb) {
  const int h = B.hot_nnz, nq = B.nchunks;
  D->du_nblocks = nb;
  D->hot_nvals = h;
  if (mx_cuda_alloc_on(D, &D->du_chunkptr, (size_t)nq + 1, "alloc du_chunkptr") ||
      mx_cuda_alloc_on(D, &D->du_bitmap, (size_t)nb, "alloc du_bitmap") ||
      mx_cuda_alloc_on(D, &D->du_col, (size_t)nb * MX_BLOCK_COLS, "alloc du_col") ||
      mx_cuda_alloc_on(D, &D->du_valptr, (size_t)nb + 1, "alloc du_valptr") ||
      mx_cuda_alloc_on(D, &D->du_val, (size_t)h, "alloc du_val") || mx_cuda_alloc_on(D, &D->hot_src, (size_t)h, "alloc hot_src"))
    return 1;
  mx_note_peak(D, W);
  auto blocks = thrust::make_transform_iterator(count_it(0), du_blocks_of{nq, E.ncl});
  if (mx_cub_run(D, W, "scan du", [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, blocks, D->du_chunkptr, nq + 1); })) return 1;
  MX_CUDA_TRY(cudaMemset(D->du_bitmap, 0, sizeof(uint32_t) * nb));
  MX_CUDA_TRY(cudaMemset(D->du_col, 0xff, sizeof(int) * (size_t)nb * MX_BLOCK_COLS)); /* -1: padding column */
  k_du_bits<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, E.eslot, E.lcol, D->du_chunkptr, D->du_bitmap);
  k_du_columns<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, E.group_head, E.eslot, E.lcol, E.gid, E.maxc, E.src, B.col, D->du_chunkptr, D->du_col);
  MX_LAUNCH_CHECK("DU bitmaps");
  auto pops = thrust::make_transform_iterator(count_it(0), popcount_of{nb, D->du_bitmap});
  if (mx_cub_run(D, W, "scan valptr", [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, pops, D->du_valptr, nb + 1); })) return 1;
  k_du_sources<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, E.eslot, E.lcol, E.src, D->du_chunkptr, D->du_bitmap, D->du_valptr, D->hot_src);
  MX_LAUNCH_CHECK("DU sources");
  return mx_gather_launch(D->du_val, D->hot_src, B.val, h, 0);
}

/* SE arrays and hot_src: entries re-sorted by slot (stable: column order stays inside a row). */
static int encode_se(mx_device *D, mx_scratch &W, build_state &B, const hot_entries &E, int ns) {
  const int h = B.hot_nnz, nq = B.nchunks;
  D->se_nslots = ns;
  D->hot_nvals = ns;
  int *order_in, *order, *slot_sorted;
  if (mx_cuda_alloc_on(D, &D->se_ptr, (size_t)nq + 1, "alloc se_ptr") || mx_cuda_alloc_on(D, &D->se_col, (size_t)ns, "alloc se_col") ||
      mx_cuda_alloc_on(D, &D->se_val, (size_t)ns, "alloc se_val") || mx_cuda_alloc_on(D, &D->hot_src, (size_t)ns, "alloc hot_src") ||
      mx_scratch_alloc(D, W, &order_in, h, "alloc SE order") || mx_scratch_alloc(D, W, &order, h, "alloc SE order") ||
      mx_scratch_alloc(D, W, &slot_sorted, h, "alloc SE slots"))
    return 1;
  mx_note_peak(D, W);
  auto slots = thrust::make_transform_iterator(count_it(0), se_slots_of{nq, E.width});
  if (mx_cub_run(D, W, "scan se", [&](void *t, size_t &b) { return cub::DeviceScan::ExclusiveSum(t, b, slots, D->se_ptr, nq + 1); })) return 1;
  k_iota<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, order_in);
  MX_LAUNCH_CHECK("SE order");
  if (mx_cub_run(D, W, "sort se", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairs(t, b, E.eslot, slot_sorted, order_in, order, h, 0, bits_for((uint64_t)B.hot_nrows)); })) return 1;
  MX_CUDA_TRY(cudaMemset(D->se_col, 0xff, sizeof(int) * (size_t)ns)); /* padding: column -1, src -1 */
  MX_CUDA_TRY(cudaMemset(D->hot_src, 0xff, sizeof(int) * (size_t)ns));
  k_se_place<<<nblocks_for(h), MX_BUILD_THREADS>>>(h, order, E.eslot, E.src, B.col, B.hlen_sorted, B.hcum, D->se_ptr, D->se_col, D->hot_src);
  MX_LAUNCH_CHECK("SE placement");
  return mx_gather_launch(D->se_val, D->hot_src, B.val, ns, 0); /* padding (src -1) gets 0 */
}

/* The hot region: entries, first cascade, mode choice (the host's exact byte rule), DU or SE. */
static int build_hot(mx_device *D, mx_scratch &W, build_state &B, const uint8_t *hot, mx_mode_request req,
                     mx_format *shell) {
  hot_entries E = {};
  if (sort_hot_entries(D, W, B, hot, E)) return 1;
  mx_trace_step("build: hot entries (sort)");
  if (local_columns(D, W, B, E)) return 1;
  mx_trace_step("build: first cascade");
  int64_t nb, ns;
  if (sum_chunks(D, W, du_blocks_of{B.nchunks, E.ncl}, B.nchunks, &nb) || sum_chunks(D, W, se_slots_of{B.nchunks, E.width}, B.nchunks, &ns))
    return 1;
  mx_hot_mode mode;
  const mx_status st = mx_hot_mode_choose(req, B.nchunks, nb, ns, B.hot_nnz, &mode);
  if (st != MX_OK) return mx_fail("mx_device_build: the hot region's %s counts overflow 32-bit indices", req == MX_MODE_SE ? "SE" : "DU");
  D->mode = shell->mode = mode;
  int rc;
  if (mode == MX_HOT_DU) {
    shell->du_nblocks = (int32_t)nb;
    rc = encode_du(D, W, B, E, (int)nb);
  } else {
    shell->se_nslots = (int32_t)ns;
    rc = encode_se(D, W, B, E, (int)ns);
  }
  mx_trace_step(mode == MX_HOT_DU ? "build: DU encoding" : "build: SE encoding");
  return rc;
}

/* ---- entry point ---------------------------------------------------------------------------------------- */

/* Host-side checks of A (the column check runs on the GPU, after the upload). */
static int check_input(const mx_csr *A, mx_mode_request req) {
  if (!A || A->nrows < 0 || A->ncols < 0 || !A->rowptr) return mx_fail("mx_device_build: the CSR is NULL or has negative sizes");
  if (req != MX_MODE_AUTO && req != MX_MODE_DU && req != MX_MODE_SE) return mx_fail("mx_device_build: unknown hot mode request %d", (int)req);
  const int32_t *Ap = A->rowptr;
  if (Ap[0] != 0) return mx_fail("mx_device_build: rowptr[0] = %d, not 0", (int)Ap[0]);
  for (int32_t i = 0; i < A->nrows; ++i)
    if (Ap[i + 1] < Ap[i]) return mx_fail("mx_device_build: rowptr decreases at row %d", (int)i);
  if (Ap[A->nrows] > 0 && (!A->colidx || !A->val)) return mx_fail("mx_device_build: colidx or val is NULL");
  return 0;
}

/* The format of A into D from the uploaded arrays of B (D's: the caller frees those not handed over). */
static int build(const mx_csr *A, mx_crux c, mx_mode_request req, mx_device *D, mx_format *shell, build_state &B) {
  B.m = A->nrows;
  B.n = A->ncols;
  B.nnz = A->rowptr[A->nrows];
  mx_crux cc;
  if (mx_crux_targets(c, B.nnz, &cc, &B.target_c, &B.target_r) != MX_OK)
    return mx_fail("mx_device_build: crux (%g, %g) is invalid: need 0 <= tau_r <= tau_c <= 1", c.tau_c, c.tau_r);
  memset(shell, 0, sizeof *shell);
  shell->nrows = B.m;
  shell->ncols = B.n;
  shell->nnz = B.nnz;
  shell->crux = cc;
  D->nrows = B.m;
  D->ncols = B.n;
  D->nnz = B.nnz;

  mx_scratch W;
  W.make_pool = B.target_c > 0; /* ~40 scratch arrays; a build without a hot region takes a few */
  /* the upload aijcusparse pays too; val becomes the refresh staging buffer (or cold_val), rowptr
   * and col the cold CSR when nothing is hot (else freed at the end) */
  if (mx_cuda_alloc_on(D, &B.val, (size_t)B.nnz, "alloc values") ||
      mx_cuda_alloc_on(D, &B.rowptr, (size_t)B.m + 1, "alloc row pointers") ||
      mx_cuda_alloc_on(D, &B.col, (size_t)B.nnz, "alloc column indices"))
    return 1;
  mx_note_peak(D, W);
  const mx_h2d_piece csr[3] = {{B.rowptr, A->rowptr, sizeof(int) * ((size_t)B.m + 1)},
                               {B.col, A->colidx, sizeof(int) * (size_t)B.nnz},
                               {B.val, A->val, sizeof(double) * (size_t)B.nnz}};
  if (mx_h2d_copy(csr, 3, 0, "mx_device_build: uploading the CSR")) return 1;
  mx_trace_step("upload");
  int *bad;
  if (mx_scratch_alloc(D, W, &bad, 1, "alloc check flag")) return 1;
  mx_trace_step("build: first scratch allocation");
  MX_CUDA_TRY(cudaMemset(bad, 0, sizeof(int)));
  if (mx_check_columns_launch(B.nnz, B.n, B.col, bad)) return 1;
  int h_bad;
  MX_CUDA_TRY(cudaMemcpy(&h_bad, bad, sizeof(int), cudaMemcpyDeviceToHost));
  if (h_bad) return mx_fail("mx_device_build: a column index is outside [0, %d)", (int)B.n);
  mx_trace_step("build: column check");

  if (B.target_c > 0) {
    int *hot_row = nullptr;
    if (select_columns(D, W, B)) return 1;
    mx_trace_step("build: hot columns");
    if (select_rows(D, W, B, &hot_row)) return 1;
    mx_trace_step("build: hot rows");
    shell->hot_ncols = B.hot_ncols;
    shell->hot_nrows = B.hot_nrows;
    shell->nchunks = B.nchunks;
    D->hot_row = hot_row;
  }
  if (B.hot_nnz == 0) { /* all cold: the CSR itself, as mx_format_build_borrow (identity gather map) */
    D->cold_identity = true;
    D->cold_nnz = shell->cold_nnz = B.nnz;
    D->cold_val = B.val;
    D->cold_rowptr = B.rowptr;
    D->cold_col = B.col;
    mx_cuda_free_on(D, &D->hot_row, (size_t)B.nchunks * MX_CHUNK_ROWS);
    shell->nchunks = 0;
    D->mode = MX_HOT_NONE;
    return 0;
  }

  uint8_t *hot;
  if (mx_scratch_alloc(D, W, &hot, (size_t)B.nnz, "alloc entry flags")) return 1;
  k_entry_hot<<<nblocks_for(B.nnz), MX_BUILD_THREADS>>>(B.nnz, B.m, B.rowptr, B.col, B.slot, B.hot_col, hot);
  MX_LAUNCH_CHECK("entry flags");
  if (build_cold(D, W, B, hot)) return 1;
  mx_trace_step("build: cold CSR");
  if (build_hot(D, W, B, hot, req, shell)) return 1;
  D->val_in = B.val; /* the uploaded values stay as the refresh staging buffer */
  D->nchunks = B.nchunks;
  D->hot_nnz = shell->hot_nnz = B.hot_nnz;
  shell->cold_nnz = D->cold_nnz;
  return mx_cuda_check(cudaDeviceSynchronize(), "mx_device_build");
}

int mx_build_on_device(const mx_csr *A, mx_crux c, mx_mode_request req, mx_device *D, mx_format *shell) {
  if (check_input(A, req)) return 1;
  build_state B = {};
  const int rc = build(A, c, req, D, shell, B);
  if (!D->cold_identity) { /* the input CSR's structure: in the format now, or a failed build's */
    mx_cuda_free_on(D, &B.rowptr, (size_t)B.m + 1);
    mx_cuda_free_on(D, &B.col, (size_t)B.nnz);
  }
  if (D->val_in != B.val && D->cold_val != B.val) mx_cuda_free_on(D, &B.val, (size_t)B.nnz); /* a failed build's */
  return rc;
}

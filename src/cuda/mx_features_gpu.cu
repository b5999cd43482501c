/* mx_features_gpu.cu - the predictor's feature counts (mx_feature_counts, core/mx_features.h) of a
 * matrix already on the GPU, so that predicting a plan costs a few passes over device memory instead
 * of 10-25 ns per nonzero on the host. Every count is an integer (integer atomics only), the length
 * histograms are copied back and the features are finished by the core's mx_features_from_counts:
 * the result equals mx_features_compute on the same CSR bit for bit (tests/cuda/test_cuda_features).
 *
 * Passes, all on the default stream, one synchronisation at the end:
 *   1. one warp per row: row length, diag/upper/band/span counts, the 8-row-group keys
 *      (group << cbits | column) of the original order;
 *   1b. column lengths: the column indices radix-sorted and run-length encoded (CUB; no atomics, which
 *      hub columns of power-law graphs would serialise);
 *   2. CUB max + histogram of the row and of the column lengths;
 *   3. CUB radix sort of the keys, distinct keys counted = sum over groups of distinct columns;
 *   4. rows stably sorted by length, descending (CUB; ties keep the index order, as the core's
 *      counting sort), keys again with the sorted rank's group, sort, count. */
#include <cub/cub.cuh>
#include "../core/mx_features.h"
#include "mx_scratch.cuh"

namespace {

enum { C_DIAG, C_UPPER, C_BAND_MAX, C_BAND_SUM, C_NONEMPTY, C_SPAN, C_LONG32, C_ADJ, C_CELLS, C_DISTINCT, C_NCOUNTS };

constexpr int kWarpsPerBlock = 8;

/* bits needed to write v (0 for 0) */
int bits_for(uint64_t v) {
  int b = 0;
  while (v) ++b, v >>= 1;
  return b;
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ long long warp_min(long long v) {
  for (int o = 16; o > 0; o >>= 1) v = min(v, (long long)__shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ long long warp_max(long long v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, (long long)__shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* Pass 1 (one warp per row i): the positional counts, row and column lengths, the keys of the
 * original order. Per-warp results are added into the block's shared counters, then the block's
 * into the global ones (integer atomics: the totals do not depend on the order). */
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
row_pass(int m, const int *__restrict__ rowptr, const int *__restrict__ col, int cbits, int *rowlen, uint64_t *keys,
         unsigned long long *counts) {
  __shared__ unsigned long long s[C_NCOUNTS];
  if (threadIdx.x < C_NCOUNTS) s[threadIdx.x] = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int i = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (i < m) {
    const int beg = rowptr[i], end = rowptr[i + 1];
    unsigned long long diag = 0, upper = 0, bsum = 0;
    long long bmax = 0, jmin = LLONG_MAX, jmax = -1;
    const uint64_t group = (uint64_t)(i / MX_CHUNK_ROWS) << cbits;
    for (int k = beg + lane; k < end; k += 32) {
      const int j = col[k];
      const long long d = j > i ? (long long)j - i : (long long)i - j;
      diag += j == i;
      upper += j > i;
      bsum += (unsigned long long)d;
      bmax = max(bmax, d);
      jmin = min(jmin, (long long)j);
      jmax = max(jmax, (long long)j);
      keys[k] = group | (uint64_t)j;
    }
    diag = warp_sum(diag);
    upper = warp_sum(upper);
    bsum = warp_sum(bsum);
    bmax = warp_max(bmax);
    jmin = warp_min(jmin);
    jmax = warp_max(jmax);
    if (lane == 0) {
      const int len = end - beg;
      rowlen[i] = len;
      atomicAdd(&s[C_DIAG], diag);
      atomicAdd(&s[C_UPPER], upper);
      atomicAdd(&s[C_BAND_SUM], bsum);
      atomicMax(&s[C_BAND_MAX], (unsigned long long)bmax);
      if (jmax >= 0) atomicAdd(&s[C_NONEMPTY], 1ull), atomicAdd(&s[C_SPAN], (unsigned long long)(jmax - jmin + 1));
      if (len > 32) atomicAdd(&s[C_LONG32], (unsigned long long)len);
      if (i + 1 < m) {
        const int next = rowptr[i + 2] - end;
        atomicAdd(&s[C_ADJ], (unsigned long long)(len > next ? len - next : next - len));
      }
      if (i % MX_CHUNK_ROWS == 0) { /* the group starting at row i: 8 * its longest row */
        int w = 0;
        for (int r = i; r < m && r < i + MX_CHUNK_ROWS; ++r) w = max(w, rowptr[r + 1] - rowptr[r]);
        atomicAdd(&s[C_CELLS], (unsigned long long)MX_CHUNK_ROWS * (unsigned long long)w);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x < C_NCOUNTS && s[threadIdx.x]) {
    if (threadIdx.x == C_BAND_MAX) atomicMax(counts + C_BAND_MAX, s[C_BAND_MAX]);
    else atomicAdd(counts + threadIdx.x, s[threadIdx.x]);
  }
}

/* keys of the sorted order: row i sits at rank[i], its group is rank[i] / 8 (one warp per row) */
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
sorted_keys(int m, const int *__restrict__ rowptr, const int *__restrict__ col, const int *__restrict__ rank, int cbits,
            uint64_t *keys) {
  const int i = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (i >= m) return;
  const uint64_t group = (uint64_t)(rank[i] / MX_CHUNK_ROWS) << cbits;
  for (int k = rowptr[i] + (threadIdx.x & 31); k < rowptr[i + 1]; k += 32) keys[k] = group | (uint64_t)col[k];
}

/* collen[col[i]] = len[i] for the nruns distinct columns */
__global__ void scatter_lengths(const int *__restrict__ nruns, const int *__restrict__ cols, const int *__restrict__ len,
                                int *collen) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < *nruns) collen[cols[i]] = len[i];
}

/* Column lengths of the nnz column indices col (sorted through k32, two nnz-int buffers) into collen
 * (n ints, zeroed here). */
int column_lengths(mx_device *D, mx_scratch &W, const int *col, int nnz, int n, int cbits, int *k32a, int *k32b,
                   int *collen) {
  MX_CUDA_TRY(cudaMemset(collen, 0, sizeof(int) * (size_t)std::max(n, 1)));
  if (nnz == 0) return 0;
  int *uniq, *len, *nruns;
  if (mx_scratch_alloc(D, W, &uniq, (size_t)n, "alloc feature distinct columns") ||
      mx_scratch_alloc(D, W, &len, (size_t)n, "alloc feature column runs") ||
      mx_scratch_alloc(D, W, &nruns, 1, "alloc feature run count"))
    return 1;
  MX_CUDA_TRY(cudaMemcpy(k32a, col, sizeof(int) * (size_t)nnz, cudaMemcpyDeviceToDevice));
  cub::DoubleBuffer<int> keys(k32a, k32b);
  if (mx_cub_run(D, W, "sort columns", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortKeys(t, b, keys, nnz, 0, std::max(1, cbits)); })) return 1;
  if (mx_cub_run(D, W, "count columns", [&](void *t, size_t &b) { return cub::DeviceRunLengthEncode::Encode(t, b, keys.Current(), uniq, len, nruns, nnz); })) return 1;
  scatter_lengths<<<(n + 255) / 256, 256>>>(nruns, uniq, len, collen);
  MX_LAUNCH_CHECK("feature scatter_lengths launch");
  return 0;
}

/* idx[i] = i */
__global__ void iota(int m, int *idx) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) idx[i] = i;
}

/* rank[perm[t]] = t */
__global__ void invert(int m, const int *__restrict__ perm, int *rank) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < m) rank[perm[t]] = t;
}

/* counts[C_DISTINCT] += #{k : k = 0 or keys[k] != keys[k-1]} over sorted keys */
__global__ void count_distinct(int n, const uint64_t *__restrict__ keys, unsigned long long *counts) {
  __shared__ unsigned long long s;
  if (threadIdx.x == 0) s = 0;
  __syncthreads();
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const bool head = k < n && (k == 0 || keys[k] != keys[k - 1]);
  const unsigned long long w = __popc(__ballot_sync(0xffffffffu, head));
  if ((threadIdx.x & 31) == 0 && w) atomicAdd(&s, w);
  __syncthreads();
  if (threadIdx.x == 0 && s) atomicAdd(counts + C_DISTINCT, s);
}

/* Distinct keys of keys[0..nnz) (sorted in place through the double buffer B), added to
 * counts[C_DISTINCT] then read back into *distinct. */
int distinct_keys(mx_device *D, mx_scratch &W, cub::DoubleBuffer<uint64_t> &B, int nnz, int end_bit,
                  unsigned long long *counts, int64_t *distinct) {
  unsigned long long zero = 0, got = 0;
  MX_CUDA_TRY(cudaMemcpy(counts + C_DISTINCT, &zero, sizeof zero, cudaMemcpyHostToDevice));
  if (nnz > 0) {
    if (mx_cub_run(D, W, "sort feature keys", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortKeys(t, b, B, nnz, 0, end_bit); })) return 1;
    count_distinct<<<(nnz + 255) / 256, 256>>>(nnz, B.Current(), counts);
    MX_LAUNCH_CHECK("count_distinct launch");
  }
  MX_CUDA_TRY(cudaMemcpy(&got, counts + C_DISTINCT, sizeof got, cudaMemcpyDeviceToHost));
  *distinct = (int64_t)got;
  return 0;
}

/* hist[l] = #{i < n : len[i] = l}, l = 0..*maxl, on the host (empty when n = 0). */
int length_hist(mx_device *D, mx_scratch &W, const int *len, int n, std::vector<int64_t> &hist, int32_t *maxl) {
  hist.clear();
  *maxl = 0;
  if (n == 0) return 0;
  int *d_max, *d_hist;
  if (mx_scratch_alloc(D, W, &d_max, 1, "alloc feature max")) return 1;
  if (mx_cub_run(D, W, "max length", [&](void *t, size_t &b) { return cub::DeviceReduce::Max(t, b, len, d_max, n); })) return 1;
  MX_CUDA_TRY(cudaMemcpy(maxl, d_max, sizeof(int), cudaMemcpyDeviceToHost));
  const int bins = *maxl + 1;
  if (mx_scratch_alloc(D, W, &d_hist, (size_t)bins, "alloc length histogram")) return 1;
  if (mx_cub_run(D, W, "length histogram", [&](void *t, size_t &b) { return cub::DeviceHistogram::HistogramEven(t, b, len, d_hist, bins + 1, 0, bins, n); })) return 1;
  std::vector<int> h32((size_t)bins);
  MX_CUDA_TRY(cudaMemcpy(h32.data(), d_hist, sizeof(int) * (size_t)bins, cudaMemcpyDeviceToHost));
  hist.assign(h32.begin(), h32.end());
  return 0;
}

int device_counts(mx_device *D, mx_feature_counts *c, std::vector<int64_t> &row_hist, std::vector<int64_t> &col_hist) {
  const int m = D->nrows, n = D->ncols, nnz = D->cold_nnz;
  const int cbits = bits_for(n > 0 ? (uint64_t)n - 1 : 0);
  const int gbits = bits_for(m > 0 ? (uint64_t)(m - 1) / MX_CHUNK_ROWS : 0);
  const int end_bit = std::max(1, cbits + gbits);
  mx_scratch W;
  int *rowlen, *collen, *idx, *perm, *rank, *len_sorted;
  uint64_t *k0, *k1;
  unsigned long long *counts;
  if (mx_scratch_alloc(D, W, &rowlen, (size_t)m, "alloc feature row lengths") ||
      mx_scratch_alloc(D, W, &collen, (size_t)n, "alloc feature column lengths") ||
      mx_scratch_alloc(D, W, &counts, C_NCOUNTS, "alloc feature counts") ||
      mx_scratch_alloc(D, W, &k0, (size_t)nnz, "alloc feature keys") ||
      mx_scratch_alloc(D, W, &k1, (size_t)nnz, "alloc feature keys (sort buffer)"))
    return 1;
  MX_CUDA_TRY(cudaMemset(counts, 0, sizeof(unsigned long long) * C_NCOUNTS));
  mx_trace_step("features: scratch");
  /* the key buffers are free until pass 1 writes them: the column sort uses them as int buffers */
  if (column_lengths(D, W, D->cold_col, nnz, n, cbits, (int *)k0, (int *)k1, collen)) return 1;
  const int row_blocks = (m + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (m > 0) {
    row_pass<<<row_blocks, 32 * kWarpsPerBlock>>>(m, D->cold_rowptr, D->cold_col, cbits, rowlen, k0, counts);
    MX_LAUNCH_CHECK("feature row_pass launch");
  }
  mx_trace_step("features: column lengths, rows");
  if (length_hist(D, W, rowlen, m, row_hist, &c->row_maxl) || length_hist(D, W, collen, n, col_hist, &c->col_maxl)) return 1;
  mx_trace_step("features: length histograms");
  cub::DoubleBuffer<uint64_t> keys(k0, k1);
  if (distinct_keys(D, W, keys, nnz, end_bit, counts, &c->chunk8_distinct)) return 1;
  mx_trace_step("features: 8-row groups (sort)");
  if (m > 0) {
    if (mx_scratch_alloc(D, W, &idx, (size_t)m, "alloc feature row index") ||
        mx_scratch_alloc(D, W, &perm, (size_t)m, "alloc feature row order") ||
        mx_scratch_alloc(D, W, &rank, (size_t)m, "alloc feature row rank") ||
        mx_scratch_alloc(D, W, &len_sorted, (size_t)m, "alloc feature sorted lengths"))
      return 1;
    iota<<<(m + 255) / 256, 256>>>(m, idx);
    MX_LAUNCH_CHECK("feature iota launch");
    const int len_bits = std::max(1, bits_for((uint64_t)c->row_maxl));
    if (mx_cub_run(D, W, "sort rows by length", [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairsDescending(t, b, rowlen, len_sorted, idx, perm, m, 0, len_bits); })) return 1;
    invert<<<(m + 255) / 256, 256>>>(m, perm, rank);
    MX_LAUNCH_CHECK("feature invert launch");
    keys = cub::DoubleBuffer<uint64_t>(k0, k1);
    sorted_keys<<<row_blocks, 32 * kWarpsPerBlock>>>(m, D->cold_rowptr, D->cold_col, rank, cbits, k0);
    MX_LAUNCH_CHECK("feature sorted_keys launch");
  }
  if (distinct_keys(D, W, keys, nnz, end_bit, counts, &c->chunk8_sorted_distinct)) return 1;
  mx_trace_step("features: sorted groups (sort)");
  unsigned long long h[C_NCOUNTS];
  MX_CUDA_TRY(cudaMemcpy(h, counts, sizeof h, cudaMemcpyDeviceToHost));
  c->diag = (int64_t)h[C_DIAG];
  c->upper = (int64_t)h[C_UPPER];
  c->band_max = (int64_t)h[C_BAND_MAX];
  c->band_sum = (int64_t)h[C_BAND_SUM];
  c->nonempty_rows = (int64_t)h[C_NONEMPTY];
  c->span_sum = (int64_t)h[C_SPAN];
  c->long32_nnz = (int64_t)h[C_LONG32];
  c->adj_sum = (int64_t)h[C_ADJ];
  c->ell8_cells = (int64_t)h[C_CELLS];
  return 0;
}

} // namespace

extern "C" int mx_device_features(mx_device *D, mx_features *f) {
  if (!D || !f) return mx_fail("mx_device_features: NULL argument");
  if (!D->cold_identity || D->xhot_cold)
    return mx_fail("mx_device_features: the device format does not hold the whole matrix as plain CSR (a hot part or x-hot codes)");
  mx_feature_counts c = {};
  std::vector<int64_t> row_hist, col_hist;
  c.nrows = D->nrows;
  c.ncols = D->ncols;
  c.nnz = D->cold_nnz;
  mx_trace_step(nullptr);
  if (device_counts(D, &c, row_hist, col_hist)) return 1;
  c.row_hist = row_hist.empty() ? nullptr : row_hist.data();
  c.col_hist = col_hist.empty() ? nullptr : col_hist.data();
  const mx_status st = mx_features_from_counts(&c, f);
  if (st != MX_OK) return mx_fail("mx_device_features: mx_features_from_counts failed (status %d)", (int)st);
  return 0;
}

/* mx_features_gpu.cu - the predictor's feature counts (mx_feature_counts, core/mx_features.h) of a
 * matrix already on the GPU, so that predicting a plan costs a few passes over device memory instead
 * of 10-25 ns per nonzero on the host. Every count is an integer (integer atomics only), the length
 * histograms' non-empty bins are copied back and the features are finished by the core's
 * mx_features_from_counts: the result equals mx_features_compute on the same CSR bit for bit
 * (tests/cuda/test_cuda_features).
 *
 * Passes, all queued on the stream of the device's kept workspace (mx_workspace: stream, event, scratch
 * and pinned buffer made once per process) by mx_device_features_start, the host waiting for none of
 * them; mx_device_features_finish reads what they copied back once they ran:
 *   1. one thread per row (a warp per row longer than kWideRow): row length, diag/upper/band/span
 *      counts, and every entry added to its column's length (integer reductions; a hub column's adds
 *      queue at one L2 line, which on an H100 cost less than the radix sort of the columns that
 *      counted them before); rows longer than kLongRow are listed and their entries (these counts
 *      too) spread over several blocks each (long_rows_pass, in pass 3);
 *   2. the histogram of the row lengths and its maximum (in pass 1; warp-aggregated atomics into a
 *      histogram as long as a length can be without repeated entries, so nothing waits for the maximum), its
 *      non-zero bins listed as (length, count) pairs: what the host reads back is a few thousand
 *      pairs, not the 10^5+ bins of a power-law graph's histograms;
 *   3. the distinct columns of each 8-row group: its columns inserted into a hash table of twice its
 *      entries (a warp's in shared memory for a small group, a block's for a larger one, in shared
 *      memory or global); the inserts that found their column absent are the distinct columns
 *      whatever the order of the inserts, so no sort of the entries is needed;
 *   4. pass 2 on the column lengths (complete once the long rows are counted);
 *   5. rows stably sorted by length, descending (CUB; ties keep the index order, as the core's
 *      counting sort; on the bits of the longest row where the upload measured it, else of nnz: no
 *      row is longer, and nothing waits for the longest row), then pass 3 on the sorted groups;
 *   6. one copy of the counters, the long rows' extreme columns and the pairs to the pinned buffer
 *      (finish reads them from there: no copy call, no second wait).
 * After 2, the value counts: a warp per row (the long rows spread as in 3) counts the entries equal
 * to the row's first and marks each column's first entry, then a pass over the entries counts those
 * equal to their column's first. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cub/cub.cuh>
#include <new>
#include "../core/mx_features.h"
#include "mx_scratch.cuh"

namespace {

/* slots of the device counters: row_pass's sums (C_DIAG..C_CELLS), the two distinct-key counts, the
 * longest row and column, the rows and columns longer than their histogram, the long rows listed,
 * the histograms' non-zero bins listed, the entries equal to their row's and their column's first
 * (the value passes) (integer atomics only: the totals do not depend on the order) */
enum { C_DIAG, C_UPPER, C_BAND_MAX, C_BAND_SUM, C_NONEMPTY, C_SPAN, C_LONG32, C_ADJ, C_CELLS, C_DISTINCT, C_SORTED_DISTINCT,
       C_ROW_MAX, C_COL_MAX, C_ROW_OVER, C_COL_OVER, C_NLONG, C_NPAIRS, C_TABLES, C_SORTED_TABLES, C_NBIG, C_SORTED_NBIG,
       C_NGLOBAL, C_SORTED_NGLOBAL, C_VAL_ROW_EQ, C_VAL_COL_EQ,
       C_NCOUNTS };

/* the slots of one order's 8-row groups (pass 3): distinct columns, ints of global hash tables
 * taken, groups listed as big with a shared-memory table, and with a global one */
struct order_slots {
  int distinct, tables, nbig, nglobal;
};
constexpr order_slots kOriginalOrder = {C_DISTINCT, C_TABLES, C_NBIG, C_NGLOBAL},
                      kSortedOrder = {C_SORTED_DISTINCT, C_SORTED_TABLES, C_SORTED_NBIG, C_SORTED_NGLOBAL};

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

/* hist[l] += 1 for the lengths l of a warp's lanes with 0 <= l <= bound (l = -1: no length): the
 * lanes holding the same length add once (stencil and power-law lengths repeat within a warp, which
 * would serialise plain atomics on a few bins). All 32 lanes must call it. */
__device__ __forceinline__ void add_to_histogram(int l, int bound, int *hist) {
  const unsigned peers = __match_any_sync(0xffffffffu, l);
  if (l >= 0 && l <= bound && (int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(hist + l, __popc(peers));
}

/* f(col[k]) for the entries k = beg + t + stride q of [beg, end) (thread t of stride threads on
 * the row): the loads of kBatch entries are issued before any is used, so that a long row keeps
 * kBatch loads in flight instead of one: a power-law hub row, one load at a time, is latency-bound
 * (docs/performance.md, "Behind the source's constants"). */
constexpr int kBatch = 8;
template <typename F>
__device__ __forceinline__ void for_row_entries(int beg, int end, int t, int stride, const int *__restrict__ col, F f) {
  for (int k0 = beg + t; k0 < end; k0 += stride * kBatch) {
    int j[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) j[u] = k0 + stride * u < end ? col[k0 + stride * u] : -1; /* -1: past the row */
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (j[u] >= 0) f(j[u]);
  }
}

/* slot of column j in a table of size slots: the multiplicative hash's high bits, mapped onto
 * [0, size) by a multiply (no division) */
__device__ __forceinline__ unsigned hash_slot(int j, unsigned size) { return __umulhi((unsigned)j * 2654435761u, size); }

/* Inserts the columns col[at(e)] of the entries e = t + stride q of [0, nent) (thread t of stride
 * threads) into the open-addressing table tab[0..size) (-1 = empty; linear probing; size > the
 * distinct columns inserted, so that a probe always ends) and calls f(j) on each; returns how many
 * this thread inserted (found the column absent). Whatever the order of the threads' CAS, each
 * distinct column is inserted exactly once. The loads and first probes of kBatch entries are in
 * flight together. */
template <typename At, typename F>
__device__ __forceinline__ unsigned insert_entries(int nent, int t, int stride, At at, const int *__restrict__ col, int *tab,
                                                   unsigned size, F f) {
  unsigned inserted = 0;
  for (int e0 = t; e0 < nent; e0 += stride * kBatch) {
    int j[kBatch], old[kBatch];
    unsigned h[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) j[u] = e0 + stride * u < nent ? col[at(e0 + stride * u)] : -1; /* -1: past the end */
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (j[u] >= 0) h[u] = hash_slot(j[u], size), old[u] = atomicCAS(tab + h[u], -1, j[u]);
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (j[u] >= 0) {
        while (old[u] != -1 && old[u] != j[u]) {
          h[u] = h[u] + 1 == size ? 0 : h[u] + 1;
          old[u] = atomicCAS(tab + h[u], -1, j[u]);
        }
        inserted += old[u] == -1;
        f(j[u]);
      }
  }
  return inserted;
}

/* Rows longer than kLongRow are not a warp's: row_pass lists them (long_rows, counted in
 * counts[C_NLONG]) and long_rows_pass spreads each over kLongBlocks blocks (a star graph's one row of
 * n entries would otherwise be one warp's serial loop). There are at most nnz / (kLongRow + 1) of them. */
constexpr int kLongRow = 32 * kBatch * 16;
constexpr int kLongBlocks = 16, kLongRowsAtOnce = 64, kLongThreads = 256;

/* row_pass's per-entry counts of one row i over the entries a thread sees, then reduced over its warp:
 * diagonal and upper entries, the sum and maximum of |i - j|, the extreme columns (jmax = -1: none);
 * and each entry counted into its column's length (collen[j] += 1: a reduction that returns nothing,
 * so that no thread waits for it; a hub column's adds queue at its L2 line) */
struct entry_stats {
  int *collen;
  unsigned long long diag = 0, upper = 0, bsum = 0;
  long long bmax = 0, jmin = LLONG_MAX, jmax = -1;
  __device__ __forceinline__ explicit entry_stats(int *collen_) : collen(collen_) {}
  __device__ __forceinline__ void add(int i, int j) {
    const long long d = j > i ? (long long)j - i : (long long)i - j;
    atomicAdd(collen + j, 1);
    diag += j == i;
    upper += j > i;
    bsum += (unsigned long long)d;
    bmax = max(bmax, d);
    jmin = min(jmin, (long long)j);
    jmax = max(jmax, (long long)j);
  }
  __device__ __forceinline__ void warp_reduce() {
    diag = warp_sum(diag);
    upper = warp_sum(upper);
    bsum = warp_sum(bsum);
    bmax = warp_max(bmax);
    jmin = warp_min(jmin);
    jmax = warp_max(jmax);
  }
};

/* the counters taken as a maximum (atomicMax); the others are sums */
__device__ __forceinline__ bool is_max_slot(int q) { return q == C_BAND_MAX || q == C_ROW_MAX; }

/* Pass 1, one thread per row i (blocks of 32 kWarpsPerBlock consecutive rows: a warp's lanes are 32
 * consecutive rows, 8 of its lanes an 8-row group): the positional counts, row lengths (and idx[i]
 * = i, the row sort's values), their histogram (pass 2's: row_hist bounded by n, its maximum and the
 * rows beyond in counts) and the column lengths (collen, zeroed before; long_rows_pass adds the long
 * rows' entries). A thread takes its row's entries alone when it has at most kWideRow, else its warp takes them together (the
 * warp's wide rows one after the other); a row longer than kLongRow is only listed (long_rows_pass
 * takes its entries). Sums over the warp, then the block's shared counters, then one atomic per
 * counter and block (integer atomics: the totals do not depend on the order). */
constexpr int kWideRow = 32;

__global__ void __launch_bounds__(32 * kWarpsPerBlock)
row_pass(int m, int n, const int *__restrict__ rowptr, const int *__restrict__ col, int *rowlen, int *idx, int *collen,
         int *row_hist, unsigned long long *counts, int *long_rows) {
  __shared__ unsigned long long s[C_NCOUNTS];
  if (threadIdx.x < C_NCOUNTS) s[threadIdx.x] = 0;
  __syncthreads();
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int beg = 0, len = 0; /* rows past m: none, no entries */
  if (i < m) beg = rowptr[i], len = rowptr[i + 1] - beg;
  entry_stats e(collen);
  if (len <= kWideRow) for_row_entries(beg, beg + len, 0, 1, col, [&](int j) { e.add(i, j); });
  for (unsigned wide = __ballot_sync(full, len > kWideRow && len <= kLongRow); wide; wide &= wide - 1) {
    const int r = __ffs(wide) - 1, ir = __shfl_sync(full, i, r), br = __shfl_sync(full, beg, r), lr = __shfl_sync(full, len, r);
    entry_stats ew(collen);
    for_row_entries(br, br + lr, lane, 32, col, [&](int j) { ew.add(ir, j); });
    ew.warp_reduce();
    if (lane == r) e = ew;
  }
  if (len > kLongRow) long_rows[atomicAdd(&counts[C_NLONG], 1ull)] = i;
  if (i < m) rowlen[i] = len, idx[i] = i; /* idx: the row sort's values */
  add_to_histogram(i < m ? len : -1, n, row_hist);
  int next = __shfl_down_sync(full, len, 1); /* row i + 1's length; lane 31 loads it */
  if (lane == 31 && i + 1 < m) next = rowptr[i + 2] - rowptr[i + 1];
  int group_max = len; /* the longest row of i's 8-row group, in the group's 8 lanes */
  for (int o = 1; o < MX_CHUNK_ROWS; o <<= 1) group_max = max(group_max, __shfl_xor_sync(full, group_max, o));
  const bool nonempty = e.jmax >= 0;
  const unsigned long long v[] = {
      warp_sum(e.diag), warp_sum(e.upper), warp_sum(e.bsum), (unsigned long long)warp_max(e.bmax),
      warp_sum(nonempty), warp_sum(nonempty ? (unsigned long long)(e.jmax - e.jmin + 1) : 0ull),
      warp_sum(len > 32 ? (unsigned long long)len : 0ull),
      warp_sum(i + 1 < m ? (unsigned long long)(len > next ? len - next : next - len) : 0ull),
      warp_sum(i < m && i % MX_CHUNK_ROWS == 0 ? (unsigned long long)MX_CHUNK_ROWS * (unsigned long long)group_max : 0ull),
      (unsigned long long)warp_max(len), warp_sum(len > n)};
  const int slot[] = {C_DIAG, C_UPPER, C_BAND_SUM, C_BAND_MAX, C_NONEMPTY, C_SPAN, C_LONG32, C_ADJ, C_CELLS, C_ROW_MAX, C_ROW_OVER};
  if (lane == 0)
    for (int q = 0; q < (int)(sizeof slot / sizeof slot[0]); ++q)
      if (v[q]) is_max_slot(slot[q]) ? atomicMax(&s[slot[q]], v[q]) : atomicAdd(&s[slot[q]], v[q]);
  __syncthreads();
  if (threadIdx.x < C_NCOUNTS && s[threadIdx.x]) {
    if (is_max_slot(threadIdx.x)) atomicMax(counts + threadIdx.x, s[threadIdx.x]);
    else atomicAdd(counts + threadIdx.x, s[threadIdx.x]);
  }
}

/* Pass 3 counts each 8-row group's distinct columns into counts[S.distinct] by inserting them into a
 * hash table of twice the group's entries E: by one warp in shared memory when E <= kSmallGroup
 * (group_distinct), else by one block (big_groups), of kBigThreads in shared memory when E <=
 * kBlockGroup, else of kGlobalThreads in a global table (ints taken from counts[S.tables], its offset
 * and size kept in group_tab_off/size[g]; the four times wider block cuts the longest groups' serial
 * rounds of loads and CAS), whose rows longer than kLongRow long_rows_pass inserts after them. */
constexpr int kSmallGroup = 256, kBlockGroup = 4096, kBigThreads = 256, kGlobalThreads = 1024;
static_assert(kBlockGroup <= kLongRow, "a group with a long row has a global table (long_rows_pass inserts into it)");

/* The rows of 8-row group g (rows 8g.. of the original order, or perm[8g..] of the rows sorted by
 * length) with their entries in one sequence: entry e of [0, pre[8]) is col[beg[r] + e - pre[r]] for
 * the row r with pre[r] <= e < pre[r + 1]; rows longer than kLongRow count no entries here
 * (long_rows_pass inserts them); all = every entry of the group. Every thread of a warp or block
 * loads the same few values (broadcast loads), so that the threads take the group's entries together
 * whatever its rows' lengths. */
struct group_entries {
  int beg[MX_CHUNK_ROWS], pre[MX_CHUNK_ROWS + 1];
  unsigned long long all;
  __device__ __forceinline__ void load(int m, const int *__restrict__ rowptr, const int *__restrict__ perm, long long g) {
    const long long first = g * MX_CHUNK_ROWS;
    pre[0] = 0;
    all = 0;
#pragma unroll
    for (int r = 0; r < MX_CHUNK_ROWS; ++r) {
      int len = 0;
      beg[r] = 0;
      if (first + r < m) {
        const int i = perm ? perm[first + r] : (int)(first + r);
        beg[r] = rowptr[i];
        len = rowptr[i + 1] - beg[r];
      }
      all += (unsigned long long)len;
      pre[r + 1] = pre[r] + (len > kLongRow ? 0 : len);
    }
  }
  __device__ __forceinline__ int at(int e) const { /* registers only: no indexing by a run-time value */
    int k = 0;
#pragma unroll
    for (int r = 0; r < MX_CHUNK_ROWS; ++r)
      if (e >= pre[r] && e < pre[r + 1]) k = beg[r] + e - pre[r];
    return k;
  }
};

/* One warp per group g: a small group counted here; a big one listed in big[0..ngroups): from the
 * front (counted in counts[S.nbig]), or given its global table when E > kBlockGroup and listed from
 * the back (big[ngroups - 1 - k], counted in counts[S.nglobal]; the two lists together hold at most
 * ngroups). Inserts are summed per block, then added once. */
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
group_distinct(int m, const int *__restrict__ rowptr, const int *__restrict__ col, const int *__restrict__ perm,
               unsigned long long *counts, order_slots S, int *big, unsigned long long *group_tab_off, unsigned *group_tab_size) {
  const int ngroups = (m + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS;
  __shared__ int small[kWarpsPerBlock][2 * kSmallGroup];
  __shared__ unsigned long long block_inserted;
  if (threadIdx.x == 0) block_inserted = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  const long long g = (long long)blockIdx.x * kWarpsPerBlock + w;
  unsigned long long inserted = 0;
  if (g * MX_CHUNK_ROWS < m) { /* warp-uniform */
    group_entries G;
    G.load(m, rowptr, perm, g);
    const unsigned size = (unsigned)(2 * G.all); /* E <= nnz < 2^31 */
    if (G.all > kSmallGroup) {
      if (lane == 0 && G.all > kBlockGroup) {
        big[ngroups - 1 - (int)atomicAdd(&counts[S.nglobal], 1ull)] = (int)g;
        group_tab_off[g] = atomicAdd(&counts[S.tables], (unsigned long long)size);
        group_tab_size[g] = size;
      } else if (lane == 0) {
        big[atomicAdd(&counts[S.nbig], 1ull)] = (int)g;
      }
    } else {
      int *tab = small[w];
      for (unsigned q = lane; q < size; q += 32) tab[q] = -1;
      __syncwarp(); /* the cleared table is seen by every lane */
      inserted = insert_entries(G.pre[MX_CHUNK_ROWS], lane, 32, [&](int e) { return G.at(e); }, col, tab, size, [](int) {});
    }
  }
  inserted = warp_sum(inserted);
  if (lane == 0 && inserted) atomicAdd(&block_inserted, inserted);
  __syncthreads();
  if (threadIdx.x == 0 && block_inserted) atomicAdd(&counts[S.distinct], block_inserted);
}

/* One block of THREADS per big group (blockIdx.x + gridDim.x q of those listed), its entries but the
 * long rows' spread over the block's threads; the table cleared by the block first. GLOBAL: the
 * groups listed from the back of big (global tables), else those from the front (shared memory). */
template <int THREADS, bool GLOBAL>
__global__ void __launch_bounds__(THREADS)
big_groups(int m, const int *__restrict__ rowptr, const int *__restrict__ col, const int *__restrict__ perm, const int *__restrict__ big,
           int *tables, const unsigned long long *__restrict__ group_tab_off, unsigned long long *counts, order_slots S) {
  __shared__ int block_tab[GLOBAL ? 1 : 2 * kBlockGroup];
  __shared__ unsigned long long block_inserted;
  if (threadIdx.x == 0) block_inserted = 0;
  __syncthreads();
  const int ngroups = (m + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS;
  const int nlisted = (int)counts[GLOBAL ? S.nglobal : S.nbig];
  unsigned long long inserted = 0;
  for (int b = blockIdx.x; b < nlisted; b += gridDim.x) {
    const int g = GLOBAL ? big[ngroups - 1 - b] : big[b];
    group_entries G;
    G.load(m, rowptr, perm, g);
    const unsigned size = (unsigned)(2 * G.all);
    int *tab = GLOBAL ? tables + group_tab_off[g] : block_tab;
    for (unsigned q = threadIdx.x; q < size; q += THREADS) tab[q] = -1;
    __syncthreads(); /* the cleared table is seen by the whole block */
    inserted += insert_entries(G.pre[MX_CHUNK_ROWS], threadIdx.x, THREADS, [&](int e) { return G.at(e); }, col, tab, size, [](int) {});
    __syncthreads(); /* the table is the next group's */
  }
  inserted = warp_sum(inserted);
  if ((threadIdx.x & 31) == 0 && inserted) atomicAdd(&block_inserted, inserted);
  __syncthreads();
  if (threadIdx.x == 0 && block_inserted) atomicAdd(&counts[S.distinct], block_inserted);
}

/* The entries of the long rows listed by row_pass, kLongBlocks blocks per row (blockIdx.x), rows
 * blockIdx.y + gridDim.y q: inserted into their group's global table (group i / 8 of the original
 * order, or with rank rank[i] / 8 of the sorted order; big_groups cleared it), the inserts added into
 * counts[S.distinct]; with stats also row_pass's per-entry counts, the column lengths (collen) and
 * each row's extreme columns (jmax1[r] = max j + 1, jneg[r] = n - min j; both zeroed before). Warp
 * results go to global atomics (order-free totals). */
template <bool stats>
__global__ void __launch_bounds__(kLongThreads)
long_rows_pass(int n, const int *__restrict__ rowptr, const int *__restrict__ col, const int *__restrict__ long_rows,
               const int *__restrict__ rank, int *tables, const unsigned long long *__restrict__ group_tab_off,
               const unsigned *__restrict__ group_tab_size, unsigned long long *counts, order_slots S, int *collen, int *jmax1, int *jneg) {
  const int nlong = (int)counts[C_NLONG];
  const int t = blockIdx.x * kLongThreads + threadIdx.x, stride = gridDim.x * kLongThreads;
  for (int r = blockIdx.y; r < nlong; r += gridDim.y) {
    const int i = long_rows[r];
    const int g = (stats ? i : rank[i]) / MX_CHUNK_ROWS;
    entry_stats e(collen);
    const int beg = rowptr[i];
    unsigned long long inserted = insert_entries(rowptr[i + 1] - beg, t, stride, [beg](int q) { return beg + q; }, col, tables + group_tab_off[g], group_tab_size[g], [&](int j) {
      if (stats) e.add(i, j);
    });
    inserted = warp_sum(inserted);
    if ((threadIdx.x & 31) == 0 && inserted) atomicAdd(&counts[S.distinct], inserted);
    if (!stats) continue;
    e.warp_reduce();
    if ((threadIdx.x & 31) == 0 && e.jmax >= 0) {
      atomicAdd(&counts[C_DIAG], e.diag);
      atomicAdd(&counts[C_UPPER], e.upper);
      atomicAdd(&counts[C_BAND_SUM], e.bsum);
      atomicMax(&counts[C_BAND_MAX], (unsigned long long)e.bmax);
      atomicMax(&jmax1[r], (int)e.jmax + 1);
      atomicMax(&jneg[r], n - (int)e.jmin);
    }
  }
}

/* The value passes (the core's row_first_eq and col_first_eq). For the entries p = beg + t + stride q
 * of a row [beg, end) whose first value is `first` (thread t of stride threads on the row): how many
 * equal (==) first, and colkey[j] = max(colkey[j], nnz - p) for their columns j (colkey zeroed before,
 * so that nnz - colkey[j] is the position of column j's first entry once every entry was seen). The
 * loads of kBatch entries are issued before any is used (as for_row_entries). */
__device__ __forceinline__ unsigned long long value_row_entries(int beg, int end, int t, int stride, int nnz, double first,
                                                                const int *__restrict__ col, const double *__restrict__ val, int *colkey) {
  unsigned long long eq = 0;
  for (int p0 = beg + t; p0 < end; p0 += stride * kBatch) {
    int j[kBatch];
    double v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int p = p0 + stride * u;
      j[u] = p < end ? col[p] : -1; /* -1: past the row */
      v[u] = p < end ? val[p] : 0.0;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (j[u] >= 0) {
        eq += v[u] == first;
        atomicMax(colkey + j[u], nnz - (p0 + stride * u));
      }
  }
  return eq;
}

/* A warp per row (rows blockIdx.x kWarpsPerBlock + warp, then a grid's warps further) but the rows
 * longer than kLongRow, which row_pass listed and value_long_rows takes; the count summed per warp. */
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
value_row_pass(int m, int nnz, const int *__restrict__ rowptr, const int *__restrict__ col, const double *__restrict__ val, int *colkey,
               unsigned long long *counts) {
  const int lane = threadIdx.x & 31;
  unsigned long long eq = 0;
  for (long long i = (long long)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32; i < m; i += (long long)gridDim.x * kWarpsPerBlock) {
    const int beg = rowptr[i], end = rowptr[i + 1];
    if (beg == end || end - beg > kLongRow) continue; /* warp-uniform */
    eq += value_row_entries(beg, end, lane, 32, nnz, val[beg], col, val, colkey);
  }
  eq = warp_sum(eq);
  if (lane == 0 && eq) atomicAdd(&counts[C_VAL_ROW_EQ], eq);
}

/* The long rows listed by row_pass, each spread over kLongBlocks blocks (blockIdx.x; rows blockIdx.y
 * + gridDim.y q), as long_rows_pass spreads them. */
__global__ void __launch_bounds__(kLongThreads)
value_long_rows(int nnz, const int *__restrict__ rowptr, const int *__restrict__ col, const double *__restrict__ val,
                const int *__restrict__ long_rows, int *colkey, unsigned long long *counts) {
  const int nlong = (int)counts[C_NLONG];
  const int t = blockIdx.x * kLongThreads + threadIdx.x, stride = gridDim.x * kLongThreads;
  unsigned long long eq = 0;
  for (int r = blockIdx.y; r < nlong; r += gridDim.y) {
    const int i = long_rows[r], beg = rowptr[i];
    eq += value_row_entries(beg, rowptr[i + 1], t, stride, nnz, val[beg], col, val, colkey);
  }
  eq = warp_sum(eq);
  if ((threadIdx.x & 31) == 0 && eq) atomicAdd(&counts[C_VAL_ROW_EQ], eq);
}

__global__ void __launch_bounds__(256)
value_col_pass(int nnz, const int *__restrict__ col, const double *__restrict__ val, const int *__restrict__ colkey,
               unsigned long long *counts) {
  unsigned long long eq = 0;
  for (long long p = (long long)blockIdx.x * 256 + threadIdx.x; p < nnz; p += (long long)gridDim.x * 256)
    eq += val[p] == val[nnz - colkey[col[p]]];
  eq = warp_sum(eq);
  if ((threadIdx.x & 31) == 0 && eq) atomicAdd(&counts[C_VAL_COL_EQ], eq);
}

/* hist[l] += 1 for each length l = len[i] <= bound (hist zeroed, bound + 1 long), *over += 1 for each
 * longer one (only a CSR with repeated entries has a row longer than ncols), *maxl = max(*maxl, len)
 * (add_to_histogram; the row lengths' histogram is row_pass's). blockDim is a multiple of 32. */
__global__ void length_hist(int n, const int *__restrict__ len, int bound, int *hist, unsigned long long *maxl,
                            unsigned long long *over) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int l = i < n ? len[i] : -1; /* -1: past the end */
  add_to_histogram(l, bound, hist);
  if (l > bound) atomicAdd(over, 1ull); /* rare: only a CSR with repeated entries */
  const long long top = warp_max(l);
  if ((threadIdx.x & 31) == 0 && top >= 0) atomicMax(maxl, (unsigned long long)top);
}

/* The non-zero bins l <= min(bound, *maxl) of hist appended to pairs as (l, count), or (~l, count) with
 * col (the column histogram): the host tells the two apart by the sign. At most cap pairs are
 * written (*npairs may count beyond: the caller checks; see pair_capacity). */
__global__ void hist_pairs(const int *__restrict__ hist, int bound, const unsigned long long *maxl, bool col, int2 *pairs,
                           unsigned long long *npairs, unsigned long long cap) {
  const long long top = min((long long)bound, (long long)*maxl);
  for (long long l0 = (long long)blockIdx.x * blockDim.x; l0 <= top; l0 += (long long)gridDim.x * blockDim.x) {
    const long long l = l0 + threadIdx.x;
    const int c = l <= top ? hist[l] : 0;
    const unsigned ne = __ballot_sync(0xffffffffu, c != 0), lane = threadIdx.x & 31;
    unsigned long long first = 0;
    if (lane == 0 && ne) first = atomicAdd(npairs, (unsigned long long)__popc(ne));
    first = __shfl_sync(0xffffffffu, first, 0);
    const unsigned long long slot = first + __popc(ne & ((1u << lane) - 1u));
    if (c != 0 && slot < cap) pairs[slot] = make_int2(col ? ~(int)l : (int)l, c);
  }
}

/* rank[perm[t]] = t */
__global__ void invert(int m, const int *__restrict__ perm, int *rank) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < m) rank[perm[t]] = t;
}

/* Every device array of the feature passes, carved out of the device's kept workspace (mx_workspace:
 * no allocation per prediction once a process has made it). The region [0, read_bytes) holds what the
 * host reads back, in one copy queued behind the passes: counts, the long rows' extreme columns and
 * the pairs; the zeroed region [0, zero_bytes) that and both histograms, collen and colkey, so that one
 * memset clears it. A histogram is sized by the longest length a CSR without repeated entries can
 * have (ncols for rows, nrows for columns), so that no pass waits for the maxima; lengths beyond are
 * counted apart (full_hist_to_host then counts again). */
struct feature_arrays {
  unsigned long long *counts;                   /* C_NCOUNTS */
  int *jmax1, *jneg;                            /* nlong_max each: the long rows' extreme columns */
  int2 *pairs;                                  /* pair_cap: the histograms' non-zero bins (hist_pairs) */
  int *row_hist, *col_hist;                     /* ncols + 1, nrows + 1 */
  int *collen;                                  /* ncols */
  int *colkey;                                  /* ncols: value_row_pass's first entries of the columns */
  int *long_rows;                               /* nlong_max: the rows longer than kLongRow */
  int *rowlen, *idx, *perm, *rank, *len_sorted; /* nrows each */
  unsigned long long *group_tab_off;            /* ngroups each: a big group's hash table in tables, */
  unsigned *group_tab_size;                     /* its size, */
  int *big;                                     /* and the big groups' list */
  int *tables;                                  /* 2 nnz: the big groups' hash tables, 2 E ints each: the
                                                   groups of an order hold nnz entries at most, so they
                                                   fit by construction */
  size_t pair_cap, nlong_max;                   /* pairs' and the long rows' capacity */
  size_t zero_bytes, read_bytes;
};

/* the same bytes [0, read_bytes) copied to the host: where each array is there */
struct feature_readback {
  const unsigned long long *counts;
  const int *jmax1, *jneg;
  const int2 *pairs;
};

/* bits of a row-length sort key for rows of at most maxl entries */
int length_bits(int maxl) { return std::max(1, bits_for((uint64_t)maxl)); }

/* Non-zero bins both histograms can have together: k distinct lengths with rows (or columns) of each
 * add up to at least 0 + 1 + ... + (k - 1) = k (k - 1) / 2 <= nnz entries, so k <= sqrt(2 nnz) + 1
 * per histogram. */
size_t pair_capacity(int nnz) { return 2 * ((size_t)std::sqrt(2.0 * (double)nnz) + 2); }

/* The row-length sort, the one CUB pass: keys on the bits of maxl, which no row is longer than
 * (longest_row_bound: nothing waits for the longest row); with A NULL a size query (nothing runs),
 * else A's rows. One function for both, so that the storage sized by the query is the sort's. */
cudaError_t row_sort(void *tmp, size_t &bytes, const feature_arrays *A, int m, int maxl, cudaStream_t s) {
  return cub::DeviceRadixSort::SortPairsDescending(tmp, bytes, A ? A->rowlen : nullptr, A ? A->len_sorted : nullptr, A ? A->idx : nullptr,
                                                   A ? A->perm : nullptr, m, 0, length_bits(maxl), s);
}

/* bytes of CUB temporary storage of the row-length sort (a size query: nothing runs) */
int cub_bytes_needed(int m, int maxl, size_t *need) {
  *need = 0;
  MX_CUDA_TRY(row_sort(nullptr, *need, nullptr, m, maxl, 0));
  return 0;
}

/* the offset after an array of bytes at off, rounded up to 256 bytes */
size_t carve(size_t off, size_t bytes) { return (off + bytes + 255) / 256 * 256; }

/* Byte offsets of A's arrays in one buffer, the last one the row sort's CUB storage (off[NARRAYS]:
 * the whole buffer) */
struct feature_layout {
  enum { NARRAYS = 19, NREAD = 4, NZEROED = 8 };
  size_t off[NARRAYS + 1];
  size_t pair_cap, nlong_max;
};

int feature_layout_of(int m, int n, int nnz, int maxl, feature_layout *L) {
  const size_t M = (size_t)std::max(m, 1), N = (size_t)std::max(n, 1), Z = (size_t)std::max(nnz, 1), I = sizeof(int);
  const size_t G = (M + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS;
  L->nlong_max = (size_t)nnz / (kLongRow + 1) + 1;
  L->pair_cap = pair_capacity(nnz);
  size_t cub_bytes;
  if (cub_bytes_needed(m, maxl, &cub_bytes)) return 1;
  const size_t NL = L->nlong_max;
  const size_t bytes[feature_layout::NARRAYS] = {
      sizeof(unsigned long long) * C_NCOUNTS, I * NL, I * NL, sizeof(int2) * L->pair_cap, /* read back */
      I * ((size_t)n + 1), I * ((size_t)m + 1), I * N, I * N,                            /* zeroed too */
      I * NL, I * M, I * M, I * M, I * M, I * M, sizeof(unsigned long long) * G, sizeof(unsigned) * G, I * G, I * 2 * Z, cub_bytes};
  L->off[0] = 0;
  for (int k = 0; k < feature_layout::NARRAYS; ++k) L->off[k + 1] = carve(L->off[k], bytes[k]);
  return 0;
}

/* A's arrays and W's CUB storage (W.cub, W.cub_bytes: the row sort's) at L's offsets of base */
void feature_arrays_carve(char *base, const feature_layout &L, mx_scratch &W, feature_arrays *A) {
  void **at[feature_layout::NARRAYS] = {(void **)&A->counts, (void **)&A->jmax1, (void **)&A->jneg, (void **)&A->pairs,
                                        (void **)&A->row_hist, (void **)&A->col_hist, (void **)&A->collen, (void **)&A->colkey,
                                        (void **)&A->long_rows, (void **)&A->rowlen, (void **)&A->idx, (void **)&A->perm,
                                        (void **)&A->rank, (void **)&A->len_sorted, (void **)&A->group_tab_off,
                                        (void **)&A->group_tab_size, (void **)&A->big, (void **)&A->tables, &W.cub};
  for (int k = 0; k < feature_layout::NARRAYS; ++k) *at[k] = base + L.off[k];
  A->pair_cap = L.pair_cap;
  A->nlong_max = L.nlong_max;
  A->read_bytes = L.off[feature_layout::NREAD];
  A->zero_bytes = L.off[feature_layout::NZEROED];
  W.cub_bytes = L.off[feature_layout::NARRAYS] - L.off[feature_layout::NARRAYS - 1];
}

/* the read-back copy's arrays at A's offsets of host */
feature_readback readback_of(const void *host, const feature_arrays &A) {
  const char *h = (const char *)host, *d = (const char *)A.counts;
  return {(const unsigned long long *)h, (const int *)(h + ((const char *)A.jmax1 - d)), (const int *)(h + ((const char *)A.jneg - d)),
          (const int2 *)(h + ((const char *)A.pairs - d))};
}

/* Pass 3 on the 8-row groups of the original order (perm NULL, rank unused) or of the rows sorted by
 * length (perm, its inverse rank), into the slots S (m > 0); on the original order also the long rows'
 * positional counts. */
int group_distinct_counts(mx_device *D, mx_scratch &W, const feature_arrays &A, const int *perm, const int *rank, order_slots S, int maxl) {
  const int m = D->nrows, ngroups = (m + MX_CHUNK_ROWS - 1) / MX_CHUNK_ROWS;
  group_distinct<<<(ngroups + kWarpsPerBlock - 1) / kWarpsPerBlock, 32 * kWarpsPerBlock, 0, W.stream>>>(m, D->cold_rowptr, D->cold_col, perm, A.counts, S, A.big, A.group_tab_off, A.group_tab_size);
  MX_LAUNCH_CHECK("feature group_distinct launch");
  /* rows of at most maxl entries: a group holds at most 8 maxl, so the passes below that would find
   * nothing to do are not launched (their launches are most of the host's time on small stencils) */
  const long long group_max = (long long)MX_CHUNK_ROWS * maxl;
  if (group_max <= kSmallGroup) return 0;
  big_groups<kBigThreads, false><<<std::min(ngroups, 2048), kBigThreads, 0, W.stream>>>(m, D->cold_rowptr, D->cold_col, perm, A.big, A.tables, A.group_tab_off, A.counts, S);
  MX_LAUNCH_CHECK("feature big_groups launch");
  if (group_max <= kBlockGroup) return 0;
  big_groups<kGlobalThreads, true><<<std::min(ngroups, 512), kGlobalThreads, 0, W.stream>>>(m, D->cold_rowptr, D->cold_col, perm, A.big, A.tables, A.group_tab_off, A.counts, S);
  MX_LAUNCH_CHECK("feature big_groups (global tables) launch");
  if (perm) long_rows_pass<false><<<dim3(kLongBlocks, kLongRowsAtOnce), kLongThreads, 0, W.stream>>>(D->ncols, D->cold_rowptr, D->cold_col, A.long_rows, rank, A.tables, A.group_tab_off, A.group_tab_size, A.counts, S, nullptr, nullptr, nullptr);
  else long_rows_pass<true><<<dim3(kLongBlocks, kLongRowsAtOnce), kLongThreads, 0, W.stream>>>(D->ncols, D->cold_rowptr, D->cold_col, A.long_rows, nullptr, A.tables, A.group_tab_off, A.group_tab_size, A.counts, S, A.collen, A.jmax1, A.jneg);
  MX_LAUNCH_CHECK("feature long_rows_pass launch");
  return 0;
}

/* rows sorted by length, descending, ties by index (a radix sort is stable): perm, and rank = its
 * inverse (m > 0), no row longer than maxl. W's CUB storage was sized by cub_bytes_needed for these m
 * and maxl (feature_layout_of), so the sort runs without a second size query. */
int sort_rows_by_length(mx_scratch &W, int m, int maxl, const feature_arrays &A) {
  size_t bytes = W.cub_bytes;
  if (mx_cuda_check(row_sort(W.cub, bytes, &A, m, maxl, W.stream), "feature sort rows by length")) return 1;
  invert<<<(m + 255) / 256, 256, 0, W.stream>>>(m, A.perm, A.rank);
  MX_LAUNCH_CHECK("feature invert launch");
  return 0;
}

/* One dimension's length histogram as the host keeps it for mx_features_from_counts (mx_length_bins):
 * the non-empty bins, lengths ascending. */
struct host_bins {
  std::vector<int32_t> len;
  std::vector<int64_t> cnt;
  mx_length_bins view() const { return {len.empty() ? nullptr : len.data(), cnt.empty() ? nullptr : cnt.data(), (int32_t)len.size()}; }
};

/* H = the bins of len[0..items), maxl the longest, counted again on the device into a whole histogram
 * copied back: only for a CSR with repeated entries, whose rows (or columns) can be longer than the
 * histogram the passes filled. */
int full_hist_to_host(mx_device *D, mx_scratch &W, const int *len, int items, int32_t maxl, host_bins &H) {
  std::vector<int> h32((size_t)maxl + 1);
  int *full;
  unsigned long long *dummy;
  if (mx_scratch_alloc(D, W, &full, h32.size(), "alloc feature histogram (repeated entries)") ||
      mx_scratch_alloc(D, W, &dummy, 2, "alloc feature histogram counters"))
    return 1;
  MX_CUDA_TRY(cudaMemsetAsync(full, 0, sizeof(int) * h32.size(), W.stream));
  length_hist<<<(items + 255) / 256, 256, 0, W.stream>>>(items, len, maxl, full, dummy, dummy + 1);
  MX_LAUNCH_CHECK("feature length_hist (repeated entries) launch");
  MX_CUDA_TRY(cudaMemcpyAsync(h32.data(), full, sizeof(int) * h32.size(), cudaMemcpyDeviceToHost, W.stream));
  MX_CUDA_TRY(cudaStreamSynchronize(W.stream));
  H.len.clear();
  H.cnt.clear();
  for (int32_t l = 0; l <= maxl; ++l)
    if (h32[l] > 0) H.len.push_back(l), H.cnt.push_back(h32[l]);
  return 0;
}

/* H = the bins of one dimension from its pairs' keys (length << 32 | count), sorted by length */
void keys_to_bins(std::vector<uint64_t> &keys, host_bins &H) {
  std::sort(keys.begin(), keys.end());
  H.len.resize(keys.size());
  H.cnt.resize(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) H.len[k] = (int32_t)(keys[k] >> 32), H.cnt[k] = (int64_t)(uint32_t)keys[k];
}

/* rows, cols: the bins from the pairs that hist_pairs listed (a row pair (l, c), a column pair (~l, c)),
 * sorted by length (lengths are distinct within a dimension: a sort of 64-bit keys), or counted
 * again (full_hist_to_host) where lengths went beyond the histogram */
int bins_to_host(mx_device *D, mx_scratch &W, const feature_arrays &A, const unsigned long long *h, const int2 *pairs, size_t npairs,
                 host_bins &rows, host_bins &cols) {
  std::vector<uint64_t> rk, ck;
  rk.reserve(npairs);
  ck.reserve(npairs);
  for (size_t k = 0; k < npairs; ++k) {
    const int2 p = pairs[k];
    (p.x >= 0 ? rk : ck).push_back((uint64_t)(p.x >= 0 ? p.x : ~p.x) << 32 | (uint32_t)p.y);
  }
  keys_to_bins(rk, rows);
  keys_to_bins(ck, cols);
  if (D->nrows > 0 && h[C_ROW_OVER] && full_hist_to_host(D, W, A.rowlen, D->nrows, (int32_t)h[C_ROW_MAX], rows)) return 1;
  if (D->ncols > 0 && h[C_COL_OVER] && full_hist_to_host(D, W, A.collen, D->ncols, (int32_t)h[C_COL_MAX], cols)) return 1;
  return 0;
}

/* no row of D is longer: its longest row where the cold rule measured it at upload, else nnz (so
 * that the row sort's keys take the bits needed, and nothing waits for the longest row) */
int longest_row_bound(const mx_device *D) { return D->cold_maxlen >= 0 ? (int)D->cold_maxlen : D->cold_nnz; }

/* the long rows' share of row_pass's row counts (row_pass only listed them): each is non-empty, its
 * span from its extreme columns */
void long_rows_spans(const feature_readback &R, int n, mx_feature_counts *c) {
  const int nlong = (int)R.counts[C_NLONG];
  for (int r = 0; r < nlong; ++r) {
    const long long jmax = R.jmax1[r] - 1, jmin = n - R.jneg[r];
    c->nonempty_rows += 1;
    c->span_sum += jmax - jmin + 1;
  }
}

} // namespace

/* The feature passes of one D queued on its device's kept workspace (stream, event, scratch, pinned
 * read-back buffer: given back with the job), the arrays carved out of the scratch, and rare extra
 * scratch in W (full_hist_to_host, on the workspace's stream). */
struct mx_features_job {
  mx_workspace *ws;
  mx_scratch W;
  feature_arrays A;
  explicit mx_features_job(mx_workspace *w) : ws(w), W(w->stream) {}
};

namespace {

/* Every pass queued on J's stream, then the copy of [0, read_bytes) to the pinned buffer and the
 * event: the host waits for none of them (maxl bounds the rows: the sort reads no longest row back). */
int queue_passes(mx_device *D, mx_features_job &J, int maxl) {
  const int m = D->nrows, n = D->ncols;
  mx_scratch &W = J.W;
  feature_arrays &A = J.A;
  MX_CUDA_TRY(cudaMemsetAsync(A.counts, 0, A.zero_bytes, W.stream));
  if (m > 0) {
    row_pass<<<(m + 32 * kWarpsPerBlock - 1) / (32 * kWarpsPerBlock), 32 * kWarpsPerBlock, 0, W.stream>>>(m, n, D->cold_rowptr, D->cold_col, A.rowlen, A.idx, A.collen, A.row_hist, A.counts, A.long_rows);
    MX_LAUNCH_CHECK("feature row_pass launch");
    mx_trace_step("features: row pass, row lengths' histogram, column lengths");
    hist_pairs<<<std::min((n + 256) / 256, 1024), 256, 0, W.stream>>>(A.row_hist, n, A.counts + C_ROW_MAX, false, A.pairs, A.counts + C_NPAIRS, A.pair_cap);
    MX_LAUNCH_CHECK("feature row hist_pairs launch");
    mx_trace_step("features: row length pairs");
    if (D->cold_nnz > 0) {
      value_row_pass<<<std::min((m + kWarpsPerBlock - 1) / kWarpsPerBlock, 4096), 32 * kWarpsPerBlock, 0, W.stream>>>(m, D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, A.colkey, A.counts);
      MX_LAUNCH_CHECK("feature value_row_pass launch");
      if ((long long)maxl > kLongRow) {
        value_long_rows<<<dim3(kLongBlocks, kLongRowsAtOnce), kLongThreads, 0, W.stream>>>(D->cold_nnz, D->cold_rowptr, D->cold_col, D->cold_val, A.long_rows, A.colkey, A.counts);
        MX_LAUNCH_CHECK("feature value_long_rows launch");
      }
      value_col_pass<<<std::min((D->cold_nnz + 255) / 256, 4096), 256, 0, W.stream>>>(D->cold_nnz, D->cold_col, D->cold_val, A.colkey, A.counts);
      MX_LAUNCH_CHECK("feature value_col_pass launch");
      mx_trace_step("features: values equal to their row's and their column's first");
    }
    if (group_distinct_counts(D, W, A, nullptr, nullptr, kOriginalOrder, maxl)) return 1;
    mx_trace_step("features: 8-row groups, long rows");
  }
  if (n > 0) { /* after the long rows' entries were counted into collen */
    length_hist<<<(n + 255) / 256, 256, 0, W.stream>>>(n, A.collen, m, A.col_hist, A.counts + C_COL_MAX, A.counts + C_COL_OVER);
    MX_LAUNCH_CHECK("feature column length_hist launch");
    hist_pairs<<<std::min((m + 256) / 256, 1024), 256, 0, W.stream>>>(A.col_hist, m, A.counts + C_COL_MAX, true, A.pairs, A.counts + C_NPAIRS, A.pair_cap);
    MX_LAUNCH_CHECK("feature column hist_pairs launch");
  }
  mx_trace_step("features: column length histogram, pairs");
  if (m > 0 && sort_rows_by_length(W, m, maxl, A)) return 1;
  mx_trace_step("features: rows sorted by length");
  if (m > 0 && group_distinct_counts(D, W, A, A.perm, A.rank, kSortedOrder, maxl)) return 1;
  mx_trace_step("features: sorted 8-row groups");
  MX_CUDA_TRY(cudaMemcpyAsync(J.ws->host_buf, A.counts, A.read_bytes, cudaMemcpyDeviceToHost, W.stream));
  MX_CUDA_TRY(cudaEventRecord(J.ws->done, W.stream));
  return 0;
}

/* c's counts and the histograms' bins from J's finished passes (their read-back copy) */
int collect_counts(mx_device *D, mx_features_job &J, mx_feature_counts *c, host_bins &rows, host_bins &cols) {
  const feature_readback R = readback_of(J.ws->host_buf, J.A);
  const unsigned long long *h = R.counts;
  if (h[C_NPAIRS] > J.A.pair_cap)
    return mx_fail("mx_device_features: %llu histogram bins listed, more than the %zu a CSR can have", h[C_NPAIRS], J.A.pair_cap);
  if (h[C_NLONG] > J.A.nlong_max)
    return mx_fail("mx_device_features: %llu long rows listed, more than the %zu a CSR can have", h[C_NLONG], J.A.nlong_max);
  if (bins_to_host(D, J.W, J.A, h, R.pairs, (size_t)h[C_NPAIRS], rows, cols)) return 1;
  c->diag = (int64_t)h[C_DIAG];
  c->upper = (int64_t)h[C_UPPER];
  c->band_max = (int64_t)h[C_BAND_MAX];
  c->band_sum = (int64_t)h[C_BAND_SUM];
  c->nonempty_rows = (int64_t)h[C_NONEMPTY];
  c->span_sum = (int64_t)h[C_SPAN];
  long_rows_spans(R, D->ncols, c);
  c->long32_nnz = (int64_t)h[C_LONG32];
  c->adj_sum = (int64_t)h[C_ADJ];
  c->ell8_cells = (int64_t)h[C_CELLS];
  c->chunk8_distinct = (int64_t)h[C_DISTINCT];
  c->chunk8_sorted_distinct = (int64_t)h[C_SORTED_DISTINCT];
  c->row_first_eq = (int64_t)h[C_VAL_ROW_EQ];
  c->col_first_eq = (int64_t)h[C_VAL_COL_EQ];
  mx_trace_step("features: counts, histogram bins");
  return 0;
}

/* J's passes waited for (errors ignored: the job is being given up or was read), its extra scratch
 * freed (mx_scratch's destructor), its workspace given back */
void job_delete(mx_features_job *J) {
  mx_workspace *ws = J->ws;
  cudaStreamSynchronize(ws->stream);
  delete J;
  mx_workspace_give(ws);
}

} // namespace

void mx_features_job_drop(mx_device *D) {
  if (!D || !D->features_job) return;
  job_delete(D->features_job);
  D->features_job = nullptr;
  mx_trace_step("features: workspace given back");
}

extern "C" int mx_device_features_start(mx_device *D) {
  if (D && D->plain_released) return mx_fail("mx_device_features_start: the plain cold CSR is released");
  if (!D) return mx_fail("mx_device_features_start: NULL device");
  if (mx_device_pack_restore_plain(D)) return 1; /* the passes read the plain columns */
  if (!D->cold_identity || D->xhot_cold)
    return mx_fail("mx_device_features: the device format does not hold the whole matrix as plain CSR (a hot part or x-hot codes)");
  mx_features_job_drop(D);
  mx_trace_step(nullptr);
  feature_layout L;
  const int maxl = longest_row_bound(D);
  if (feature_layout_of(D->nrows, D->ncols, D->cold_nnz, maxl, &L)) return 1;
  const size_t dev_bytes = L.off[feature_layout::NARRAYS];
  mx_workspace *ws;
  if (mx_workspace_take(dev_bytes, L.off[feature_layout::NREAD], &ws)) return 1;
  mx_features_job *J = new (std::nothrow) mx_features_job(ws);
  if (!J) {
    mx_workspace_give(ws);
    return mx_fail("mx_device_features_start: out of host memory");
  }
  D->features_job = J;
  if (D->bytes + dev_bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes + dev_bytes;
  feature_arrays_carve((char *)ws->dev_buf, L, J->W, &J->A);
  mx_trace_step("features: workspace");
  if (queue_passes(D, *J, maxl)) {
    mx_features_job_drop(D);
    return 1;
  }
  return 0;
}

extern "C" int mx_device_features_ready(mx_device *D, int *ready) {
  if (!D || !ready) return mx_fail("mx_device_features_ready: NULL argument");
  *ready = 0;
  if (!D->features_job) return mx_fail("mx_device_features_ready: no feature passes pending");
  const cudaError_t e = cudaEventQuery(D->features_job->ws->done);
  if (e == cudaErrorNotReady) return 0;
  if (mx_cuda_check(e, "features: cudaEventQuery")) return 1;
  *ready = 1;
  return 0;
}

extern "C" int mx_device_features_finish(mx_device *D, mx_features *f) {
  if (!D || !f) return mx_fail("mx_device_features_finish: NULL argument");
  if (!D->features_job) return mx_fail("mx_device_features_finish: no feature passes pending");
  mx_feature_counts c = {};
  host_bins rows, cols;
  c.nrows = D->nrows;
  c.ncols = D->ncols;
  c.nnz = D->cold_nnz;
  mx_trace_step(nullptr);
  const int rc = mx_cuda_check(cudaEventSynchronize(D->features_job->ws->done), "features: cudaEventSynchronize") ||
                 collect_counts(D, *D->features_job, &c, rows, cols);
  mx_features_job_drop(D);
  if (rc) return 1;
  c.rows = rows.view();
  c.cols = cols.view();
  const mx_status st = mx_features_from_counts(&c, f);
  mx_trace_step("features: from the counts");
  if (st != MX_OK) return mx_fail("mx_device_features: mx_features_from_counts failed (status %d)", (int)st);
  return 0;
}

extern "C" int mx_device_features(mx_device *D, mx_features *f) {
  if (!D || !f) return mx_fail("mx_device_features: NULL argument");
  return mx_device_features_start(D) || mx_device_features_finish(D, f);
}

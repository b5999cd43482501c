/* mx_cold_rowpat.cu - the row-pattern form of the cold CSR (mx_cold_rowpat.h) on the GPU: built from
 * D's cold CSR into the bytes the host encoder mx_cold_rowpat_build gives, and its product.
 *
 * Encoder (synchronous, scratch from the setup pool, integer atomics only):
 *   keys      one thread per row: a 64-bit hash of the row's length, columns minus row index and
 *             value bit patterns; a flag where a row is longer than MX_ROWPAT_MAX_LEN;
 *   groups    CUB radix sort of (hash, row) pairs (stable: each group's first row is its smallest),
 *             group index of each sorted position by a scan of the group heads;
 *   check     every row compared, entry for entry, with its group's first row: a hash collision
 *             (two patterns, one hash) flags the matrix as not held (the packed form is used
 *             instead), so no hash is ever trusted alone;
 *   ids       groups sorted by their first row = patterns in order of first use (the host's ids),
 *             each row's id scattered from its group; pattern pointers by a scan of the lengths,
 *             entries copied from each pattern's first row.
 * Product (mx_rowpat_kernel): one thread per row, all of its pattern's entries, in the summation order
 * of the plain segment kernel (mx_cold_segment.cuh) for that row, so y is bitwise that kernel's:
 * there row r is summed by a lane group of g lanes (g from the mean row length of the plan entry
 * owning r: seg_rows_from_shared), lane j adding the products j, j+g, j+2g, ... from 0.0 and the
 * group's sums then combined by the xor butterfly (offsets g/2 .. 1), then + z[r]. Here the thread
 * keeps the g lane sums in registers and combines them in the same order. row_lg (log2 g per row)
 * is made at compression from the segment plan: part of the launch plan, not of the encoding. Rows
 * of at most MX_ROWPAT_MAX_LEN <= MX_SEG_LONG_MIN entries are never the segment kernel's long rows
 * (summed by a warp) nor its crossing rows (a tail of at most MX_SEG_THREADS products is staged by
 * the segment that owns the row), so g is the whole rule. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <string.h>
#include "mx_device_impl.h"
#include "mx_kernel_common.cuh"
#include "mx_scratch.cuh"
extern "C" {
#include "../core/mx_cold_rowpat.h"
}

static_assert(MX_ROWPAT_MAX_LEN <= MX_SEG_LONG_MIN && MX_ROWPAT_MAX_LEN <= MX_SEG_THREADS,
              "a row of the form is summed by its lane group in the segment kernel, never by a warp or the block");
/* g doubles while gk * g <= mean <= MX_ROWPAT_MAX_LEN: from g = 4 to 8 when gk * 4 <= mean, never
 * further when gk * 8 exceeds every mean (band-64's rows of 64: g = 8) */
static_assert(MX_SEG_GROUP_K * 8 > MX_ROWPAT_MAX_LEN, "a row of the form has a lane group of at most 8 (row_lg <= 3)");

#define MX_ROWPAT_THREADS 256
typedef unsigned long long u64;

struct mx_cold_rowpat_dev {
  mx_pack_request req; /* as asked: a value refresh chooses the form again by it */
  int npat, nent, id_bytes;
  uint8_t *id8;     /* nrows, id_bytes == 1 */
  uint16_t *id16;   /* nrows, id_bytes == 2 */
  int *pat_ptr;     /* npat + 1 */
  int *pat_off;     /* nent: column minus row */
  double *pat_val;  /* nent */
  uint8_t *row_lg;  /* nrows: log2 of the segment kernel's lane group for the row (launch plan) */
  int lg_max;       /* the largest row_lg (the SpMM's narrow kernels compile only the lane groups up to it) */
};

static inline int rp_blocks(int64_t n) { return (int)((n + MX_ROWPAT_THREADS - 1) / MX_ROWPAT_THREADS); }

/* ---- encoder kernels (one thread per row unless said) -------------------------------------------- */

__device__ __forceinline__ u64 rp_mix(u64 h) { /* splitmix64's finalizer */
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

/* key[i] = hash of row i's content, row[i] = i; *too_long = 1 if a row exceeds MX_ROWPAT_MAX_LEN */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_keys(int nrows, const int *__restrict__ rowptr,
                                                                    const int *__restrict__ col, const double *__restrict__ val,
                                                                    u64 *key, int *row, int *too_long) {
  const int i = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (i >= nrows) return;
  const int beg = rowptr[i], end = rowptr[i + 1];
  u64 h = rp_mix((u64)(end - beg) + 0x9e3779b97f4a7c15ull);
  if (end - beg > MX_ROWPAT_MAX_LEN) atomicOr(too_long, 1);
  else
    for (int k = beg; k < end; ++k) {
      h = rp_mix(h ^ (u64)(unsigned)(col[k] - i));
      h = rp_mix(h ^ (u64)__double_as_longlong(val[k]));
    }
  key[i] = h;
  row[i] = i;
}

/* head[j] = 1 where sorted position j starts a group of equal hashes (j > 0), else 0 */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_heads(int n, const u64 *__restrict__ skey, int *head) {
  const int j = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (j < n) head[j] = j > 0 && skey[j] != skey[j - 1];
}

/* first[g] = the first (smallest) row of group g: the row at the group's first sorted position */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_firsts(int n, const int *__restrict__ grp,
                                                                      const int *__restrict__ srow, int *first) {
  const int j = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (j < n && (j == 0 || grp[j] != grp[j - 1])) first[grp[j]] = srow[j];
}

/* *differs = 1 if the row at sorted position j is not entry for entry its group's first row */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_check(int n, const int *__restrict__ rowptr,
                                                                     const int *__restrict__ col, const double *__restrict__ val,
                                                                     const int *__restrict__ grp, const int *__restrict__ srow,
                                                                     const int *__restrict__ first, int *differs) {
  const int j = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (j >= n) return;
  const int i = srow[j], f = first[grp[j]];
  if (i == f) return;
  const int bi = rowptr[i], bf = rowptr[f], len = rowptr[i + 1] - bi;
  bool same = len == rowptr[f + 1] - bf;
  for (int k = 0; same && k < len; ++k)
    same = col[bi + k] - i == col[bf + k] - f && __double_as_longlong(val[bi + k]) == __double_as_longlong(val[bf + k]);
  if (!same) atomicOr(differs, 1);
}

/* a[g] = g */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_iota(int n, int *a) {
  const int g = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (g < n) a[g] = g;
}

/* pattern q = the group whose first row is the q-th smallest: pat_of_grp[g] = q, len[q] = its length */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_order(int npat, const int *__restrict__ rowptr,
                                                                     const int *__restrict__ sfirst, const int *__restrict__ sgrp,
                                                                     int *pat_of_grp, int *len) {
  const int q = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (q >= npat) return;
  pat_of_grp[sgrp[q]] = q;
  len[q] = rowptr[sfirst[q] + 1] - rowptr[sfirst[q]];
}

/* id[row at sorted position j] = the pattern of its group */
template <typename T>
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_ids(int n, const int *__restrict__ grp, const int *__restrict__ srow,
                                                                   const int *__restrict__ pat_of_grp, T *id) {
  const int j = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (j < n) id[srow[j]] = (T)pat_of_grp[grp[j]];
}

/* one thread per pattern q: its entries from its first row sfirst[q] */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_entries(int npat, const int *__restrict__ rowptr,
                                                                       const int *__restrict__ col, const double *__restrict__ val,
                                                                       const int *__restrict__ sfirst, const int *__restrict__ pat_ptr,
                                                                       int *pat_off, double *pat_val) {
  const int q = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (q >= npat) return;
  const int f = sfirst[q], b = rowptr[f], len = rowptr[f + 1] - b;
  for (int k = 0; k < len; ++k) {
    pat_off[pat_ptr[q] + k] = col[b + k] - f;
    pat_val[pat_ptr[q] + k] = val[b + k];
  }
}

/* one thread per segment plan entry b: row_lg[r] = log2 of the lane group seg_rows_from_shared
 * gives the entry's rows (g from the mean length of rows plan[b].x .. .y-1; none of them crosses);
 * *lg_max the largest (integer atomics: the same whatever the order) */
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_groups(int nentries, const int4 *__restrict__ plan,
                                                                      const int *__restrict__ rowptr, uint8_t *row_lg, int *lg_max) {
  const int b = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (b >= nentries) return;
  const int ra = plan[b].x, rb = plan[b].y, nr = rb - ra;
  if (nr <= 0) return;
  const int mean = (rowptr[rb] - rowptr[ra]) / nr;
  int g = 1, lg = 0;
  while (g < MX_SEG_MAX_GROUP && MX_SEG_GROUP_K * g <= mean) g *= 2, ++lg;
  for (int r = ra; r < rb; ++r) row_lg[r] = (uint8_t)lg;
  atomicMax(lg_max, lg);
}

/* ---- the product --------------------------------------------------------------------------------- */

/* row i's sum over its pattern's entries [b, b + len) as a lane group of G = 2^LG lanes sums it in
 * the segment kernel: lane sums s[j] of products j, j+G, ... from 0.0, then the xor butterfly.
 * Products rounded before the sums (__dmul_rn, __dadd_rn: no fused multiply-add), as the segment
 * kernel's staged products are. */
template <int LG>
__device__ __forceinline__ double rowpat_row_sum(int i, int b, int len, const int *__restrict__ off,
                                                 const double *__restrict__ val, const double *__restrict__ x) {
  /* G = 8 (rare: a mean row length of 64) not unrolled: unrolled it took the kernel to 48 registers,
   * and capped at 32 (8 blocks per SM) the other lane groups lost their loads in flight
   * (docs/performance.md, "Behind the source's constants"); so 31 registers, no spill (ptxas, sm_90) */
  constexpr int G = 1 << LG, UNROLL = G < 8 ? 4 : 1;
  double s[G];
#pragma unroll
  for (int j = 0; j < G; ++j) s[j] = 0.0;
#pragma unroll UNROLL
  for (int k0 = 0; k0 < len; k0 += G) {
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const int k = k0 + j;
      if (k < len) s[j] = __dadd_rn(s[j], __dmul_rn(__ldg(val + b + k), __ldg(x + i + __ldg(off + b + k))));
    }
  }
#pragma unroll
  for (int h = G / 2; h > 0; h /= 2)
#pragma unroll
    for (int j = 0; j < h; ++j) s[j] = __dadd_rn(s[j], s[j + h]);
  return s[0];
}

/* y[i] = (row i of the cold CSR) x + z[i], one thread per row; z may alias y (each y[i] read then
 * written by its own thread). */
template <typename T>
__global__ void __launch_bounds__(MX_ROWPAT_THREADS) mx_rowpat_kernel(int nrows, const T *__restrict__ id,
                                                                      const uint8_t *__restrict__ row_lg,
                                                                      const int *__restrict__ pat_ptr,
                                                                      const int *__restrict__ pat_off,
                                                                      const double *__restrict__ pat_val,
                                                                      const double *__restrict__ x, const double *z, double *y) {
  const int i = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (i >= nrows) return;
  const int p = id[i], lg = row_lg[i];
  const int b = __ldg(pat_ptr + p), len = __ldg(pat_ptr + p + 1) - b;
  if (len == 0 && z == y) return; /* in place, an empty row keeps its y, as in the segment kernel */
  double sum;
  if (lg == 0) sum = rowpat_row_sum<0>(i, b, len, pat_off, pat_val, x);
  else if (lg == 1) sum = rowpat_row_sum<1>(i, b, len, pat_off, pat_val, x);
  else if (lg == 2) sum = rowpat_row_sum<2>(i, b, len, pat_off, pat_val, x);
  else sum = rowpat_row_sum<3>(i, b, len, pat_off, pat_val, x);
  y[i] = z ? __dadd_rn(sum, z[i]) : sum;
}

int mx_cold_rowpat_launch(const mx_device *D, const double *x, const double *z, double *y, cudaStream_t s) {
  const mx_cold_rowpat_dev *R = D->rowpat;
  if (D->nrows == 0) return 0;
  if (R->id_bytes == 1)
    mx_rowpat_kernel<uint8_t><<<rp_blocks(D->nrows), MX_ROWPAT_THREADS, 0, s>>>(D->nrows, R->id8, R->row_lg, R->pat_ptr, R->pat_off,
                                                                                 R->pat_val, x, z, y);
  else
    mx_rowpat_kernel<uint16_t><<<rp_blocks(D->nrows), MX_ROWPAT_THREADS, 0, s>>>(D->nrows, R->id16, R->row_lg, R->pat_ptr, R->pat_off,
                                                                                  R->pat_val, x, z, y);
  MX_LAUNCH_CHECK("mx_rowpat_kernel launch");
  return 0;
}

/* ---- the product with k columns (mx_device_spmm's row-pattern way) -------------------------------- */

/* Columns of B (and C) per thread: grid.y walks groups of them, so that a wave of blocks reads the
 * same few columns of B over a span of rows (their neighbours' B rows then hit L2). */
#define MX_ROWPAT_SPMM_COLS 8

/* Row i times columns [j0, j0 + J) of B into C (the columns past j1 skipped): each pattern entry's
 * offset and value loaded once for the J columns, whose J loads of B are then in flight together,
 * U steps of G entries at a time. Column j's sums are rowpat_row_sum's for x = B[:, j] (lane sums
 * s[g] of entries g, g+G, ... from 0.0, then the same butterfly; unrolling keeps that order): C's
 * column j is bitwise mx_rowpat_kernel's y of that column. */
template <int LG, int J, int U>
__device__ __forceinline__ void rowpat_row_cols(int i, int b, int len, const int *__restrict__ off, const double *__restrict__ val,
                                                const double *__restrict__ B, long long ldb, double *__restrict__ C, long long ldc,
                                                int j0, int j1) {
  constexpr int G = 1 << LG;
  double s[J][G];
#pragma unroll
  for (int c = 0; c < J; ++c)
#pragma unroll
    for (int g = 0; g < G; ++g) s[c][g] = 0.0;
  const double *Bi = B + i;
#pragma unroll U
  for (int k0 = 0; k0 < len; k0 += G) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int e = k0 + g;
      if (e < len) {
        const double v = __ldg(val + b + e);
        const double *xb = Bi + __ldg(off + b + e);
#pragma unroll
        for (int c = 0; c < J; ++c)
          if (j0 + c < j1) s[c][g] = __dadd_rn(s[c][g], __dmul_rn(v, __ldg(xb + (long long)(j0 + c) * ldb)));
      }
    }
  }
#pragma unroll
  for (int c = 0; c < J; ++c) {
#pragma unroll
    for (int h = G / 2; h > 0; h /= 2)
#pragma unroll
      for (int g = 0; g < h; ++g) s[c][g] = __dadd_rn(s[c][g], s[c][g + h]);
    if (j0 + c < j1) C[i + (long long)(j0 + c) * ldc] = s[c][0];
  }
}

/* The group's columns [j0, j1) in steps of J columns: J = 8 / G (at most 16 sums live, 8 B loads
 * a step of entries), or in the kernels for k <= 4 (JMAX = 4 or 2) one step of JMAX columns over U
 * steps of entries at a time, MX_ROWPAT_SPMM_LOADS B loads in flight (one step of 2 columns holds no
 * more loads in flight than two SpMVs: docs/performance.md, "Fewer launches"). G = 8 stays at one
 * step of entries, as in rowpat_row_sum. The narrow kernels are separate so that the wide one keeps
 * its registers. */
template <int LG, int JMAX>
__device__ __forceinline__ void rowpat_row_spmm(int i, int b, int len, const int *__restrict__ off, const double *__restrict__ val,
                                                const double *__restrict__ B, long long ldb, double *__restrict__ C, long long ldc,
                                                int j0, int j1) {
  constexpr int JG = LG <= 1 ? 8 : 8 >> (LG - 1), J = JMAX < JG ? JMAX : JG, UL = MX_ROWPAT_SPMM_LOADS / (J << LG), U = JMAX < 8 && LG < 3 && UL > 1 ? UL : 1;
  for (int j = j0; j < j1; j += J) rowpat_row_cols<LG, J, U>(i, b, len, off, val, B, ldb, C, ldc, j, j1);
}

/* Ownership: thread (i, g) writes C[i, j] for the columns j of group g only. LGMAX: the largest
 * row_lg it holds code for (R->lg_max at most). */
template <typename T, int JMAX, int LGMAX>
__global__ void __launch_bounds__(MX_ROWPAT_THREADS)
mx_rowpat_spmm_kernel(int nrows, int k, const T *__restrict__ id, const uint8_t *__restrict__ row_lg, const int *__restrict__ pat_ptr,
                      const int *__restrict__ pat_off, const double *__restrict__ pat_val, const double *__restrict__ B, long long ldb,
                      double *__restrict__ C, long long ldc) {
  const int i = blockIdx.x * MX_ROWPAT_THREADS + threadIdx.x;
  if (i >= nrows) return;
  const int j0 = blockIdx.y * MX_ROWPAT_SPMM_COLS, j1 = min(k, j0 + MX_ROWPAT_SPMM_COLS);
  const int p = id[i], lg = row_lg[i];
  const int b = __ldg(pat_ptr + p), len = __ldg(pat_ptr + p + 1) - b;
  if (lg == 0) rowpat_row_spmm<0, JMAX>(i, b, len, pat_off, pat_val, B, ldb, C, ldc, j0, j1);
  else if (LGMAX == 1 || lg == 1) rowpat_row_spmm<1, JMAX>(i, b, len, pat_off, pat_val, B, ldb, C, ldc, j0, j1);
  else if (lg == 2) rowpat_row_spmm<2, JMAX>(i, b, len, pat_off, pat_val, B, ldb, C, ldc, j0, j1);
  else rowpat_row_spmm<3, JMAX>(i, b, len, pat_off, pat_val, B, ldb, C, ldc, j0, j1);
}

template <typename T, int JMAX, int LGMAX>
static void rowpat_spmm_kernel_launch(const mx_device *D, const T *id, int k, const double *B, long long ldb, double *C, long long ldc,
                                      dim3 grid, cudaStream_t s) {
  const mx_cold_rowpat_dev *R = D->rowpat;
  mx_rowpat_spmm_kernel<T, JMAX, LGMAX><<<grid, MX_ROWPAT_THREADS, 0, s>>>(D->nrows, k, id, R->row_lg, R->pat_ptr, R->pat_off, R->pat_val,
                                                                            B, ldb, C, ldc);
}

/* k <= 2, k <= 4: the narrow kernels (with only lane groups of 1 and 2 where the rows have no other:
 * their registers then leave full occupancy at k <= 2); else the wide one */
template <typename T, int JMAX>
static void rowpat_spmm_narrow_launch(const mx_device *D, const T *id, int k, const double *B, long long ldb, double *C, long long ldc,
                                      dim3 grid, cudaStream_t s) {
  if (D->rowpat->lg_max <= 1) rowpat_spmm_kernel_launch<T, JMAX, 1>(D, id, k, B, ldb, C, ldc, grid, s);
  else rowpat_spmm_kernel_launch<T, JMAX, 3>(D, id, k, B, ldb, C, ldc, grid, s);
}

template <typename T>
static void rowpat_spmm_launch_t(const mx_device *D, const T *id, int k, const double *B, long long ldb, double *C, long long ldc,
                                 dim3 grid, cudaStream_t s) {
  if (k <= 2) rowpat_spmm_narrow_launch<T, 2>(D, id, k, B, ldb, C, ldc, grid, s);
  else if (k <= 4) rowpat_spmm_narrow_launch<T, 4>(D, id, k, B, ldb, C, ldc, grid, s);
  else rowpat_spmm_kernel_launch<T, 8, 3>(D, id, k, B, ldb, C, ldc, grid, s);
}

int mx_cold_rowpat_spmm_launch(const mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  const mx_cold_rowpat_dev *R = D->rowpat;
  if (!R) return mx_fail("SpMM: the row-pattern way without row patterns");
  if (D->nrows == 0 || k == 0) return 0;
  const int groups = (k + MX_ROWPAT_SPMM_COLS - 1) / MX_ROWPAT_SPMM_COLS;
  if (groups > 65535) return mx_fail("SpMM: %d columns exceed the row-pattern kernel's grid", k);
  const dim3 grid(rp_blocks(D->nrows), groups);
  if (R->id_bytes == 1) rowpat_spmm_launch_t(D, R->id8, k, B, ldb, C, ldc, grid, s);
  else rowpat_spmm_launch_t(D, R->id16, k, B, ldb, C, ldc, grid, s);
  MX_LAUNCH_CHECK("mx_rowpat_spmm_kernel launch");
  return 0;
}

/* ---- building ------------------------------------------------------------------------------------ */

void mx_cold_rowpat_dev_free(mx_device *D) {
  mx_cold_rowpat_dev *R = D ? D->rowpat : nullptr;
  if (!R) return;
  mx_cuda_free_on(D, &R->id8, R->id8 ? (size_t)D->nrows : 0);
  mx_cuda_free_on(D, &R->id16, R->id16 ? (size_t)D->nrows : 0);
  mx_cuda_free_on(D, &R->pat_ptr, (size_t)R->npat + 1);
  mx_cuda_free_on(D, &R->pat_off, (size_t)R->nent);
  mx_cuda_free_on(D, &R->pat_val, (size_t)R->nent);
  mx_cuda_free_on(D, &R->row_lg, R->row_lg ? (size_t)D->nrows : 0);
  free(R);
  D->rowpat = nullptr;
}

/* What the encoder found out before building (held: the form holds the cold CSR; why: if not). */
struct rowpat_groups {
  int held;
  const char *why;
  int npat;
  int *grp, *srow; /* per sorted position: group, row (scratch) */
  int *sfirst, *sgrp; /* per pattern in order of first use: its first row, its group (scratch) */
};

/* Steps keys, groups and check of the header on stream s. */
static int group_rows(mx_device *D, mx_scratch &W, cudaStream_t s, rowpat_groups *G) {
  const int n = D->nrows;
  u64 *key, *skey;
  int *row, *flags, *head, *first;
  G->held = 0;
  if (mx_scratch_alloc(D, W, &key, n, "row patterns: hashes") || mx_scratch_alloc(D, W, &skey, n, "row patterns: sorted hashes") ||
      mx_scratch_alloc(D, W, &row, n, "row patterns: rows") || mx_scratch_alloc(D, W, &G->srow, n, "row patterns: sorted rows") ||
      mx_scratch_alloc(D, W, &head, n, "row patterns: group heads") || mx_scratch_alloc(D, W, &G->grp, n, "row patterns: groups") ||
      mx_scratch_alloc(D, W, &flags, 2, "row patterns: flags"))
    return 1;
  MX_CUDA_TRY(cudaMemsetAsync(flags, 0, 2 * sizeof(int), s));
  mx_rowpat_keys<<<rp_blocks(n), MX_ROWPAT_THREADS, 0, s>>>(n, D->cold_rowptr, D->cold_col, D->cold_val, key, row, flags);
  MX_LAUNCH_CHECK("row patterns: hashes");
  int h[2];
  MX_CUDA_TRY(cudaMemcpyAsync(h, flags, sizeof(int), cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  if (h[0]) {
    G->why = "a row is longer than the form holds";
    return 0;
  }
  if (mx_cub_run(D, W, "row patterns: sort hashes", [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortPairs(t, b, key, skey, row, G->srow, n, 0, 64, s);
      }))
    return 1;
  mx_rowpat_heads<<<rp_blocks(n), MX_ROWPAT_THREADS, 0, s>>>(n, skey, head);
  MX_LAUNCH_CHECK("row patterns: group heads");
  if (mx_cub_run(D, W, "row patterns: groups", [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, head, G->grp, n, s); }))
    return 1;
  MX_CUDA_TRY(cudaMemcpyAsync(&G->npat, G->grp + n - 1, sizeof(int), cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  G->npat += 1;
  if (G->npat > MX_ROWPAT_MAX_ENTRIES + 1) { /* at most one empty pattern beside patterns of >= 1 entry */
    G->why = "too many patterns";
    return 0;
  }
  if (mx_scratch_alloc(D, W, &first, G->npat, "row patterns: first rows") ||
      mx_scratch_alloc(D, W, &G->sfirst, G->npat, "row patterns: first rows in order") ||
      mx_scratch_alloc(D, W, &G->sgrp, G->npat, "row patterns: groups in order"))
    return 1;
  mx_rowpat_firsts<<<rp_blocks(n), MX_ROWPAT_THREADS, 0, s>>>(n, G->grp, G->srow, first);
  mx_rowpat_check<<<rp_blocks(n), MX_ROWPAT_THREADS, 0, s>>>(n, D->cold_rowptr, D->cold_col, D->cold_val, G->grp, G->srow, first,
                                                              flags + 1);
  MX_LAUNCH_CHECK("row patterns: check");
  int *gid = head; /* the heads are spent: the groups 0 .. npat-1 */
  mx_rowpat_iota<<<rp_blocks(G->npat), MX_ROWPAT_THREADS, 0, s>>>(G->npat, gid);
  MX_LAUNCH_CHECK("row patterns: group numbers");
  if (mx_cub_run(D, W, "row patterns: order of first use", [&](void *t, size_t &b) {
        return cub::DeviceRadixSort::SortPairs(t, b, first, G->sfirst, gid, G->sgrp, G->npat, 0, 32, s);
      }))
    return 1;
  MX_CUDA_TRY(cudaMemcpyAsync(h + 1, flags + 1, sizeof(int), cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  if (h[1]) {
    G->why = "two patterns share a hash";
    return 0;
  }
  G->held = 1;
  return 0;
}

/* Step ids of the header, then row_lg from D's segment plan: R's arrays (R->npat set). */
static int encode(mx_device *D, mx_scratch &W, cudaStream_t s, const rowpat_groups &G, mx_cold_rowpat_dev *R) {
  const int n = D->nrows, np = R->npat;
  int *pat_of_grp, *len, *lg_max;
  if (mx_scratch_alloc(D, W, &pat_of_grp, np, "row patterns: pattern of each group") ||
      mx_scratch_alloc(D, W, &len, np, "row patterns: lengths") || mx_scratch_alloc(D, W, &lg_max, 1, "row patterns: largest lane group") || mx_cuda_alloc_on(D, &R->pat_ptr, (size_t)np + 1, "row patterns: pointers"))
    return 1;
  mx_rowpat_order<<<rp_blocks(np), MX_ROWPAT_THREADS, 0, s>>>(np, D->cold_rowptr, G.sfirst, G.sgrp, pat_of_grp, len);
  MX_LAUNCH_CHECK("row patterns: order");
  MX_CUDA_TRY(cudaMemsetAsync(R->pat_ptr, 0, sizeof(int), s));
  if (mx_cub_run(D, W, "row patterns: pointers", [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, len, R->pat_ptr + 1, np, s); }))
    return 1;
  MX_CUDA_TRY(cudaMemcpyAsync(&R->nent, R->pat_ptr + np, sizeof(int), cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  if (R->nent > MX_ROWPAT_MAX_ENTRIES) return 0; /* the caller sees nent: not held */
  R->id_bytes = np <= 256 ? 1 : 2;
  if (mx_cuda_alloc_on(D, &R->pat_off, (size_t)R->nent, "row patterns: offsets") ||
      mx_cuda_alloc_on(D, &R->pat_val, (size_t)R->nent, "row patterns: values") ||
      mx_cuda_alloc_on(D, &R->row_lg, (size_t)n, "row patterns: lane groups"))
    return 1;
  if (R->id_bytes == 1) {
    if (mx_cuda_alloc_on(D, &R->id8, (size_t)n, "row patterns: 1-byte ids")) return 1;
    mx_rowpat_ids<<<rp_blocks(n), MX_ROWPAT_THREADS, 0, s>>>(n, G.grp, G.srow, pat_of_grp, R->id8);
  } else {
    if (mx_cuda_alloc_on(D, &R->id16, (size_t)n, "row patterns: 2-byte ids")) return 1;
    mx_rowpat_ids<<<rp_blocks(n), MX_ROWPAT_THREADS, 0, s>>>(n, G.grp, G.srow, pat_of_grp, R->id16);
  }
  mx_rowpat_entries<<<rp_blocks(np), MX_ROWPAT_THREADS, 0, s>>>(np, D->cold_rowptr, D->cold_col, D->cold_val, G.sfirst, R->pat_ptr,
                                                                 R->pat_off, R->pat_val);
  MX_CUDA_TRY(cudaMemsetAsync(lg_max, 0, sizeof(int), s));
  mx_rowpat_groups<<<rp_blocks(D->seg_nblocks), MX_ROWPAT_THREADS, 0, s>>>(D->seg_nblocks, D->seg_plan, D->cold_rowptr, R->row_lg, lg_max);
  MX_LAUNCH_CHECK("row patterns: ids, entries, lane groups");
  MX_CUDA_TRY(cudaMemcpyAsync(&R->lg_max, lg_max, sizeof(int), cudaMemcpyDeviceToHost, s));
  return mx_cuda_check(cudaStreamSynchronize(s), "row patterns: encoding"); /* the scratch is freed when W goes */
}

/* the form of no rows (no pattern, pat_ptr = {0}): kept where forced, as the host holds it too */
static int empty_form(mx_device *D, const mx_pack_request *req, int *kept, const char **why) {
  if (req->form != MX_FORM_ROWPAT) {
    *why = "no rows";
    return 0;
  }
  D->rowpat = (mx_cold_rowpat_dev *)calloc(1, sizeof *D->rowpat);
  if (!D->rowpat) return mx_fail("mx_device_compress: out of host memory");
  D->rowpat->req = *req;
  D->rowpat->id_bytes = 1;
  if (mx_cuda_alloc_on(D, &D->rowpat->pat_ptr, 1, "row patterns: pointers") ||
      mx_cuda_check(cudaMemset(D->rowpat->pat_ptr, 0, sizeof(int)), "row patterns: pointers")) {
    mx_cold_rowpat_dev_free(D);
    return 1;
  }
  *kept = 1;
  return 0;
}

int mx_cold_rowpat_dev_build(mx_device *D, const mx_pack_request *req, int *kept, const char **why) {
  const bool forced = req->form == MX_FORM_ROWPAT;
  *kept = 0;
  *why = nullptr;
  mx_cold_rowpat_dev_free(D);
  if (D->cold != MX_COLD_SEGMENT || !D->seg_plan) {
    *why = "the cold kernel is not the segment kernel";
    return forced ? mx_fail("mx_device_compress: row patterns forced, but %s", *why) : 0;
  }
  if (D->nrows == 0) return empty_form(D, req, kept, why);
  if (D->cold_nnz == 0 && !forced) {
    *why = "no cold nonzero"; /* nothing to gain (mx_rowpat_pays) */
    return 0;
  }
  mx_scratch W(0);
  rowpat_groups G = {0, nullptr, 0, nullptr, nullptr, nullptr, nullptr};
  if (group_rows(D, W, 0, &G)) return 1;
  if (!G.held) {
    *why = G.why;
    return forced ? mx_fail("mx_device_compress: row patterns forced, but %s", G.why) : 0;
  }
  D->rowpat = (mx_cold_rowpat_dev *)calloc(1, sizeof *D->rowpat);
  if (!D->rowpat) return mx_fail("mx_device_compress: out of host memory");
  D->rowpat->req = *req;
  D->rowpat->npat = G.npat;
  if (encode(D, W, 0, G, D->rowpat)) {
    mx_cold_rowpat_dev_free(D);
    return 1;
  }
  if (D->rowpat->nent > MX_ROWPAT_MAX_ENTRIES) *why = "too many pattern entries";
  else if (!forced && !mx_rowpat_pays(D->nrows, D->cold_nnz, D->rowpat->npat, D->rowpat->nent))
    *why = D->cold_nnz > 0 ? "not fewer bytes than the packed form" : "no cold nonzero";
  if (*why) {
    mx_cold_rowpat_dev_free(D);
    return forced ? mx_fail("mx_device_compress: row patterns forced, but %s", *why) : 0;
  }
  *kept = 1;
  return 0;
}

/* After a value refresh of D's cold_val: the cold form chosen again by the same request (the patterns
 * of the new values, else the packed form by the request's encodings: a forced form that no longer
 * holds the values falls back to it, as a forced dictionary falls back to plain values). */
int mx_cold_rowpat_dev_refresh(mx_device *D, cudaStream_t s) {
  if (!D->rowpat) return 0;
  mx_pack_request req = D->rowpat->req;
  MX_CUDA_TRY(cudaStreamSynchronize(s)); /* the refreshed values are read on the default stream */
  int rc = mx_cold_compress_dev(D, &req); /* the hot values are refreshed on their own */
  if (rc && req.form == MX_FORM_ROWPAT && !D->rowpat) {
    req.form = MX_FORM_PACK;
    rc = mx_cold_compress_dev(D, &req);
  }
  D->rowpat_lost = !D->rowpat;
  return rc;
}

int mx_cold_rowpat_dev_info(const mx_device *D, mx_device_pack_info *info) {
  const mx_cold_rowpat_dev *R = D->rowpat;
  info->rowpat = R != nullptr;
  info->rowpat_lost = D->rowpat_lost;
  if (!R) return 0;
  info->packed = 1;
  info->in_use = D->cold == MX_COLD_SEGMENT;
  info->npat = R->npat;
  info->nent = R->nent;
  info->id_bytes = R->id_bytes;
  info->bytes = mx_rowpat_bytes_of(D->nrows, R->npat, R->nent);
  return 0;
}

extern "C" int mx_device_download_rowpat(const mx_device *D, mx_cold_rowpat *Q) {
  if (!D || !Q) return mx_fail("mx_device_download_rowpat: NULL argument");
  memset(Q, 0, sizeof *Q);
  const mx_cold_rowpat_dev *R = D->rowpat;
  if (!R) return mx_fail("mx_device_download_rowpat: the cold region is not in row-pattern form");
  Q->nrows = D->nrows;
  Q->ncols = D->ncols;
  Q->nnz = D->cold_nnz;
  Q->npat = R->npat;
  Q->nent = R->nent;
  Q->id_bytes = R->id_bytes;
  int rc = mx_download_array(R->id8, R->id8 ? (size_t)D->nrows : 0, &Q->id8, "download row pattern ids") ||
           mx_download_array(R->id16, R->id16 ? (size_t)D->nrows : 0, &Q->id16, "download row pattern ids") ||
           mx_download_array(R->pat_ptr, (size_t)R->npat + 1, &Q->pat_ptr, "download row pattern pointers") ||
           mx_download_array(R->pat_off, (size_t)R->nent, &Q->pat_off, "download row pattern offsets") ||
           mx_download_array(R->pat_val, (size_t)R->nent, &Q->pat_val, "download row pattern values");
  if (rc) mx_cold_rowpat_free(Q);
  return rc;
}

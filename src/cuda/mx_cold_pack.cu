/* mx_cold_pack.cu - the packed cold CSR (mx_cold_pack.h) built ON THE GPU from D's cold CSR, byte
 * for byte what the host encoder mx_cold_pack_build makes of the same arrays:
 *   statistics  distinct value bit patterns: CUB radix sort of the 64-bit patterns + unique (the
 *               sorted unique list IS the host's dictionary); column constants: s[col] = pattern
 *               scattered (racing writes store the same bits where a column is constant), then a
 *               check pass flags any nonzero whose pattern differs from s[col]; empty columns keep
 *               s = +0.0 as on the host; segment spans: one warp per 32-nonzero segment (min/max);
 *               row chunk spans: one thread per chunk of 64 row pointers.
 *   choice      the host's own mx_cold_pack_choose on those numbers (copied back: one sync).
 *   encoding    codes = rank in the sorted dictionary (binary search), deltas = col - base, row
 *               offsets = rowptr - the chunk's first.
 * Integer atomics only (the span maximum, the mismatch flag): no floating-point atomics.
 * Compression is off while x-hot codes the cold CSR (its column codes are not columns): the kernel
 * choice rule keeps x-hot out of the cold CSR by default (MX_XHOT_COLD 0). */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <limits.h>
#include <string.h>
#include "mx_cold_pack_dev.h"
#include "mx_hot_pack_dev.h"
#include "mx_kernel_common.cuh" /* MX_FULL_MASK */
#include "mx_scratch.cuh"

#define MX_PACK_THREADS 256
typedef unsigned long long u64;

static inline int pk_blocks(int64_t n) { return (int)((n + MX_PACK_THREADS - 1) / MX_PACK_THREADS); }

/* ---- kernels (one thread per nonzero unless said) ------------------------------------------------ */

/* bits[i] = bit pattern of val[i] */
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_bits(int n, const double *__restrict__ val, u64 *bits) {
  const int i = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (i < n) bits[i] = (u64)__double_as_longlong(val[i]);
}

/* s[col[i]] = pattern of val[i]: where a column is constant every write stores the same bits */
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_scatter_cols(int n, const int *__restrict__ col,
                                                                        const double *__restrict__ val, u64 *s) {
  const int i = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (i < n) s[col[i]] = (u64)__double_as_longlong(val[i]);
}

/* differs[0] = 1 if some nonzero's pattern is not s[its column] (the matrix is not column-constant),
 * differs[1] = 1 if some nonzero's pattern is not the first one's (the matrix has two values or more) */
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_check_cols(int n, const int *__restrict__ col,
                                                                      const double *__restrict__ val,
                                                                      const u64 *__restrict__ s, int *differs) {
  const int i = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (i >= n) return;
  const u64 b = (u64)__double_as_longlong(val[i]);
  if (b != s[col[i]]) atomicOr(differs, 1);
  if (b != (u64)__double_as_longlong(val[0])) atomicOr(differs + 1, 1);
}

/* One warp per segment k (nonzeros 32k .. 32k+31): base[k] = smallest column, *span = max over
 * segments of (largest - smallest). */
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_seg_bases(int n, int nseg, const int *__restrict__ col,
                                                                     int *base, int *span) {
  const int k = (int)(((int64_t)blockIdx.x * MX_PACK_THREADS + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= nseg) return; /* warp-uniform */
  const int g = k * MX_PACK_SEG + lane;
  const int c = g < n ? col[g] : -1;
  const int lo = __reduce_min_sync(MX_FULL_MASK, g < n ? c : INT_MAX), hi = __reduce_max_sync(MX_FULL_MASK, c);
  if (lane == 0) {
    base[k] = lo;
    atomicMax(span, hi - lo);
  }
}

/* One thread per row chunk k (row pointers 64k .. min(64k + 63, nrows)): *span = max over chunks of
 * (last pointer - first) */
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_row_spans(int nrows, const int *__restrict__ rowptr, int *span) {
  const int k = blockIdx.x * MX_PACK_THREADS + threadIdx.x, i0 = k * MX_PACK_RCHUNK;
  if (i0 > nrows) return;
  atomicMax(span, rowptr[min(i0 + MX_PACK_RCHUNK - 1, nrows)] - rowptr[i0]);
}

/* row_off[i] = rowptr[i] - rowptr[first pointer of i's chunk], row_base[k] = that first pointer,
 * i <= nrows (fits 16 bits: the spans were checked) */
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_row_offsets(int nrows, const int *__restrict__ rowptr,
                                                                       int *row_base, uint16_t *row_off) {
  const int i = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (i > nrows) return;
  const int first = rowptr[i - i % MX_PACK_RCHUNK];
  row_off[i] = (uint16_t)(rowptr[i] - first);
  if (i % MX_PACK_RCHUNK == 0) row_base[i / MX_PACK_RCHUNK] = first;
}

/* delta[g] = col[g] - base[g / 32] (fits T: the span was checked) */
template <typename T>
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_deltas(int n, const int *__restrict__ col,
                                                                  const int *__restrict__ base, T *delta) {
  const int g = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (g < n) delta[g] = (T)(col[g] - base[g / MX_PACK_SEG]);
}

/* code[g] = rank of val[g]'s pattern in dict (nd patterns, ascending; it is there) */
template <typename T>
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_codes(int n, const double *__restrict__ val,
                                                                 const u64 *__restrict__ dict, int nd, T *code) {
  const int g = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (g >= n) return;
  const u64 b = (u64)__double_as_longlong(val[g]);
  int lo = 0, hi = nd - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (dict[mid] < b) lo = mid + 1;
    else hi = mid;
  }
  code[g] = (T)lo;
}

/* ---- device arrays of the pack (counted in D->bytes) ----------------------------------------------- */

/* free the value arrays of P */
static void free_values(mx_device *D, mx_cold_pack_dev *P) {
  mx_cuda_free_on(D, &P->xs, P->xs ? (size_t)D->ncols : 0);
  mx_cuda_free_on(D, &P->dict, (size_t)P->ndict);
  mx_cuda_free_on(D, &P->code8, P->code8 ? (size_t)D->cold_nnz : 0);
  mx_cuda_free_on(D, &P->code16, P->code16 ? (size_t)D->cold_nnz : 0);
  P->ndict = 0;
  P->val_enc = MX_VAL_PLAIN;
}

void mx_cold_pack_dev_free(mx_device *D) {
  mx_cold_pack_dev *P = D ? D->pack : nullptr;
  if (!P) return;
  free_values(D, P);
  mx_cuda_free_on(D, &P->seg_base, (size_t)P->nseg);
  mx_cuda_free_on(D, &P->delta8, P->delta8 ? (size_t)D->cold_nnz : 0);
  mx_cuda_free_on(D, &P->delta16, P->delta16 ? (size_t)D->cold_nnz : 0);
  mx_cuda_free_on(D, &P->row_base, (size_t)P->nrchunk);
  mx_cuda_free_on(D, &P->row_off, P->row_off ? (size_t)D->nrows + 1 : 0);
  free(P);
  D->pack = nullptr;
}

/* ---- statistics -------------------------------------------------------------------------------------- */

/* What the value choice of request val needs, on stream s: st->colconst, then st->ndistinct (capped
 * as on the host) unless the choice is column constants whatever it is (mx_pack_colconst_settles: a
 * PageRank matrix's values are then never sorted; st->ndistinct = 2, a lower bound, and *uniq NULL);
 * *uniq = the distinct patterns ascending (scratch), *colbits = s_j per column (scratch). */
static int value_stats(mx_device *D, mx_scratch &W, cudaStream_t s, int val, mx_cold_pack_stats *st, u64 **uniq, u64 **colbits) {
  const int n = D->cold_nnz;
  int *counts; /* [0] differs from the column's constant, [1] differs from the first value, [2] distinct */
  *uniq = nullptr;
  if (mx_scratch_alloc(D, W, colbits, D->ncols, "pack: column constants") || mx_scratch_alloc(D, W, &counts, 3, "pack: counts")) return 1;
  MX_CUDA_TRY(cudaMemsetAsync(counts, 0, 3 * sizeof(int), s));
  MX_CUDA_TRY(cudaMemsetAsync(*colbits, 0, sizeof(u64) * (D->ncols > 0 ? D->ncols : 1), s));
  if (n > 0) {
    mx_pack_scatter_cols<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_col, D->cold_val, *colbits);
    mx_pack_check_cols<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_col, D->cold_val, *colbits, counts);
    MX_LAUNCH_CHECK("pack: column constants");
  }
  int h[3];
  MX_CUDA_TRY(cudaMemcpyAsync(h, counts, 2 * sizeof(int), cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  st->colconst = h[0] == 0;
  if (h[1] != 0 && mx_pack_colconst_settles(val, st)) {
    st->ndistinct = 2;
    return 0;
  }
  u64 *keys, *sorted;
  if (mx_scratch_alloc(D, W, &keys, n, "pack: value patterns") || mx_scratch_alloc(D, W, &sorted, n, "pack: sorted patterns")) return 1;
  if (n > 0) {
    mx_pack_bits<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_val, keys);
    MX_LAUNCH_CHECK("pack: value patterns");
    if (mx_cub_run(D, W, "pack: sort value patterns", [&](void *t, size_t &b) {
          return cub::DeviceRadixSort::SortKeys(t, b, keys, sorted, n, 0, 64, s);
        }) ||
        mx_cub_run(D, W, "pack: distinct values", [&](void *t, size_t &b) {
          return cub::DeviceSelect::Unique(t, b, sorted, keys, counts + 2, n, s);
        }))
      return 1;
  }
  MX_CUDA_TRY(cudaMemcpyAsync(h + 2, counts + 2, sizeof(int), cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  st->ndistinct = h[2] > MX_PACK_DICT_MAX ? MX_PACK_DICT_MAX + 1 : h[2];
  *uniq = keys;
  return 0;
}

/* st->max_span, st->max_row_span (only for a forced OFF16; 0 otherwise) and the segment bases
 * (P->seg_base, P->nseg entries: freed by encode_columns unless the columns are delta coded). */
static int index_stats(mx_device *D, mx_scratch &W, cudaStream_t s, mx_cold_pack_stats *st) {
  const int n = D->cold_nnz;
  mx_cold_pack_dev *P = D->pack;
  int *span; /* [0] the segments', [1] the row chunks' */
  P->nseg = (int)(((int64_t)n + MX_PACK_SEG - 1) / MX_PACK_SEG);
  if (mx_cuda_alloc_on(D, &P->seg_base, (size_t)P->nseg, "pack: segment bases") || mx_scratch_alloc(D, W, &span, 2, "pack: spans")) return 1;
  mx_note_peak(D, W);
  int *const base = P->seg_base;
  const int nseg = P->nseg;
  MX_CUDA_TRY(cudaMemsetAsync(span, 0, 2 * sizeof(int), s));
  if (nseg > 0) {
    mx_pack_seg_bases<<<pk_blocks((int64_t)nseg * 32), MX_PACK_THREADS, 0, s>>>(n, nseg, D->cold_col, base, span);
    MX_LAUNCH_CHECK("pack: segment bases");
  }
  if (D->nrows > 0 && P->req.row == MX_ROW_OFF16) { /* only a forced OFF16 needs them (AUTO: rows plain) */
    mx_pack_row_spans<<<pk_blocks(D->nrows / MX_PACK_RCHUNK + 1), MX_PACK_THREADS, 0, s>>>(D->nrows, D->cold_rowptr, span + 1);
    MX_LAUNCH_CHECK("pack: row chunk spans");
  }
  int h[2] = {0, 0};
  MX_CUDA_TRY(cudaMemcpyAsync(h, span, sizeof h, cudaMemcpyDeviceToHost, s));
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  st->max_span = h[0];
  st->max_row_span = h[1];
  return 0;
}

/* ---- encoders ---------------------------------------------------------------------------------------- */

/* The value arrays of encoding ve (P's value arrays are empty). */
static int encode_values(mx_device *D, mx_cold_pack_dev *P, cudaStream_t s, mx_val_enc ve, int64_t ndistinct,
                         const u64 *uniq, const u64 *colbits) {
  const int n = D->cold_nnz;
  P->val_enc = ve;
  if (ve == MX_VAL_PLAIN) return 0;
  const u64 *src = ve == MX_VAL_COLCONST ? colbits : uniq;
  P->ndict = ve == MX_VAL_COLCONST ? D->ncols : (int)ndistinct;
  if (mx_cuda_alloc_on(D, &P->dict, (size_t)P->ndict, "pack: dictionary")) return 1;
  if (P->ndict > 0) MX_CUDA_TRY(cudaMemcpyAsync(P->dict, src, sizeof(double) * P->ndict, cudaMemcpyDeviceToDevice, s));
  if (ve == MX_VAL_COLCONST && mx_cuda_alloc_on(D, &P->xs, (size_t)D->ncols, "pack: scaled x")) return 1;
  if (n == 0 || (ve != MX_VAL_DICT8 && ve != MX_VAL_DICT16)) return 0;
  if (ve == MX_VAL_DICT8) {
    if (mx_cuda_alloc_on(D, &P->code8, (size_t)n, "pack: 1-byte value codes")) return 1;
    mx_pack_codes<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_val, uniq, P->ndict, P->code8);
  } else {
    if (mx_cuda_alloc_on(D, &P->code16, (size_t)n, "pack: 2-byte value codes")) return 1;
    mx_pack_codes<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_val, uniq, P->ndict, P->code16);
  }
  MX_LAUNCH_CHECK("pack: value codes");
  return 0;
}

/* The column arrays of encoding ie from the segment bases (freed when the columns stay plain). */
static int encode_columns(mx_device *D, mx_cold_pack_dev *P, cudaStream_t s, mx_idx_enc ie) {
  const int n = D->cold_nnz;
  const int *base = P->seg_base;
  P->idx_enc = ie;
  if (ie == MX_IDX_PLAIN || n == 0) {
    mx_cuda_free_on(D, &P->seg_base, (size_t)P->nseg);
    P->nseg = 0;
    return 0;
  }
  if (ie == MX_IDX_DELTA8) {
    if (mx_cuda_alloc_on(D, &P->delta8, (size_t)n, "pack: 1-byte column deltas")) return 1;
    mx_pack_deltas<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_col, base, P->delta8);
  } else {
    if (mx_cuda_alloc_on(D, &P->delta16, (size_t)n, "pack: 2-byte column deltas")) return 1;
    mx_pack_deltas<<<pk_blocks(n), MX_PACK_THREADS, 0, s>>>(n, D->cold_col, base, P->delta16);
  }
  MX_LAUNCH_CHECK("pack: column deltas");
  return 0;
}

/* The row pointer arrays of encoding re (PLAIN: none, the kernels read D's cold_rowptr). */
static int encode_rows(mx_device *D, mx_cold_pack_dev *P, cudaStream_t s, mx_row_enc re) {
  P->row_enc = re;
  if (re == MX_ROW_PLAIN) return 0;
  P->nrchunk = D->nrows / MX_PACK_RCHUNK + 1;
  if (mx_cuda_alloc_on(D, &P->row_base, (size_t)P->nrchunk, "pack: row chunk bases") ||
      mx_cuda_alloc_on(D, &P->row_off, (size_t)D->nrows + 1, "pack: 2-byte row offsets"))
    return 1;
  if (D->nrows == 0) { /* one pointer, 0 */
    MX_CUDA_TRY(cudaMemsetAsync(P->row_base, 0, sizeof(int), s));
    MX_CUDA_TRY(cudaMemsetAsync(P->row_off, 0, sizeof(uint16_t), s));
    return 0;
  }
  mx_pack_row_offsets<<<pk_blocks((int64_t)D->nrows + 1), MX_PACK_THREADS, 0, s>>>(D->nrows, D->cold_rowptr, P->row_base, P->row_off);
  MX_LAUNCH_CHECK("pack: row offsets");
  return 0;
}

/* Statistics, choice, encoding of D's cold CSR into D->pack (allocated, req set). */
static int build_pack(mx_device *D, cudaStream_t s) {
  mx_cold_pack_dev *P = D->pack;
  mx_scratch W(s);
  mx_cold_pack_stats st = {D->cold_nnz, D->ncols, 0, 1, 0, D->nrows, 0};
  u64 *uniq = nullptr, *colbits = nullptr;
  if (value_stats(D, W, s, P->req.val, &st, &uniq, &colbits) || index_stats(D, W, s, &st)) return 1;
  mx_val_enc ve;
  mx_idx_enc ie;
  mx_row_enc re;
  if (mx_cold_pack_choose(&P->req, &st, &ve, &ie, &re) != MX_OK)
    return mx_fail("mx_device_compress: the requested encoding (values %s, columns %s, rows %s) cannot hold the cold CSR "
                   "(%lld distinct values, column-constant %d, largest segment span %lld, largest row chunk span %lld)",
                   P->req.val == MX_PACK_AUTO ? "auto" : mx_val_enc_name(P->req.val),
                   P->req.idx == MX_PACK_AUTO ? "auto" : mx_idx_enc_name(P->req.idx),
                   P->req.row == MX_PACK_AUTO ? "auto" : mx_row_enc_name(P->req.row), (long long)st.ndistinct, st.colconst,
                   (long long)st.max_span, (long long)st.max_row_span);
  P->prev_val_enc = ve;
  if (encode_rows(D, P, s, re) || encode_columns(D, P, s, ie) || encode_values(D, P, s, ve, st.ndistinct, uniq, colbits)) return 1;
  MX_CUDA_TRY(cudaStreamSynchronize(s)); /* the scratch is freed when W goes */
  return 0;
}

/* ---- entry points ------------------------------------------------------------------------------------ */

__global__ void mx_pack_scale_x(int n, const double *__restrict__ s, const double *__restrict__ x, double *__restrict__ xs) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) xs[j] = __dmul_rn(s[j], x[j]);
}

int mx_cold_pack_dev_x(const mx_device *D, const double *x, cudaStream_t s, const double **xk) {
  const mx_cold_pack_dev *P = D->pack;
  *xk = x;
  if (!P || P->val_enc != MX_VAL_COLCONST || D->ncols == 0) return 0;
  mx_pack_scale_x<<<pk_blocks(D->ncols), MX_PACK_THREADS, 0, s>>>(D->ncols, P->dict, x, P->xs);
  MX_LAUNCH_CHECK("pack: scale x by the column constants");
  *xk = P->xs;
  return 0;
}

/* ---- the plain arrays a pack replaces (mx_device_pack_release_plain) ------------------------------------ */

/* The released plain arrays decoded from the pack: col[g] (NULL: not released) and val[g] (NULL: not
 * released), exactly the arrays it was encoded from. Plain parts come from D's own arrays (pcol,
 * pval: still there); a value is dict[code] (DICT*), or the column's constant dict[col] (COLCONST,
 * whose kernels fold the constant into x instead). */
template <int VE, int IE>
__global__ void __launch_bounds__(MX_PACK_THREADS) mx_pack_unpack(int n, mx_dec_pack<VE, IE> dec, const int *__restrict__ pcol,
                                                                  const double *__restrict__ pval, int *col, double *val) {
  const int g = blockIdx.x * MX_PACK_THREADS + threadIdx.x;
  if (g >= n) return;
  const int c = dec.col_at(pcol, g);
  if (col) col[g] = c;
  if (val) val[g] = VE == MX_VAL_COLCONST ? dec.dict[c] : dec.value(dec.raw_at(pval, g), c);
}

struct pack_unpack_launch {
  const mx_device *D;
  int *col;
  double *val;
  template <int VE, int IE>
  int run() const {
    mx_pack_unpack<VE, IE><<<pk_blocks(D->cold_nnz), MX_PACK_THREADS>>>(D->cold_nnz, mx_pack_decoder<VE, IE>(D->pack), D->cold_col,
                                                                         D->cold_val, col, val);
    MX_LAUNCH_CHECK("pack: decoding the plain cold arrays");
    return 0;
  }
};

/* Whether D's plain cold arrays are read by nothing but what a release keeps working: the pack in use
 * by the cold kernel, nothing else over them (cuSPARSE descriptors, row patterns, a hub split, x-hot
 * codes, feature passes in flight, no SpMM kernel that reads them). */
static bool plain_releasable(const mx_device *D) {
  const bool in_use = D->cold == MX_COLD_SEGMENT || (D->cold == MX_COLD_MERGE && mx_cold_pack_merge_on());
  return mx_cold_pack_dev_active(D) && in_use && !D->plain_released && !D->csp && !D->rowpat && !D->hub_split &&
         !(D->xhot_cold && D->xhot_n > 0) && !D->features_job && !D->spmm_reads_plain && D->cold_nnz > 0;
}

extern "C" int mx_device_pack_release_plain(mx_device *D) {
  if (!D) return mx_fail("mx_device_pack_release_plain: NULL argument");
  if (!plain_releasable(D)) return 0;
  const int packed = (D->pack->idx_enc != MX_IDX_PLAIN ? MX_PLAIN_COLS : 0) | (D->pack->val_enc != MX_VAL_PLAIN ? MX_PLAIN_VALS : 0);
  const int more = packed & ~D->pack_released;
  if (!more) return 0; /* asked before every product: no synchronisation when there is nothing to free */
  MX_CUDA_TRY(cudaDeviceSynchronize()); /* the products in flight finish first (the packed kernels never read them) */
  if (more & MX_PLAIN_COLS) mx_cuda_free_on(D, &D->cold_col, (size_t)D->cold_nnz);
  if (more & MX_PLAIN_VALS) mx_cuda_free_on(D, &D->cold_val, (size_t)D->cold_nnz);
  D->pack_released |= more;
  return 0;
}

int mx_pack_restore_plain(mx_device *D, bool decode_values) {
  if (!D->pack_released) return 0;
  if (!D->pack) return mx_fail("mx_device_pack_restore_plain: the plain cold arrays are released without a pack");
  const size_t n = (size_t)D->cold_nnz;
  int *col = nullptr;
  double *val = nullptr;
  if (((D->pack_released & MX_PLAIN_COLS) && mx_cuda_alloc_on(D, &col, n, "restoring the plain cold columns")) ||
      ((D->pack_released & MX_PLAIN_VALS) && mx_cuda_alloc_on(D, &val, n, "restoring the plain cold values"))) {
    mx_cuda_free_on(D, &col, n);
    return 1;
  }
  if (D->bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes;
  double *dval = decode_values ? val : nullptr; /* else allocated only: the caller writes every value */
  const int rc = (col || dval) && mx_pack_dispatch(D->pack, pack_unpack_launch{D, col, dval});
  if (rc || mx_cuda_check(cudaDeviceSynchronize(), "pack: decoding the plain cold arrays")) {
    mx_cuda_free_on(D, &col, n);
    mx_cuda_free_on(D, &val, n);
    return 1;
  }
  if (col) D->cold_col = col;
  if (val) D->cold_val = val;
  D->pack_released = 0;
  return 0;
}

extern "C" int mx_device_pack_restore_plain(mx_device *D) {
  if (!D) return mx_fail("mx_device_pack_restore_plain: NULL argument");
  return mx_pack_restore_plain(D, true);
}

extern "C" size_t mx_device_pack_plain_released(const mx_device *D) {
  if (!D) return 0;
  return (size_t)D->cold_nnz * (((D->pack_released & MX_PLAIN_COLS) ? sizeof(int) : 0) + ((D->pack_released & MX_PLAIN_VALS) ? sizeof(double) : 0));
}

extern "C" int mx_device_compress(mx_device *D, const mx_pack_request *req) {
  if (D && D->plain_released) return mx_fail("mx_device_compress: the plain cold CSR is released");
  if (!D || !req) return mx_fail("mx_device_compress: NULL argument");
  if (mx_device_pack_restore_plain(D)) return 1; /* the pack is made again (or removed) from the plain arrays */
  mx_hot_pack_dev_free(D);
  if (req->val == MX_PACK_AUTO) { /* the SE hot region's values (mx_hot_pack.cu) */
    mx_trace_step(nullptr);
    const int rc = mx_hot_pack_dev_build(D);
    mx_trace_step("compress (hot values)");
    if (rc) return 1;
  }
  const int rc = mx_cold_compress_dev(D, req);
  mx_spmm_choice_reset(D); /* the SpMVs' form changed, and with it the SpMM's ways (row patterns) */
  return rc;
}

int mx_cold_compress_dev(mx_device *D, const mx_pack_request *req) {
  if (D->pack_released) return mx_fail("mx_device_compress: the plain cold arrays are released (mx_device_pack_restore_plain first)");
  mx_cold_pack_dev_free(D);
  mx_cold_rowpat_dev_free(D);
  D->rowpat_lost = 0;
  if (req->form == MX_FORM_PACK && req->val == MX_VAL_PLAIN && req->idx == MX_IDX_PLAIN && req->row == MX_ROW_PLAIN) return 0; /* off */
  if (D->xhot_cold && D->xhot_n > 0) return 0; /* x-hot codes in the cold CSR: compression off */
  if (req->form != MX_FORM_PACK) { /* the row-pattern form first (mx_cold_rowpat.cu): kept where it pays */
    int kept;
    const char *why;
    mx_trace_step(nullptr);
    const int rc = mx_cold_rowpat_dev_build(D, req, &kept, &why);
    mx_trace_step("compress (row patterns)");
    if (rc) return 1;
    if (D->bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes;
    if (kept || (req->val == MX_VAL_PLAIN && req->idx == MX_IDX_PLAIN && req->row == MX_ROW_PLAIN)) return 0; /* {plain, plain, plain, auto}: row patterns or nothing */
  }
  D->pack = (mx_cold_pack_dev *)calloc(1, sizeof *D->pack);
  if (!D->pack) return mx_fail("mx_device_compress: out of host memory");
  D->pack->req = *req;
  mx_trace_step(nullptr);
  const int rc = build_pack(D, 0);
  mx_trace_step("compress (statistics, encoding)");
  if (rc) {
    mx_cold_pack_dev_free(D);
    return 1;
  }
  if (D->bytes > D->build_peak_bytes) D->build_peak_bytes = D->bytes;
  return 0;
}

int mx_cold_pack_dev_refresh(mx_device *D, cudaStream_t s) {
  mx_cold_pack_dev *P = D->pack;
  if (!P) return 0;
  mx_scratch W(s);
  mx_cold_pack_stats st = {D->cold_nnz, D->ncols, 0, 1, 0, D->nrows, 0};
  u64 *uniq = nullptr, *colbits = nullptr;
  if (value_stats(D, W, s, P->req.val, &st, &uniq, &colbits)) { /* the old codes are stale: plain values (cold_val is refreshed) */
    P->prev_val_enc = P->val_enc;
    P->fell_back = P->val_enc != MX_VAL_PLAIN;
    free_values(D, P);
    return 1;
  }
  const mx_val_enc ve = mx_cold_pack_refresh_choose(&P->req, &st);
  P->prev_val_enc = P->val_enc;
  P->fell_back = P->val_enc != MX_VAL_PLAIN && ve == MX_VAL_PLAIN;
  free_values(D, P);
  if (encode_values(D, P, s, ve, st.ndistinct, uniq, colbits)) {
    free_values(D, P); /* plain values: still right (cold_val is refreshed) */
    return 1;
  }
  MX_CUDA_TRY(cudaStreamSynchronize(s));
  return 0;
}

extern "C" int mx_device_compress_info(const mx_device *D, mx_device_pack_info *info) {
  if (!D || !info) return mx_fail("mx_device_compress_info: NULL argument");
  memset(info, 0, sizeof *info);
  const mx_cold_pack_dev *P = D->pack;
  info->packed = mx_cold_pack_dev_active(D);
  info->in_use = info->packed && (D->cold == MX_COLD_SEGMENT || (D->cold == MX_COLD_MERGE && mx_cold_pack_merge_on()));
  info->val_enc = P ? P->val_enc : MX_VAL_PLAIN;
  info->idx_enc = P ? P->idx_enc : MX_IDX_PLAIN;
  info->row_enc = info->packed ? P->row_enc : MX_ROW_PLAIN; /* read only beside a packed part */
  info->prev_val_enc = P ? P->prev_val_enc : MX_VAL_PLAIN;
  info->fell_back = P ? P->fell_back : 0;
  info->ndict = P ? P->ndict : 0;
  const mx_cold_pack_stats st = {D->cold_nnz, D->ncols, info->ndict, 0, 0};
  info->bytes = mx_pack_row_bytes(info->row_enc, D->nrows) + mx_pack_value_bytes(info->val_enc, &st) + mx_pack_index_bytes(info->idx_enc, D->cold_nnz);
  info->plain_bytes = mx_csr_bytes(D->nrows, D->cold_nnz);
  const mx_hot_pack_dev *H = D->hot_pack;
  info->hot_val_enc = H ? H->enc : MX_VAL_PLAIN;
  info->hot_prev_val_enc = H ? H->prev : MX_VAL_PLAIN;
  info->hot_fell_back = H ? H->fell_back : 0;
  const int64_t nslots = D->mode == MX_HOT_SE ? D->se_nslots : 0;
  info->hot_plain_bytes = mx_hot_values_bytes(MX_VAL_PLAIN, D->ncols, nslots);
  info->hot_bytes = mx_hot_values_bytes(info->hot_val_enc, D->ncols, nslots);
  return mx_cold_rowpat_dev_info(D, info); /* the row-pattern form instead, when D holds it */
}

extern "C" int mx_device_download_pack(const mx_device *D, mx_cold_pack *Q) {
  if (!D || !Q) return mx_fail("mx_device_download_pack: NULL argument");
  memset(Q, 0, sizeof *Q);
  const mx_cold_pack_dev *P = D->pack;
  const size_t n = (size_t)D->cold_nnz;
  Q->nrows = D->nrows;
  Q->ncols = D->ncols;
  Q->nnz = D->cold_nnz;
  Q->req = P ? P->req : mx_pack_request_of(MX_COMPRESS_OFF);
  Q->val_enc = P ? P->val_enc : MX_VAL_PLAIN;
  Q->idx_enc = P ? P->idx_enc : MX_IDX_PLAIN;
  Q->row_enc = P ? P->row_enc : MX_ROW_PLAIN;
  Q->nrchunk = P ? P->nrchunk : 0;
  Q->prev_val_enc = P ? P->prev_val_enc : MX_VAL_PLAIN;
  Q->fell_back = P ? P->fell_back : 0;
  Q->ndict = P ? P->ndict : 0;
  Q->nseg = P ? P->nseg : 0;
  const bool pv = Q->val_enc == MX_VAL_PLAIN, pi = Q->idx_enc == MX_IDX_PLAIN;
  const bool pr = Q->row_enc == MX_ROW_PLAIN;
  int rc = mx_download_array(pr ? D->cold_rowptr : nullptr, (size_t)D->nrows + 1, &Q->rowptr, "download pack rowptr") ||
           mx_download_array(pv ? D->cold_val : nullptr, n, &Q->val, "download pack values") ||
           mx_download_array(pi ? D->cold_col : nullptr, n, &Q->col, "download pack columns");
  if (!rc && P)
    rc = mx_download_array(P->dict, (size_t)P->ndict, &Q->dict, "download pack dictionary") ||
         mx_download_array(P->code8, P->code8 ? n : 0, &Q->code8, "download pack 1-byte codes") ||
         mx_download_array(P->code16, P->code16 ? n : 0, &Q->code16, "download pack 2-byte codes") ||
         mx_download_array(P->seg_base, (size_t)P->nseg, &Q->seg_base, "download pack segment bases") ||
         mx_download_array(P->delta8, P->delta8 ? n : 0, &Q->delta8, "download pack 1-byte deltas") ||
         mx_download_array(P->delta16, P->delta16 ? n : 0, &Q->delta16, "download pack 2-byte deltas") ||
         mx_download_array(P->row_base, (size_t)P->nrchunk, &Q->row_base, "download pack row chunk bases") ||
         mx_download_array(P->row_off, P->row_off ? (size_t)D->nrows + 1 : 0, &Q->row_off, "download pack row offsets");
  if (rc) mx_cold_pack_free(Q);
  return rc;
}

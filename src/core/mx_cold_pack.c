/* mx_cold_pack.c - the packed cold CSR (mx_cold_pack.h): statistics, choice by exact bytes,
 * encoders, value refresh and scaling, the CPU kernel y = C x + z, expansion back to CSR. */
#include <stdlib.h>
#include <string.h>

#include "mx_cold_pack.h"

/* ---- requests and names ------------------------------------------------------------------------ */

mx_pack_request mx_pack_request_of(mx_compress_request c) {
  mx_pack_request r;
  r.val = c == MX_COMPRESS_AUTO ? MX_PACK_AUTO : MX_VAL_PLAIN;
  r.idx = c == MX_COMPRESS_AUTO ? MX_PACK_AUTO : MX_IDX_PLAIN;
  r.row = c == MX_COMPRESS_AUTO ? MX_PACK_AUTO : MX_ROW_PLAIN;
  r.form = c == MX_COMPRESS_AUTO ? MX_FORM_AUTO : MX_FORM_PACK;
  return r;
}

const char *mx_val_enc_name(int e) {
  static const char *n[] = {"plain", "dict0", "dict8", "dict16", "colconst"};
  return e >= 0 && e <= MX_VAL_COLCONST ? n[e] : "?";
}

const char *mx_idx_enc_name(int e) {
  static const char *n[] = {"plain", "delta8", "delta16"};
  return e >= 0 && e <= MX_IDX_DELTA16 ? n[e] : "?";
}

const char *mx_row_enc_name(int e) {
  static const char *n[] = {"plain", "off16"};
  return e >= 0 && e <= MX_ROW_OFF16 ? n[e] : "?";
}

/* ---- exact bytes and the choice ------------------------------------------------------------------ */

static int64_t nseg_of(int64_t nnz) { return (nnz + MX_PACK_SEG - 1) / MX_PACK_SEG; }
static int64_t nrchunk_of(int32_t nrows) { return ((int64_t)nrows + MX_PACK_RCHUNK) / MX_PACK_RCHUNK; } /* nrows+1 pointers */

size_t mx_pack_value_bytes(mx_val_enc e, const mx_cold_pack_stats *st) {
  const size_t nnz = (size_t)st->nnz, nd = (size_t)st->ndistinct;
  switch (e) {
    case MX_VAL_DICT0: return 8 * nd;
    case MX_VAL_DICT8: return 8 * nd + nnz;
    case MX_VAL_DICT16: return 8 * nd + 2 * nnz;
    case MX_VAL_COLCONST: return 8 * (size_t)st->ncols;
    default: return 8 * nnz;
  }
}

/* bytes of the value part moved per product (mx_cold_pack_choose): COLCONST also scales x */
static size_t value_moved(mx_val_enc e, const mx_cold_pack_stats *st) {
  return mx_pack_value_bytes(e, st) + (e == MX_VAL_COLCONST ? 16 * (size_t)st->ncols : 0);
}

size_t mx_pack_index_bytes(mx_idx_enc e, int64_t nnz) {
  if (e == MX_IDX_DELTA8) return 4 * (size_t)nseg_of(nnz) + (size_t)nnz;
  if (e == MX_IDX_DELTA16) return 4 * (size_t)nseg_of(nnz) + 2 * (size_t)nnz;
  return 4 * (size_t)nnz;
}

size_t mx_pack_row_bytes(mx_row_enc e, int32_t nrows) {
  if (e == MX_ROW_OFF16) return 4 * (size_t)nrchunk_of(nrows) + 2 * ((size_t)nrows + 1);
  return 4 * ((size_t)nrows + 1);
}

double mx_pack_assumed_gain(double gain, int32_t nrows, int32_t ncols, int64_t cold_nnz, size_t l2_bytes) {
  const double bytes = 12.0 * (double)cold_nnz + 4.0 * ((double)nrows + 1.0) + 8.0 * ((double)nrows + (double)ncols);
  if (l2_bytes == 0 || bytes > 0.5 * (double)l2_bytes || gain <= MX_PACK_GAIN_IN_L2) return gain;
  return MX_PACK_GAIN_IN_L2;
}

size_t mx_pack_bytes_floor(int32_t nrows, int64_t nnz) {
  const size_t cols_plain = mx_pack_index_bytes(MX_IDX_PLAIN, nnz), cols_d8 = mx_pack_index_bytes(MX_IDX_DELTA8, nnz);
  return mx_pack_row_bytes(MX_ROW_PLAIN, nrows) + (nnz > 0 ? 8 : 0) + (cols_d8 < cols_plain ? cols_d8 : cols_plain);
}

int mx_pack_value_fits(mx_val_enc e, const mx_cold_pack_stats *st) {
  switch (e) {
    case MX_VAL_PLAIN: return 1;
    case MX_VAL_DICT0: return st->ndistinct <= 1;
    case MX_VAL_DICT8: return st->ndistinct <= 256;
    case MX_VAL_DICT16: return st->ndistinct <= MX_PACK_DICT_MAX;
    case MX_VAL_COLCONST: return st->colconst != 0;
    default: return 0;
  }
}

int mx_pack_index_fits(mx_idx_enc e, const mx_cold_pack_stats *st) {
  switch (e) {
    case MX_IDX_PLAIN: return 1;
    case MX_IDX_DELTA8: return st->max_span <= 0xff;
    case MX_IDX_DELTA16: return st->max_span <= 0xffff;
    default: return 0;
  }
}

int mx_pack_row_fits(mx_row_enc e, const mx_cold_pack_stats *st) {
  if (e == MX_ROW_PLAIN) return 1;
  return e == MX_ROW_OFF16 && st->max_row_span <= 0xffff;
}

mx_status mx_cold_pack_choose(const mx_pack_request *req, const mx_cold_pack_stats *st, mx_val_enc *v, mx_idx_enc *ix,
                              mx_row_enc *rw) {
  if (req->val != MX_PACK_AUTO) {
    if (req->val < MX_VAL_PLAIN || req->val > MX_VAL_COLCONST || !mx_pack_value_fits((mx_val_enc)req->val, st)) return MX_ERR_ARG;
    *v = (mx_val_enc)req->val;
  } else {
    *v = MX_VAL_PLAIN;
    for (int e = MX_VAL_DICT0; e <= MX_VAL_COLCONST; e++) /* strictly fewer bytes: ties keep the earlier */
      if (mx_pack_value_fits((mx_val_enc)e, st) && value_moved((mx_val_enc)e, st) < value_moved(*v, st)) *v = (mx_val_enc)e;
  }
  if (req->idx != MX_PACK_AUTO) {
    if (req->idx < MX_IDX_PLAIN || req->idx > MX_IDX_DELTA16 || !mx_pack_index_fits((mx_idx_enc)req->idx, st)) return MX_ERR_ARG;
    *ix = (mx_idx_enc)req->idx;
  } else {
    *ix = MX_IDX_PLAIN;
    for (int e = MX_IDX_DELTA8; e <= MX_IDX_DELTA16; e++)
      if (mx_pack_index_fits((mx_idx_enc)e, st) && mx_pack_index_bytes((mx_idx_enc)e, st->nnz) < mx_pack_index_bytes(*ix, st->nnz))
        *ix = (mx_idx_enc)e;
  }
  if (req->row != MX_PACK_AUTO) {
    if (req->row < MX_ROW_PLAIN || req->row > MX_ROW_OFF16 || !mx_pack_row_fits((mx_row_enc)req->row, st)) return MX_ERR_ARG;
    *rw = (mx_row_enc)req->row;
  } else /* OFF16 is smaller wherever it fits, but the GPU kernels read it slower (mx_cold_pack.h) */
    *rw = MX_ROW_PLAIN;
  return MX_OK;
}

/* ---- statistics ---------------------------------------------------------------------------------- */

static inline uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static inline double double_of(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* A set of bit patterns of at most MX_PACK_DICT_MAX + 1 members (open addressing, 2^18 slots). */
#define SET_BITS 18
#define SET_SLOTS (1u << SET_BITS)
typedef struct {
  uint64_t *key;
  uint8_t *used;
  int64_t n;
} bitset_t;

static inline uint32_t set_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (uint32_t)(k >> (64 - SET_BITS));
}

/* Insert k; the count stops growing past MX_PACK_DICT_MAX + 1 (the caller stops there). */
static void set_add(bitset_t *S, uint64_t k) {
  uint32_t h = set_hash(k);
  while (S->used[h]) {
    if (S->key[h] == k) return;
    h = (h + 1) & (SET_SLOTS - 1);
  }
  S->used[h] = 1;
  S->key[h] = k;
  S->n++;
}

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* value p of n values: val[src[p]], or val[p] without src */
static inline double value_at(const double *val, const int32_t *src, int64_t p) { return src ? val[src[p]] : val[p]; }

/* The distinct bit patterns of the n values, up to MX_PACK_DICT_MAX + 1 of them: their count, and
 * when dict != NULL and the count is <= MX_PACK_DICT_MAX, the patterns sorted ascending into dict. */
static mx_status distinct_values(const double *val, const int32_t *src, int64_t n, int64_t *count, uint64_t *dict) {
  bitset_t S = {malloc(SET_SLOTS * sizeof(uint64_t)), calloc(SET_SLOTS, 1), 0};
  if (!S.key || !S.used) {
    free(S.key), free(S.used);
    return MX_ERR_MEM;
  }
  for (int64_t p = 0; p < n && S.n <= MX_PACK_DICT_MAX; p++) set_add(&S, bits_of(value_at(val, src, p)));
  *count = S.n;
  if (dict && S.n <= MX_PACK_DICT_MAX) {
    int64_t k = 0;
    for (uint32_t h = 0; h < SET_SLOTS; h++)
      if (S.used[h]) dict[k++] = S.key[h];
    qsort(dict, (size_t)k, sizeof(uint64_t), cmp_u64);
  }
  free(S.key), free(S.used);
  return MX_OK;
}

/* 1 iff every column's values share one bit pattern; then s[j] = it (0.0 for empty columns) when
 * s != NULL. col(p) by the callback-free pair (col, P) below. */
static mx_status column_constants(int32_t ncols, int64_t n, const int32_t *col, const mx_cold_pack *P, const double *val,
                                  const int32_t *src, int *ok, double *s) {
  uint64_t *sb = calloc((size_t)ncols + 1, sizeof(uint64_t));
  uint8_t *seen = calloc((size_t)ncols + 1, 1);
  if (!sb || !seen) {
    free(sb), free(seen);
    return MX_ERR_MEM;
  }
  *ok = 1;
  for (int64_t p = 0; p < n && *ok; p++) {
    const int32_t j = col ? col[p] : mx_pack_col(P, p);
    const uint64_t b = bits_of(value_at(val, src, p));
    if (!seen[j]) seen[j] = 1, sb[j] = b;
    else if (sb[j] != b) *ok = 0;
  }
  if (*ok && s)
    for (int32_t j = 0; j < ncols; j++) s[j] = double_of(sb[j]);
  free(sb), free(seen);
  return MX_OK;
}

/* max over segments of (max - min column) */
static int64_t max_segment_span(const int32_t *col, int64_t n) {
  int64_t span = 0;
  for (int64_t s0 = 0; s0 < n; s0 += MX_PACK_SEG) {
    int32_t lo = col[s0], hi = col[s0];
    for (int64_t p = s0 + 1; p < n && p < s0 + MX_PACK_SEG; p++) {
      lo = col[p] < lo ? col[p] : lo;
      hi = col[p] > hi ? col[p] : hi;
    }
    if ((int64_t)hi - lo > span) span = (int64_t)hi - lo;
  }
  return span;
}

/* max over row chunks of (row pointer of its last pointer - of its first); rowptr has nrows+1 */
static int64_t max_row_chunk_span(const int32_t *rowptr, int32_t nrows) {
  int64_t span = 0;
  for (int64_t i0 = 0; i0 <= nrows; i0 += MX_PACK_RCHUNK) {
    const int64_t i1 = i0 + MX_PACK_RCHUNK - 1 < nrows ? i0 + MX_PACK_RCHUNK - 1 : nrows;
    if ((int64_t)rowptr[i1] - rowptr[i0] > span) span = (int64_t)rowptr[i1] - rowptr[i0];
  }
  return span;
}

/* The value statistics (ndistinct, colconst) of n values with columns col (or P's). */
static mx_status value_stats(int32_t ncols, int64_t n, const int32_t *col, const mx_cold_pack *P, const double *val,
                             const int32_t *src, mx_cold_pack_stats *st) {
  mx_status s = distinct_values(val, src, n, &st->ndistinct, NULL);
  if (s == MX_OK) s = column_constants(ncols, n, col, P, val, src, &st->colconst, NULL);
  return s;
}

mx_status mx_cold_pack_stats_of(const mx_csr *C, mx_cold_pack_stats *st) {
  const int64_t n = C->nrows > 0 ? C->rowptr[C->nrows] : 0;
  memset(st, 0, sizeof *st);
  st->nnz = n;
  st->ncols = C->ncols;
  st->max_span = max_segment_span(C->colidx, n);
  st->nrows = C->nrows;
  st->max_row_span = C->nrows > 0 ? max_row_chunk_span(C->rowptr, C->nrows) : 0;
  return value_stats(C->ncols, n, C->colidx, NULL, C->val, NULL, st);
}

/* ---- encoders ------------------------------------------------------------------------------------ */

/* rank of bit pattern b in the sorted dict of nd entries (b is in it) */
static int32_t dict_rank(const uint64_t *dict, int32_t nd, uint64_t b) {
  int32_t lo = 0, hi = nd - 1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (dict[mid] < b) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void free_values(mx_cold_pack *P) {
  free(P->dict), free(P->code8), free(P->code16), free(P->val);
  P->dict = NULL, P->code8 = NULL, P->code16 = NULL, P->val = NULL;
  P->ndict = 0;
}

/* The value arrays of encoding e for value p = val[src[p]] (columns already in P). */
static mx_status encode_values(mx_cold_pack *P, mx_val_enc e, const double *val, const int32_t *src) {
  const int64_t n = P->nnz;
  P->val_enc = e;
  if (e == MX_VAL_PLAIN) {
    if (!(P->val = malloc(((size_t)n + 1) * sizeof(double)))) return MX_ERR_MEM;
    for (int64_t p = 0; p < n; p++) P->val[p] = value_at(val, src, p);
    return MX_OK;
  }
  if (e == MX_VAL_COLCONST) {
    int ok = 0;
    P->ndict = P->ncols;
    if (!(P->dict = malloc(((size_t)P->ncols + 1) * sizeof(double)))) return MX_ERR_MEM;
    mx_status s = column_constants(P->ncols, n, NULL, P, val, src, &ok, P->dict);
    return s != MX_OK ? s : ok ? MX_OK : MX_ERR_ARG;
  }
  uint64_t *d = malloc(((size_t)MX_PACK_DICT_MAX + 1) * sizeof(uint64_t));
  int64_t nd = 0;
  mx_status s = d ? distinct_values(val, src, n, &nd, d) : MX_ERR_MEM;
  if (s == MX_OK && nd > (e == MX_VAL_DICT0 ? 1 : e == MX_VAL_DICT8 ? 256 : MX_PACK_DICT_MAX)) s = MX_ERR_ARG;
  if (s == MX_OK) {
    P->ndict = (int32_t)nd;
    P->dict = malloc(((size_t)nd + 1) * sizeof(double));
    if (e == MX_VAL_DICT8) P->code8 = malloc((size_t)n + 1);
    if (e == MX_VAL_DICT16) P->code16 = malloc(((size_t)n + 1) * sizeof(uint16_t));
    if (!P->dict || (e == MX_VAL_DICT8 && !P->code8) || (e == MX_VAL_DICT16 && !P->code16)) s = MX_ERR_MEM;
  }
  if (s == MX_OK) {
    for (int64_t k = 0; k < nd; k++) P->dict[k] = double_of(d[k]);
    for (int64_t p = 0; p < n && e != MX_VAL_DICT0; p++) {
      const int32_t r = dict_rank(d, (int32_t)nd, bits_of(value_at(val, src, p)));
      if (e == MX_VAL_DICT8) P->code8[p] = (uint8_t)r;
      else P->code16[p] = (uint16_t)r;
    }
  }
  free(d);
  return s;
}

/* The column arrays of encoding e. */
static mx_status encode_columns(mx_cold_pack *P, mx_idx_enc e, const int32_t *col) {
  const int64_t n = P->nnz;
  P->idx_enc = e;
  if (e == MX_IDX_PLAIN) {
    if (!(P->col = malloc(((size_t)n + 1) * sizeof(int32_t)))) return MX_ERR_MEM;
    if (n > 0) memcpy(P->col, col, (size_t)n * sizeof(int32_t));
    return MX_OK;
  }
  P->nseg = (int32_t)nseg_of(n);
  P->seg_base = malloc(((size_t)P->nseg + 1) * sizeof(int32_t));
  if (e == MX_IDX_DELTA8) P->delta8 = malloc((size_t)n + 1);
  else P->delta16 = malloc(((size_t)n + 1) * sizeof(uint16_t));
  if (!P->seg_base || (!P->delta8 && !P->delta16)) return MX_ERR_MEM;
  for (int32_t k = 0; k < P->nseg; k++) {
    const int64_t s0 = (int64_t)k * MX_PACK_SEG, s1 = s0 + MX_PACK_SEG < n ? s0 + MX_PACK_SEG : n;
    int32_t lo = col[s0];
    for (int64_t p = s0 + 1; p < s1; p++) lo = col[p] < lo ? col[p] : lo;
    P->seg_base[k] = lo;
    for (int64_t p = s0; p < s1; p++) {
      const uint32_t d = (uint32_t)(col[p] - lo);
      if (e == MX_IDX_DELTA8) P->delta8[p] = (uint8_t)d;
      else P->delta16[p] = (uint16_t)d;
    }
  }
  return MX_OK;
}

/* The row pointer arrays of encoding e from the cold CSR's rowptr (nrows+1 entries). */
static mx_status encode_rows(mx_cold_pack *P, mx_row_enc e, const int32_t *rowptr) {
  const int64_t np = (int64_t)P->nrows + 1;
  P->row_enc = e;
  if (e == MX_ROW_PLAIN) {
    if (!(P->rowptr = malloc((size_t)np * sizeof(int32_t)))) return MX_ERR_MEM;
    if (P->nrows > 0) memcpy(P->rowptr, rowptr, (size_t)np * sizeof(int32_t));
    else P->rowptr[0] = 0;
    return MX_OK;
  }
  P->nrchunk = (int32_t)nrchunk_of(P->nrows);
  P->row_base = malloc((size_t)P->nrchunk * sizeof(int32_t));
  P->row_off = malloc((size_t)np * sizeof(uint16_t));
  if (!P->row_base || !P->row_off) return MX_ERR_MEM;
  for (int64_t i = 0; i < np; i++) {
    const int32_t r = P->nrows > 0 ? rowptr[i] : 0;
    if (i % MX_PACK_RCHUNK == 0) P->row_base[i / MX_PACK_RCHUNK] = r;
    P->row_off[i] = (uint16_t)(r - P->row_base[i / MX_PACK_RCHUNK]);
  }
  return MX_OK;
}

mx_status mx_cold_pack_build(const mx_csr *C, const mx_pack_request *req, mx_cold_pack *P) {
  if (!P) return MX_ERR_ARG;
  memset(P, 0, sizeof *P);
  if (!C || !req || C->nrows < 0 || C->ncols < 0 || (C->nrows > 0 && !C->rowptr)) return MX_ERR_ARG;
  mx_cold_pack_stats st;
  mx_status s = mx_cold_pack_stats_of(C, &st);
  mx_val_enc ve = MX_VAL_PLAIN;
  mx_idx_enc ie = MX_IDX_PLAIN;
  mx_row_enc re = MX_ROW_PLAIN;
  if (s == MX_OK) s = mx_cold_pack_choose(req, &st, &ve, &ie, &re);
  if (s != MX_OK) return s;
  P->nrows = C->nrows;
  P->ncols = C->ncols;
  P->nnz = (int32_t)st.nnz;
  P->req = *req;
  P->prev_val_enc = ve;
  s = encode_rows(P, re, C->rowptr);
  if (s == MX_OK) s = encode_columns(P, ie, C->colidx);
  if (s == MX_OK) s = encode_values(P, ve, C->val, NULL);
  if (s != MX_OK) mx_cold_pack_free(P);
  return s;
}

int mx_pack_colconst_settles(int val, const mx_cold_pack_stats *st) {
  if (!st->colconst || (val != MX_PACK_AUTO && val != MX_VAL_COLCONST)) return 0;
  if (val == MX_VAL_COLCONST) return 1;
  mx_cold_pack_stats two = *st;
  two.ndistinct = 2;
  return value_moved(MX_VAL_COLCONST, &two) < value_moved(MX_VAL_DICT8, &two) &&
         value_moved(MX_VAL_COLCONST, &two) < value_moved(MX_VAL_PLAIN, &two);
}

mx_val_enc mx_cold_pack_refresh_choose(const mx_pack_request *req, const mx_cold_pack_stats *st) {
  const mx_pack_request vreq = {req->val, MX_IDX_PLAIN, MX_ROW_PLAIN, MX_FORM_PACK};
  mx_val_enc ve;
  mx_idx_enc ie;
  mx_row_enc re;
  return mx_cold_pack_choose(&vreq, st, &ve, &ie, &re) == MX_OK ? ve : MX_VAL_PLAIN;
}

/* ---- refresh and scale --------------------------------------------------------------------------- */

mx_status mx_cold_pack_refresh(mx_cold_pack *P, const double *val, const int32_t *src) {
  if (!P || (P->nnz > 0 && !val)) return MX_ERR_ARG;
  mx_cold_pack_stats st = {P->nnz, P->ncols, 0, 0, 0, P->nrows, 0};
  mx_status s = value_stats(P->ncols, P->nnz, NULL, P, val, src, &st);
  if (s != MX_OK) return s;
  const mx_val_enc ve = mx_cold_pack_refresh_choose(&P->req, &st);
  P->prev_val_enc = P->val_enc;
  P->fell_back = P->val_enc != MX_VAL_PLAIN && ve == MX_VAL_PLAIN;
  free_values(P);
  s = encode_values(P, ve, val, src);
  if (s != MX_OK) free_values(P); /* out of memory: P has no values; the caller must not use it */
  return s;
}

void mx_cold_pack_scale(mx_cold_pack *P, double alpha) {
  if (!P) return;
  if (P->val_enc == MX_VAL_PLAIN)
    for (int32_t p = 0; p < P->nnz; p++) P->val[p] *= alpha;
  else
    for (int32_t k = 0; k < P->ndict; k++) P->dict[k] *= alpha;
}

/* ---- kernel, expansion, bytes, free -------------------------------------------------------------- */

#if defined(__GNUC__)
#define MX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MX_ALWAYS_INLINE inline
#endif

/* y[i] = z[i] (or 0) + sum_p value(p) * x[col(p)], left to right, as mx_cold_mult of mx_spmv.c, with the
 * encodings ve, ie as parameters: each call in mx_cold_pack_spmv passes literals, so every copy is
 * specialised and decodes without a per-nonzero switch (the generic mx_pack_col/mx_pack_val loop was
 * slower than the plain CSR kernel: docs/performance.md, "Behind the source's constants"). */
static MX_ALWAYS_INLINE void pack_rows(const mx_cold_pack *P, mx_val_enc ve, mx_idx_enc ie, const double *x, const double *z,
                                       double *y) {
  const int32_t m = P->nrows, *base = P->seg_base, *col = P->col;
  const uint8_t *d8 = P->delta8, *c8 = P->code8;
  const uint16_t *d16 = P->delta16, *c16 = P->code16;
  const double *dict = P->dict, *val = P->val;
  int32_t end = m > 0 ? mx_pack_rowptr(P, 0) : 0;
  for (int32_t i = 0; i < m; i++) {
    const int32_t beg = end;
    double s = z ? z[i] : 0.0;
    end = mx_pack_rowptr(P, i + 1);
    for (int32_t p = beg; p < end; p++) {
      const int32_t c = ie == MX_IDX_DELTA8    ? base[p / MX_PACK_SEG] + (int32_t)d8[p]
                        : ie == MX_IDX_DELTA16 ? base[p / MX_PACK_SEG] + (int32_t)d16[p]
                                               : col[p];
      const double v = ve == MX_VAL_DICT0      ? dict[0]
                       : ve == MX_VAL_DICT8    ? dict[c8[p]]
                       : ve == MX_VAL_DICT16   ? dict[c16[p]]
                       : ve == MX_VAL_COLCONST ? dict[c]
                                               : val[p];
      s += v * x[c];
    }
    y[i] = s;
  }
}

/* pack_rows for index encoding ie, every value encoding */
static MX_ALWAYS_INLINE void pack_rows_idx(const mx_cold_pack *P, mx_idx_enc ie, const double *x, const double *z, double *y) {
  switch (P->val_enc) {
    case MX_VAL_DICT0: pack_rows(P, MX_VAL_DICT0, ie, x, z, y); break;
    case MX_VAL_DICT8: pack_rows(P, MX_VAL_DICT8, ie, x, z, y); break;
    case MX_VAL_DICT16: pack_rows(P, MX_VAL_DICT16, ie, x, z, y); break;
    case MX_VAL_COLCONST: pack_rows(P, MX_VAL_COLCONST, ie, x, z, y); break;
    default: pack_rows(P, MX_VAL_PLAIN, ie, x, z, y); break;
  }
}

void mx_cold_pack_spmv(const mx_cold_pack *P, const double *x, const double *z, double *y) {
  switch (P->idx_enc) {
    case MX_IDX_DELTA8: pack_rows_idx(P, MX_IDX_DELTA8, x, z, y); break;
    case MX_IDX_DELTA16: pack_rows_idx(P, MX_IDX_DELTA16, x, z, y); break;
    default: pack_rows_idx(P, MX_IDX_PLAIN, x, z, y); break;
  }
}

void mx_cold_pack_expand(const mx_cold_pack *P, int32_t *rowptr, int32_t *col, double *val) {
  for (int32_t i = 0; i <= P->nrows; i++) rowptr[i] = mx_pack_rowptr(P, i);
  for (int32_t p = 0; p < P->nnz; p++) {
    col[p] = mx_pack_col(P, p);
    val[p] = mx_pack_val(P, p, col[p]);
  }
}

size_t mx_cold_pack_bytes(const mx_cold_pack *P) {
  mx_cold_pack_stats st = {P->nnz, P->ncols, P->ndict, 0, 0, P->nrows, 0};
  return mx_pack_row_bytes(P->row_enc, P->nrows) + mx_pack_value_bytes(P->val_enc, &st) + mx_pack_index_bytes(P->idx_enc, P->nnz);
}

void mx_cold_pack_free(mx_cold_pack *P) {
  if (!P) return;
  free(P->rowptr), free(P->row_base), free(P->row_off);
  free_values(P);
  free(P->seg_base), free(P->delta8), free(P->delta16), free(P->col);
  memset(P, 0, sizeof *P);
}

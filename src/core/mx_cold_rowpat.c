/* mx_cold_rowpat.c - the row-pattern form of a cold CSR (mx_cold_rowpat.h): the encoder (one pass
 * over the rows, repeats found through a hash table of the patterns so far), the CPU kernel
 * y = C x + z, expansion back to CSR, scaling, bytes. */
#include <stdlib.h>
#include <string.h>

#include "mx_cold_rowpat.h"
#include "mx_cold_pack.h"

/* Patterns never outnumber MX_ROWPAT_MAX_ENTRIES + 1: every pattern but the empty one holds at least
 * one entry. So 16-bit ids always suffice (no third id width), and the hash table below is sized
 * by this bound, not by the rows. */
#define MAX_PATTERNS (MX_ROWPAT_MAX_ENTRIES + 1)

static inline uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* ---- bytes --------------------------------------------------------------------------------------- */

static int id_bytes_of(int32_t npat) { return npat <= 256 ? 1 : 2; }

size_t mx_rowpat_bytes_of(int32_t nrows, int32_t npat, int32_t nent) {
  return (size_t)id_bytes_of(npat) * (size_t)nrows + 4 * ((size_t)npat + 1) + 12 * (size_t)nent;
}

size_t mx_cold_rowpat_bytes(const mx_cold_rowpat *R) { return mx_rowpat_bytes_of(R->nrows, R->npat, R->nent); }

int mx_rowpat_pays(int32_t nrows, int64_t nnz, int32_t npat, int32_t nent) {
  return nnz > 0 && mx_rowpat_bytes_of(nrows, npat, nent) < mx_pack_bytes_floor(nrows, nnz);
}

/* ---- the encoder --------------------------------------------------------------------------------- */

/* 64-bit hash of a row's content: its length, then per nonzero in row order col - i and the value's
 * bit pattern (a multiply-rotate mix per word, a murmur3 finaliser at the end). Rows of equal
 * content hash alike; unequal rows may collide, so a hit is always confirmed by same_content. */
static uint64_t row_hash(int32_t i, int32_t len, const int32_t *col, const double *val) {
  const uint64_t K = 0x9e3779b97f4a7c15ull;
  uint64_t h = (uint64_t)(uint32_t)len * K;
  for (int32_t k = 0; k < len; k++) {
    h = ((h << 5) | (h >> 59)) ^ (uint64_t)(uint32_t)(col[k] - i);
    h *= K;
    h = ((h << 5) | (h >> 59)) ^ bits_of(val[k]);
    h *= K;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/* 1 iff row i (len nonzeros col[], val[]) has exactly the content of pattern p of R: the same length,
 * the same col - i and the same value bit pattern at every position. */
static int same_content(const mx_cold_rowpat *R, int32_t p, int32_t i, int32_t len, const int32_t *col, const double *val) {
  const int32_t b = R->pat_ptr[p];
  if (R->pat_ptr[p + 1] - b != len) return 0;
  for (int32_t k = 0; k < len; k++)
    if (R->pat_off[b + k] != col[k] - i || bits_of(R->pat_val[b + k]) != bits_of(val[k])) return 0;
  return 1;
}

/* Open addressing with linear probing over the patterns found so far: slot s holds a pattern id
 * (-1 = empty) and that pattern's hash. Slots: a power of two >= 2 * (the most patterns possible
 * for this many rows), so the table is never more than half full and a probe always ends. */
typedef struct {
  int32_t *pat;
  uint64_t *hash;
  uint32_t mask;
} pat_table;

static mx_status table_init(pat_table *T, int32_t nrows) {
  const int64_t most = nrows < MAX_PATTERNS ? nrows : MAX_PATTERNS;
  uint32_t n = 2;
  while (n < 2 * most) n *= 2;
  T->mask = n - 1;
  T->pat = malloc((size_t)n * sizeof(int32_t));
  T->hash = malloc((size_t)n * sizeof(uint64_t));
  if (!T->pat || !T->hash) return MX_ERR_MEM;
  for (uint32_t s = 0; s < n; s++) T->pat[s] = -1;
  return MX_OK;
}

static void table_free(pat_table *T) { free(T->pat), free(T->hash); }

/* Append row i's content to R as pattern R->npat. MX_ERR_ARG if the patterns would then hold more
 * than MX_ROWPAT_MAX_ENTRIES entries (pat_off/pat_val have room for exactly that many). */
static mx_status append_pattern(mx_cold_rowpat *R, int32_t i, int32_t len, const int32_t *col, const double *val) {
  const int32_t b = R->nent;
  if ((int64_t)b + len > MX_ROWPAT_MAX_ENTRIES) return MX_ERR_ARG;
  for (int32_t k = 0; k < len; k++) {
    R->pat_off[b + k] = col[k] - i;
    R->pat_val[b + k] = val[k];
  }
  R->nent = b + len;
  R->npat++;
  R->pat_ptr[R->npat] = R->nent;
  return MX_OK;
}

/* The id of row i's pattern in R, appending it as a new pattern (the next id) on first use. */
static mx_status pattern_of_row(mx_cold_rowpat *R, pat_table *T, int32_t i, int32_t len, const int32_t *col, const double *val,
                                int32_t *id) {
  const uint64_t h = row_hash(i, len, col, val);
  uint32_t s = (uint32_t)h & T->mask;
  for (; T->pat[s] >= 0; s = (s + 1) & T->mask)
    if (T->hash[s] == h && same_content(R, T->pat[s], i, len, col, val)) {
      *id = T->pat[s];
      return MX_OK;
    }
  *id = R->npat;
  const mx_status st = append_pattern(R, i, len, col, val);
  if (st == MX_OK) T->pat[s] = *id, T->hash[s] = h;
  return st;
}

static int cmp_hash_len(const void *a, const void *b) {
  const uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
  return x < y ? -1 : x > y;
}

int mx_rowpat_cannot_hold(const mx_csr *C, int32_t samples) {
  const int32_t m = C->nrows < samples ? C->nrows : samples;
  uint64_t     *key; /* per sampled row: its hash, its length */
  int64_t       entries = 0;
  int           proven  = 0;
  if (m <= 0 || !(key = malloc(2 * sizeof(uint64_t) * (size_t)m))) return 0;
  for (int32_t k = 0; k < m && !proven; k++) {
    const int32_t i = (int32_t)((int64_t)k * C->nrows / m), lo = C->rowptr[i], len = C->rowptr[i + 1] - lo;
    proven     = len > MX_ROWPAT_MAX_LEN;
    key[2 * k] = proven ? 0 : row_hash(i, len, C->colidx + lo, C->val + lo), key[2 * k + 1] = (uint64_t)len;
  }
  if (!proven) {
    qsort(key, (size_t)m, 2 * sizeof(uint64_t), cmp_hash_len);
    for (int32_t k = 0; k < m; k++)
      if (k == 0 || key[2 * k] != key[2 * k - 2]) entries += (int64_t)key[2 * k + 1];
    proven = entries > MX_ROWPAT_MAX_ENTRIES;
  }
  free(key);
  return proven;
}

/* The ids kept in 16 bits while the rows are read become 8-bit ids when npat <= 256. */
static mx_status narrow_ids(mx_cold_rowpat *R) {
  R->id_bytes = id_bytes_of(R->npat);
  if (R->id_bytes == 2) return MX_OK;
  if (!(R->id8 = malloc((size_t)R->nrows + 1))) return MX_ERR_MEM;
  for (int32_t i = 0; i < R->nrows; i++) R->id8[i] = (uint8_t)R->id16[i];
  free(R->id16);
  R->id16 = NULL;
  return MX_OK;
}

/* Rows longer than MX_ROWPAT_MAX_LEN, a decreasing row pointer or too many entries stop the pass at
 * once with MX_ERR_ARG. Invariants after row i: rows 0..i have ids in id16, the patterns 0..npat-1
 * are the distinct contents of rows 0..i in order of first use, each with its first row's entries. */
mx_status mx_cold_rowpat_build(const mx_csr *C, mx_cold_rowpat *R) {
  if (!R) return MX_ERR_ARG;
  memset(R, 0, sizeof *R);
  if (!C || C->nrows < 0 || C->ncols < 0 || (C->nrows > 0 && !C->rowptr) || (C->nrows > 0 && C->rowptr[0] != 0)) return MX_ERR_ARG;
  const int32_t m = C->nrows, nnz = m > 0 ? C->rowptr[m] : 0;
  if (nnz > 0 && (!C->colidx || !C->val)) return MX_ERR_ARG;
  const int64_t cap_ent = nnz < MX_ROWPAT_MAX_ENTRIES ? nnz : MX_ROWPAT_MAX_ENTRIES;
  const int64_t cap_pat = m < MAX_PATTERNS ? m : MAX_PATTERNS;
  pat_table T = {NULL, NULL, 0};
  R->nrows = m, R->ncols = C->ncols, R->nnz = nnz;
  R->id_bytes = 1;
  R->id16 = malloc(((size_t)m + 1) * sizeof(uint16_t));
  R->pat_ptr = malloc(((size_t)cap_pat + 1) * sizeof(int32_t));
  R->pat_off = malloc(((size_t)cap_ent + 1) * sizeof(int32_t));
  R->pat_val = malloc(((size_t)cap_ent + 1) * sizeof(double));
  mx_status st = R->id16 && R->pat_ptr && R->pat_off && R->pat_val ? table_init(&T, m) : MX_ERR_MEM;
  if (st == MX_OK) R->pat_ptr[0] = 0;
  for (int32_t i = 0; i < m && st == MX_OK; i++) {
    const int32_t b = C->rowptr[i];
    const int64_t len = (int64_t)C->rowptr[i + 1] - b;
    int32_t id = 0;
    if (len < 0 || len > MX_ROWPAT_MAX_LEN) st = MX_ERR_ARG;
    else if ((st = pattern_of_row(R, &T, i, (int32_t)len, C->colidx + b, C->val + b, &id)) == MX_OK) R->id16[i] = (uint16_t)id;
  }
  table_free(&T);
  if (st == MX_OK) st = narrow_ids(R);
  if (st != MX_OK) mx_cold_rowpat_free(R);
  return st;
}

/* ---- kernel, expansion, scaling, free ------------------------------------------------------------ */

#if defined(__GNUC__)
#define MX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MX_ALWAYS_INLINE inline
#endif

/* y[i] = z[i] (or 0) + sum_k pat_val[k] * x[i + pat_off[k]] over row i's pattern, left to right:
 * the expression of mx_cold_mult (mx_spmv.c) and pack_rows (mx_cold_pack.c), so y is bitwise theirs.
 * id_bytes is a literal in each call of mx_cold_rowpat_spmv: one copy per id width. z[i] is read
 * before y[i] is written, so y == z works. */
static MX_ALWAYS_INLINE void rowpat_rows(const mx_cold_rowpat *R, int id_bytes, const double *x, const double *z, double *y) {
  const int32_t m = R->nrows, *ptr = R->pat_ptr, *off = R->pat_off;
  const uint8_t *id8 = R->id8;
  const uint16_t *id16 = R->id16;
  const double *val = R->pat_val;
  for (int32_t i = 0; i < m; i++) {
    const int32_t p = id_bytes == 1 ? (int32_t)id8[i] : (int32_t)id16[i];
    double s = z ? z[i] : 0.0;
    for (int32_t k = ptr[p]; k < ptr[p + 1]; k++) {
      const int32_t c = i + off[k];
      const double v = val[k];
      s += v * x[c];
    }
    y[i] = s;
  }
}

void mx_cold_rowpat_spmv(const mx_cold_rowpat *R, const double *x, const double *z, double *y) {
  if (R->id_bytes == 1) rowpat_rows(R, 1, x, z, y);
  else rowpat_rows(R, 2, x, z, y);
}

void mx_cold_rowpat_expand(const mx_cold_rowpat *R, int32_t *rowptr, int32_t *col, double *val) {
  int32_t q = 0;
  rowptr[0] = 0;
  for (int32_t i = 0; i < R->nrows; i++) {
    const int32_t p = mx_rowpat_id(R, i);
    for (int32_t k = R->pat_ptr[p]; k < R->pat_ptr[p + 1]; k++, q++) {
      col[q] = i + R->pat_off[k];
      val[q] = R->pat_val[k];
    }
    rowptr[i + 1] = q;
  }
}

void mx_cold_rowpat_scale(mx_cold_rowpat *R, double alpha) {
  if (!R) return;
  for (int32_t k = 0; k < R->nent; k++) R->pat_val[k] = alpha * R->pat_val[k];
}

void mx_cold_rowpat_free(mx_cold_rowpat *R) {
  if (!R) return;
  free(R->id8), free(R->id16), free(R->pat_ptr), free(R->pat_off), free(R->pat_val);
  memset(R, 0, sizeof *R);
}

/* mx_cold_hub.c - the hub split of a cold CSR (mx_cold_hub.h): the builder (column ranks by a
 * counting sort, the rest and hub parts in one pass over the rows, pseudo-rows sorted by length with
 * a counting sort, the slices), the CPU kernel y += hub x, bytes. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mx_cold_hub.h"

static inline uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static int is_nan(double d) { return d != d; }

void mx_cold_hub_free(mx_cold_hub *H) {
  if (!H) return;
  free(H->hubcol);
  free(H->hubscale);
  free(H->slice_off);
  free(H->slice_len);
  free(H->slice_row);
  free(H->slice_rank);
  free(H->slice_val);
  free(H->split_row);
  free(H->split_first);
  free(H->rest_rowptr);
  free(H->rest_col);
  free(H->rest_val);
  memset(H, 0, sizeof *H);
}

mx_csr mx_cold_hub_rest(const mx_cold_hub *H) {
  mx_csr v = {H->nrows, H->ncols, H->rest_rowptr, H->rest_col, H->rest_val};
  return v;
}

/* ---- the builder --------------------------------------------------------------------------------- */

static mx_status check_input(const mx_csr *C, int32_t K) {
  if (!C || K < 0 || K > MX_HUB_MAX_COLS || C->nrows < 0 || C->ncols < 0 || !C->rowptr || C->rowptr[0] != 0) return MX_ERR_ARG;
  for (int32_t i = 0; i < C->nrows; i++)
    if (C->rowptr[i + 1] < C->rowptr[i]) return MX_ERR_ARG;
  const int32_t nnz = C->rowptr[C->nrows];
  if (nnz > 0 && (!C->colidx || !C->val)) return MX_ERR_ARG;
  if (nnz > INT32_MAX - MX_HUB_SLICE * MX_HUB_ROW_MAX_FOLDED) return MX_ERR_OVERFLOW; /* slots <= nnz + 32 row_max */
  for (int32_t p = 0; p < nnz; p++)
    if (C->colidx[p] < 0 || C->colidx[p] >= C->ncols) return MX_ERR_ARG;
  return MX_OK;
}

/* rank[j] = j's place among the columns by descending count (ties by index) when it is below K and
 * the column is not empty, else -1; hubcol[rank] = column. Returns the hub columns (<= K), or -1 when
 * out of memory. A stable counting sort by count: O(ncols + nnz). */
static int32_t rank_columns(const mx_csr *C, int32_t K, int32_t *rank, int32_t *hubcol) {
  const int32_t n = C->ncols, nnz = C->rowptr[C->nrows];
  int32_t *cnt = calloc((size_t)n + 1, sizeof(int32_t)), *start = calloc((size_t)nnz + 2, sizeof(int32_t));
  if (!cnt || !start) {
    free(cnt);
    free(start);
    return -1;
  }
  for (int32_t p = 0; p < nnz; p++) cnt[C->colidx[p]]++;
  for (int32_t j = 0; j < n; j++) start[cnt[j]]++;
  /* start[c] = first place of the columns of count c: the columns of larger counts come before */
  int32_t at = 0;
  for (int32_t c = nnz; c >= 0; c--) {
    const int32_t m = start[c];
    start[c] = at;
    at += m;
  }
  int32_t used = 0;
  for (int32_t j = 0; j < n; j++) {
    const int32_t r = start[cnt[j]]++;
    rank[j] = r < K && cnt[j] > 0 ? r : -1;
    if (rank[j] >= 0) hubcol[r] = j, used++;
  }
  free(cnt);
  free(start);
  return used;
}

/* hubscale[r] = the one value of hub column r's nonzeros (bit for bit, no NaN), 1 if all have one, else 0 */
static int column_constants(const mx_csr *C, const int32_t *rank, int32_t K, double *hubscale) {
  unsigned char *seen = calloc((size_t)K + 1, 1);
  if (!seen) return -1;
  int constant = 1;
  const int32_t nnz = C->rowptr[C->nrows];
  for (int32_t p = 0; p < nnz && constant; p++) {
    const int32_t r = rank[C->colidx[p]];
    if (r < 0) continue;
    if (is_nan(C->val[p])) constant = 0;
    else if (!seen[r]) seen[r] = 1, hubscale[r] = C->val[p];
    else if (bits_of(hubscale[r]) != bits_of(C->val[p])) constant = 0;
  }
  free(seen);
  return constant;
}

/* The rest CSR of H, and the hub nonzeros by row (hub_ptr nrows + 1, hub_rank, hub_val in row order). */
static void split_rows(const mx_csr *C, const int32_t *rank, mx_cold_hub *H, int32_t *hub_ptr, uint16_t *hub_rank, double *hub_val) {
  int32_t nr = 0, nh = 0;
  H->rest_rowptr[0] = hub_ptr[0] = 0;
  for (int32_t i = 0; i < C->nrows; i++) {
    for (int32_t p = C->rowptr[i]; p < C->rowptr[i + 1]; p++) {
      const int32_t r = rank[C->colidx[p]];
      if (r >= 0) {
        hub_rank[nh] = (uint16_t)r;
        if (hub_val) hub_val[nh] = C->val[p];
        nh++;
      } else {
        H->rest_col[nr] = C->colidx[p];
        H->rest_val[nr] = C->val[p];
        nr++;
      }
    }
    H->rest_rowptr[i + 1] = nr;
    hub_ptr[i + 1] = nh;
  }
}

/* Pseudo-rows: (first hub nonzero, length, out) of every row's whole hub part or its pieces of
 * Hc->row_max, in row order; split rows into H->split_row/split_first. Returns their count. */
static int32_t pseudo_rows(const mx_cold_hub *Hc, const int32_t *hub_ptr, int32_t *pstart, int32_t *plen, int32_t *pout,
                           int32_t *split_row, int32_t *split_first, int32_t *nsplit) {
  const int32_t row_max = Hc->row_max;
  int32_t P = 0, parts = 0, ns = 0;
  for (int32_t i = 0; i < Hc->nrows; i++) {
    const int32_t b = hub_ptr[i], e = hub_ptr[i + 1];
    if (e - b <= 0) continue;
    if (e - b <= row_max) {
      pstart[P] = b, plen[P] = e - b, pout[P++] = i;
      continue;
    }
    split_row[ns] = i, split_first[ns++] = parts;
    for (int32_t q = b; q < e; q += row_max) {
      const int32_t len = e - q < row_max ? e - q : row_max;
      pstart[P] = q, plen[P] = len, pout[P++] = ~parts++;
    }
  }
  split_first[ns] = parts;
  *nsplit = ns;
  return P;
}

/* order = the pseudo-rows (lengths <= row_max) by descending length, equal lengths in pseudo-row
 * order (counting sort) */
static void order_by_length(int32_t P, const int32_t *plen, int32_t row_max, int32_t *order) {
  int32_t start[MX_HUB_ROW_MAX_FOLDED + 2] = {0};
  for (int32_t q = 0; q < P; q++) start[plen[q]]++;
  int32_t at = 0;
  for (int32_t len = row_max; len >= 0; len--) {
    const int32_t m = start[len];
    start[len] = at;
    at += m;
  }
  for (int32_t q = 0; q < P; q++) order[start[plen[q]]++] = q;
}

/* the slice arrays of H from the ordered pseudo-rows; MX_ERR_MEM */
static mx_status fill_slices(mx_cold_hub *H, int32_t P, const int32_t *order, const int32_t *pstart, const int32_t *plen,
                             const int32_t *pout, const uint16_t *hub_rank, const double *hub_val) {
  const int32_t ns = (P + MX_HUB_SLICE - 1) / MX_HUB_SLICE;
  H->nslices = ns;
  H->slice_off = malloc(((size_t)ns + 1) * sizeof(int32_t));
  H->slice_len = malloc(((size_t)ns + 1) * sizeof(int32_t));
  H->slice_row = malloc(((size_t)ns * MX_HUB_SLICE + 1) * sizeof(int32_t));
  if (!H->slice_off || !H->slice_len || !H->slice_row) return MX_ERR_MEM;
  H->slice_off[0] = 0;
  for (int32_t s = 0; s < ns; s++) {
    H->slice_len[s] = plen[order[MX_HUB_SLICE * s]];
    H->slice_off[s + 1] = H->slice_off[s] + MX_HUB_SLICE * H->slice_len[s];
  }
  const size_t slots = (size_t)H->slice_off[ns];
  H->slice_rank = malloc((slots + 1) * sizeof(uint16_t));
  if (hub_val) H->slice_val = calloc(slots + 1, sizeof(double));
  if (!H->slice_rank || (hub_val && !H->slice_val)) return MX_ERR_MEM;
  for (size_t t = 0; t < slots; t++) H->slice_rank[t] = (uint16_t)H->K;
  for (int32_t t = 0; t < ns * MX_HUB_SLICE; t++) H->slice_row[t] = INT32_MIN;
  for (int32_t q = 0; q < P; q++) {
    const int32_t r = order[q], s = q / MX_HUB_SLICE, l = q % MX_HUB_SLICE;
    H->slice_row[q] = pout[r];
    for (int32_t j = 0; j < plen[r]; j++) {
      const size_t at = (size_t)MX_HUB_SLOT(H->slice_off[s], H->slice_len[s], j, l);
      H->slice_rank[at] = hub_rank[pstart[r] + j];
      if (hub_val) H->slice_val[at] = hub_val[pstart[r] + j];
    }
  }
  return MX_OK;
}

/* everything after the ranks: rest, hub nonzeros, pseudo-rows, slices (H->K, hubcol, hubscale, row_max set) */
static mx_status build_parts(const mx_csr *C, const int32_t *rank, mx_cold_hub *H) {
  const int32_t nnz = C->rowptr[C->nrows];
  int32_t *hub_ptr = malloc(((size_t)C->nrows + 1) * sizeof(int32_t));
  uint16_t *hub_rank = malloc(((size_t)nnz + 1) * sizeof(uint16_t));
  double *hub_val = H->hubscale ? NULL : malloc(((size_t)nnz + 1) * sizeof(double));
  H->rest_rowptr = malloc(((size_t)C->nrows + 1) * sizeof(int32_t));
  H->rest_col = malloc(((size_t)nnz + 1) * sizeof(int32_t));
  H->rest_val = malloc(((size_t)nnz + 1) * sizeof(double));
  mx_status st = MX_ERR_MEM;
  int32_t *pstart = NULL, *plen = NULL, *pout = NULL, *order = NULL;
  if (!hub_ptr || !hub_rank || (!H->hubscale && !hub_val) || !H->rest_rowptr || !H->rest_col || !H->rest_val) goto done;
  split_rows(C, rank, H, hub_ptr, hub_rank, hub_val);
  H->nnz = hub_ptr[C->nrows];
  /* pseudo-rows <= rows with hub nonzeros + hub nonzeros / row_max; split rows <= rows */
  const size_t pcap = (size_t)C->nrows + (size_t)H->nnz / (size_t)H->row_max + 1;
  pstart = malloc(pcap * sizeof(int32_t)), plen = malloc(pcap * sizeof(int32_t)), pout = malloc(pcap * sizeof(int32_t));
  order = malloc(pcap * sizeof(int32_t));
  H->split_row = malloc(((size_t)C->nrows + 1) * sizeof(int32_t));
  H->split_first = malloc(((size_t)C->nrows + 1) * sizeof(int32_t));
  if (!pstart || !plen || !pout || !order || !H->split_row || !H->split_first) goto done;
  const int32_t P = pseudo_rows(H, hub_ptr, pstart, plen, pout, H->split_row, H->split_first, &H->nsplit);
  H->nparts = H->split_first[H->nsplit];
  order_by_length(P, plen, H->row_max, order);
  st = fill_slices(H, P, order, pstart, plen, pout, hub_rank, hub_val);
done:
  free(hub_ptr);
  free(hub_rank);
  free(hub_val);
  free(pstart);
  free(plen);
  free(pout);
  free(order);
  return st;
}

mx_status mx_cold_hub_build(const mx_csr *C, int32_t K, mx_cold_hub *H) {
  if (!H) return MX_ERR_ARG;
  memset(H, 0, sizeof *H);
  mx_status st = check_input(C, K);
  if (st != MX_OK) return st;
  H->nrows = C->nrows, H->ncols = C->ncols;
  if (K > C->ncols) K = C->ncols;
  int32_t *rank = malloc(((size_t)C->ncols + 1) * sizeof(int32_t));
  H->hubcol = malloc(((size_t)K + 1) * sizeof(int32_t));
  H->hubscale = malloc(((size_t)K + 1) * sizeof(double));
  st = MX_ERR_MEM;
  if (rank && H->hubcol && H->hubscale && (H->K = rank_columns(C, K, rank, H->hubcol)) >= 0) {
    const int constant = column_constants(C, rank, H->K, H->hubscale);
    if (constant >= 0) {
      if (!constant) free(H->hubscale), H->hubscale = NULL;
      H->row_max = mx_hub_row_max(H->hubscale != NULL);
      st = build_parts(C, rank, H);
    }
  }
  free(rank);
  if (st != MX_OK) mx_cold_hub_free(H);
  return st;
}

/* ---- the default rule ---------------------------------------------------------------------------- */

mx_status mx_cold_hub_stats(const mx_csr *C, int32_t K, int64_t *hub_nnz, int64_t *hub_rows) {
  if (!hub_nnz || !hub_rows) return MX_ERR_ARG;
  *hub_nnz = *hub_rows = 0;
  mx_status st = check_input(C, K);
  if (st != MX_OK) return st;
  if (K > C->ncols) K = C->ncols;
  int32_t *rank = malloc(((size_t)C->ncols + 1) * sizeof(int32_t)), *hubcol = malloc(((size_t)K + 1) * sizeof(int32_t));
  st = rank && hubcol && rank_columns(C, K, rank, hubcol) >= 0 ? MX_OK : MX_ERR_MEM;
  for (int32_t i = 0; st == MX_OK && i < C->nrows; i++) {
    int32_t h = 0;
    for (int32_t p = C->rowptr[i]; p < C->rowptr[i + 1]; p++) h += rank[C->colidx[p]] >= 0;
    *hub_nnz += h;
    *hub_rows += h > 0;
  }
  free(rank);
  free(hubcol);
  return st;
}

int mx_hub_pays(int64_t hub_nnz, int64_t hub_rows) {
  return hub_nnz >= MX_HUB_AUTO_MIN_NNZ && hub_rows > 0 && hub_nnz >= (int64_t)MX_HUB_AUTO_MIN_ROW * hub_rows;
}

/* ---- the CPU kernel ------------------------------------------------------------------------------ */

/* pseudo-row l of slice s: its products in order from 0 (the padding is skipped: adding 0.0 to a sum
 * that started at +0.0 never changes it) */
static double slice_lane_sum(const mx_cold_hub *H, int32_t s, int32_t l, const double *x) {
  double sum = 0.0;
  for (int32_t j = 0; j < H->slice_len[s]; j++) {
    const size_t at = (size_t)MX_HUB_SLOT(H->slice_off[s], H->slice_len[s], j, l);
    const int32_t r = H->slice_rank[at];
    if (r == H->K) continue;
    const double xv = x[H->hubcol[r]];
    sum += H->slice_val ? H->slice_val[at] * xv : xv * H->hubscale[r];
  }
  return sum;
}

/* split row i's parts: 32 lane sums (lane l: parts l, l+32, ... in order), then the xor butterfly */
static double split_row_sum(const mx_cold_hub *H, int32_t i, const double *part) {
  double s[MX_HUB_SLICE] = {0.0}, t[MX_HUB_SLICE];
  for (int32_t q = H->split_first[i]; q < H->split_first[i + 1]; q++) s[(q - H->split_first[i]) % MX_HUB_SLICE] += part[q];
  for (int d = MX_HUB_SLICE / 2; d > 0; d >>= 1) {
    for (int l = 0; l < MX_HUB_SLICE; l++) t[l] = s[l] + s[l ^ d];
    memcpy(s, t, sizeof s);
  }
  return s[0];
}

mx_status mx_cold_hub_spmv_add(const mx_cold_hub *H, const double *x, double *y) {
  double *part = H->nparts ? malloc((size_t)H->nparts * sizeof(double)) : NULL;
  if (H->nparts && !part) return MX_ERR_MEM;
  for (int32_t s = 0; s < H->nslices; s++)
    for (int32_t l = 0; l < MX_HUB_SLICE; l++) {
      const int32_t out = H->slice_row[MX_HUB_SLICE * s + l];
      if (out == INT32_MIN) continue;
      const double sum = slice_lane_sum(H, s, l, x);
      if (out >= 0) y[out] += sum;
      else part[~out] = sum;
    }
  for (int32_t i = 0; i < H->nsplit; i++) y[H->split_row[i]] += split_row_sum(H, i, part);
  free(part);
  return MX_OK;
}

size_t mx_cold_hub_bytes(const mx_cold_hub *H) {
  const size_t slots = H->nslices ? (size_t)H->slice_off[H->nslices] : 0;
  return slots * (sizeof(uint16_t) + (H->slice_val ? sizeof(double) : 0)) +
         (size_t)H->nslices * (2 + MX_HUB_SLICE) * sizeof(int32_t) + (size_t)H->nparts * 2 * sizeof(double) +
         (size_t)H->nsplit * 2 * sizeof(int32_t) + (size_t)H->K * (sizeof(int32_t) + (H->hubscale ? sizeof(double) : 0));
}

/* mx_spmm_ways.cu - C = A B for k dense columns on the GPU (issue 43): the plan per k (the byte rule,
 * the launch groups), the ways (our kernels on B in place or on panels, the padded panels, the
 * panels with SpMVs, the SpMVs, the pairs, the row patterns, the hub split's way, the whole matrix
 * all cold) and
 * the timed choice between them per bucket of k, and the entry points (mx_device.h). The kernels and
 * their launches are mx_spmm.cu's (mx_spmm_impl.h). */
#include <string.h>
#include "mx_device_impl.h"
#include "mx_spmm_impl.h"

static int spmm_group(const mx_device *D, int k);
static bool spmm_plain_kept(const mx_device *D);
static bool spmm_pairs_offered(const mx_device *D, int k, bool kernels);

/* k columns' bucket of the timed choice: k itself below 8 (there the pairs' parity and a narrow
 * panel's padding change the ways' order from one k to the next: dbir2, H200, k = 2 / 3: the pairs
 * fastest at 2, the kernels at 3), then 5 + floor(log2 k), the last one open */
static int spmm_bucket(int k) {
  if (k < 8) return std::max(k, 0);
  int b = 8;
  while (b + 1 < MX_SPMM_BUCKETS && (2 << (b - 5)) <= k) ++b;
  return b;
}


/* ---- the rule ------------------------------------------------------------------------------------- */

/* Bytes one SpMV of D reads of the matrix: the cold part as its kernel reads it (pack or row
 * patterns where in use) plus the hot part; and the same with the cold part plain (what the SpMM
 * kernels read). */
static void spmm_matrix_bytes(const mx_device *D, double *in_use, double *plain) {
  const double hot = 12.0 * D->hot_nnz + 4.0 * D->nchunks * MX_CHUNK_ROWS;
  *plain = (double)mx_csr_bytes(D->nrows, D->cold_nnz) + hot;
  *in_use = *plain;
  mx_device_pack_info pi;
  if (!D->hub_split && mx_device_compress_info(D, &pi) == 0 && pi.packed && pi.in_use) *in_use = (double)pi.bytes + hot;
}

/* The hub split's way is the only one: k = 1 (its SpMV), or D's plain arrays are released (the whole
 * matrix's ways have nothing to read); else it is one way of the timed choice. */
static bool spmm_split_alone(const mx_device *D, int k) { return D->hub_split && (k == 1 || D->plain_released); }

static int g_l2_rule = 1;
extern "C" int mx_spmm_set_l2_rule(int on) {
  const int old = g_l2_rule;
  if (on == 0 || on == 1) g_l2_rule = on;
  return old;
}

/* The byte rule: the SpMM kernels where they move fewer bytes than k SpMVs of the form in use (the
 * kernels read the plain arrays), wherever D holds row patterns (their way moves fewer bytes than k
 * SpMVs of the form at every k >= 2), and wherever the plain matrix fits half the L2 (its reads are
 * L2 hits from one product to the next: bytes do not rank the ways there, the timed choice does);
 * from MX_SPMM_MIN_K columns on; in_use and plain: D's bytes per SpMV
 * (spmm_matrix_bytes: the form in use, the plain arrays). */
static bool spmm_rule_kernels_at(const mx_device *D, int k, double in_use, double plain) {
  const double vec = 8.0 * ((double)D->ncols + D->nrows);
  const bool fits_l2 = g_l2_rule && plain <= 0.5 * (double)mx_device_l2_bytes();
  return k >= MX_SPMM_MIN_K && (D->rowpat || fits_l2 || plain + k * vec < k * (in_use + vec));
}

static bool spmm_rule_kernels(const mx_device *D, int k) {
  double in_use, plain;
  spmm_matrix_bytes(D, &in_use, &plain);
  return spmm_rule_kernels_at(D, k, in_use, plain);
}

extern "C" int mx_device_spmm_plan(const mx_device *D, int k, mx_spmm_plan *plan) {
  if (!D || !plan) return mx_fail("mx_device_spmm_plan: NULL argument");
  memset(plan, 0, sizeof *plan);
  plan->k = k;
  if (spmm_split_alone(D, k)) { /* the rest by its own rule, the hub part in slabs */
    if (mx_device_spmm_plan(mx_device_hub_rest(D), k, plan)) return 1;
    plan->hub_slabs = 1;
    return 0;
  }
  double in_use, plain;
  spmm_matrix_bytes(D, &in_use, &plain);
  const double vec = 8.0 * ((double)D->ncols + D->nrows);
  plan->bytes_per_column = (double)k * (in_use + vec);
  plan->bytes_kernel = plain + (double)k * vec;
  plan->kernel = spmm_rule_kernels_at(D, k, in_use, plain);
  const int choice = D->spmm_choice[spmm_bucket(k)];
  plan->timed = (plan->kernel || spmm_pairs_offered(D, k, false)) && choice != 0;
  for (int w = 0; w < MX_SPMM_NWAYS; ++w) plan->way_us[w] = D->spmm_way_us[spmm_bucket(k)][w];
  plan->cold_panels = choice == MX_SPMM_PANELS || choice == MX_SPMM_PADDED || choice == MX_SPMM_PANELS_SPMV;
  plan->padded_panels = choice == MX_SPMM_PADDED;
  plan->rest_spmv = choice == MX_SPMM_PANELS_SPMV;
  plan->hub_slabs = choice == MX_SPMM_HUB;
  plan->whole = choice == MX_SPMM_WHOLE;
  plan->rowpat = choice == MX_SPMM_ROWPAT;
  plan->pairs = choice == MX_SPMM_PAIRS || choice == MX_SPMM_PAIRS_IN_PLACE;
  plan->pairs_in_place = choice == MX_SPMM_PAIRS_IN_PLACE;
  if (choice == MX_SPMM_COLUMNS || plan->pairs) plan->kernel = 0;
  plan->lanes_per_row = mx_spmm_lanes(D);
  plan->cols_per_pass = k < MX_SPMM_COLS_PER_PASS ? 4 : MX_SPMM_COLS_PER_PASS;
  plan->hot_mode = D->mode;
  plan->min_k = MX_SPMM_MIN_K;
  plan->cols_per_launch = D->spmm_long || D->spmm_group ? spmm_group(D, k) : 0;
  /* the smallest k >= MX_SPMM_MIN_K at which the rule takes the kernels (0: none below 2^20) */
  for (int kk = MX_SPMM_MIN_K; kk <= (1 << 20) && !plan->min_k_kernel; kk = kk < 64 ? kk + 1 : 2 * kk)
    if (spmm_rule_kernels_at(D, kk, in_use, plain)) plan->min_k_kernel = kk;
  return 0;
}

/* Columns per launch group: all k where the B columns the products touch at once (k footprints) fit
 * half the L2, else the largest power of two whose footprints do (at least 1): each group's gathers
 * then hit L2, at the price of reading the matrix once per group. A forced value (the benchmarks'
 * mx_device_spmm_set_group) wins. */
static int spmm_group(const mx_device *D, int k) {
  if (D->spmm_group > 0) return std::min(D->spmm_group, k);
  if (mx_spmm_cols_fit_l2(D, k)) return k;
  int g = 1;
  while (2 * g <= k && mx_spmm_cols_fit_l2(D, 2 * g)) g *= 2;
  return g;
}

void mx_spmm_choice_reset(mx_device *D) {
  memset(D->spmm_choice, 0, sizeof D->spmm_choice);
  memset(D->spmm_way_us, 0, sizeof D->spmm_way_us);
  D->spmm_reads_plain = 0; /* no bucket keeps a way: the next SpMM brings the plain arrays back where it needs them */
}

extern "C" int mx_device_spmm_set_way(mx_device *D, mx_spmm_way way) {
  if (!D || way < MX_SPMM_WAY_AUTO || way > MX_SPMM_WAY_PAIRS_IN_PLACE || way == MX_SPMM_WAY_HUB || (way == MX_SPMM_WAY_WHOLE && !D->spmm_whole) ||
      (way == MX_SPMM_WAY_ROWPAT && !D->rowpat) || (way == MX_SPMM_WAY_PAIRS && !mx_spmm_pairs_run(D)) ||
      (way == MX_SPMM_WAY_PAIRS_IN_PLACE && !mx_spmm_pairs_in_place_run(D)))
    return mx_fail("mx_device_spmm_set_way: bad argument");
  for (int b = 0; b < MX_SPMM_BUCKETS; ++b) D->spmm_choice[b] = (char)way; /* the enums share their values */
  D->spmm_reads_plain = spmm_plain_kept(D);
  return 0;
}

extern "C" int mx_device_spmm_set_group(mx_device *D, int cols) {
  if (!D || cols < 0) return mx_fail("mx_device_spmm_set_group: bad argument");
  D->spmm_group = cols;
  return 0;
}

/* ---- the whole matrix all cold beside a hot part ----------------------------------------------------- */

/* Wanted where D has a hot part, k's bucket will be timed (not timed yet, no forced launch group) and
 * the byte rule takes the kernels; not under a hub split (D is all cold there). */
static bool spmm_whole_wanted(const mx_device *D, int k) {
  if (D->spmm_whole || D->spmm_whole_failed || D->mode == MX_HOT_NONE || D->hot_nwork == 0 || D->hub_split || D->spmm_group > 0 ||
      k < 1 || D->spmm_choice[spmm_bucket(k)] != 0)
    return false;
  mx_spmm_plan p;
  return mx_device_spmm_plan(D, k, &p) == 0 && p.kernel;
}

/* The whole-matrix device freed; the buckets that kept it are timed again at their next product. */
static void spmm_whole_drop(mx_device *D) {
  if (!D->spmm_whole) return;
  mx_device_free(D->spmm_whole);
  D->spmm_whole = nullptr;
  for (int b = 0; b < MX_SPMM_BUCKETS; ++b)
    if (D->spmm_choice[b] == MX_SPMM_WHOLE) D->spmm_choice[b] = 0;
}

/* After a timed choice: the whole-matrix device stays only while a bucket keeps it. */
static void spmm_whole_trim(mx_device *D) {
  for (int b = 0; b < MX_SPMM_BUCKETS; ++b)
    if (D->spmm_choice[b] == MX_SPMM_WHOLE) return;
  spmm_whole_drop(D);
}

extern "C" int mx_device_spmm_whole(mx_device *D, const mx_csr *A, int k) {
  if (!D || !A) return mx_fail("mx_device_spmm_whole: NULL argument");
  if (!spmm_whole_wanted(D, k)) return 0;
  if (A->nrows != D->nrows || A->ncols != D->ncols || !A->rowptr || A->rowptr[A->nrows] != D->nnz)
    return mx_fail("mx_device_spmm_whole: the CSR (%d x %d) is not the one the device format holds (%d x %d, %d nonzeros)", A->nrows,
                   A->ncols, D->nrows, D->ncols, D->nnz);
  const mx_crux all_cold = {0.0, 0.0};
  mx_format shell;
  if (mx_device_build(A, all_cold, MX_MODE_AUTO, MX_COLD_AUTO, MX_XHOT_AUTO, &shell, &D->spmm_whole)) {
    D->spmm_whole = nullptr;
    D->spmm_whole_failed = 1;
    return 1;
  }
  mx_format_free(&shell); /* counts only: every array pointer is NULL */
  return 0;
}

/* Its cold CSR is the input in input order (an all-cold build borrows it: cold_identity), and D's
 * refresh has just put the input's values into D->val_in (D has a hot part, so it is not all cold). */
int mx_spmm_whole_refresh(mx_device *D, cudaStream_t s) {
  mx_device *W = D->spmm_whole;
  if (!W) return 0;
  if (D->cold_identity || !D->val_in || !W->cold_identity) {
    spmm_whole_drop(D);
    return 0;
  }
  return mx_cuda_check(cudaMemcpyAsync(W->cold_val, D->val_in, sizeof(double) * D->nnz, cudaMemcpyDeviceToDevice, s),
                       "SpMM: the whole matrix's new values");
}

/* Before the kernels: D's plain cold arrays back where a pack released them (they stay while a
 * bucket keeps a way that reads them: spmm_plain_kept; a release frees nothing meanwhile), the long
 * rows and the footprint measured once. The kernels: per group of columns, cold rows, long rows'
 * pieces, hot. */
static int spmm_prepare(mx_device *D) {
  if (D->pack_released && mx_pack_restore_plain(D, true)) return 1;
  D->spmm_reads_plain = 1;
  D->spmm_kernels_ran = 1;
  return mx_spmm_long_prepare(D);
}

/* ---- the ways ------------------------------------------------------------------------------------ */

/* The cold part on B in place (MX_SPMM_KERNELS, per launch group) or on row-major panels
 * (MX_SPMM_PANELS or _PADDED, all k); the hot part per launch group, except an SE one on the panels. */
static int spmm_kernels(mx_device *D, int way, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (way == MX_SPMM_PANELS || way == MX_SPMM_PADDED) {
    if (mx_spmm_panels(D, k, way == MX_SPMM_PADDED, B, ldb, C, ldc, s)) return 1;
    if (D->mode != MX_HOT_DU) return 0; /* no hot part, or an SE one the panels ran */
  }
  const int g = spmm_group(D, k);
  for (int j0 = 0; j0 < k; j0 += g) {
    const int kb = std::min(g, k - j0);
    const double *Bg = B + (long long)j0 * ldb;
    double *Cg = C + (long long)j0 * ldc;
    if ((way == MX_SPMM_KERNELS && mx_spmm_cold_launch(D, kb, Bg, ldb, Cg, ldc, s)) || mx_spmm_hot_launch(D, kb, Bg, ldb, Cg, ldc, s)) return 1;
  }
  return 0;
}

static int spmm_per_column(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  for (int j = 0; j < k; ++j)
    if (mx_device_spmv(D, B + (long long)j * ldb, nullptr, C + (long long)j * ldc, s)) return 1;
  return 0;
}

/* whether the panels-and-SpMVs way differs from the others: k > 8 columns, not a multiple of 8 */
static bool spmm_rest_differs(int k) { return k > 8 && k % 8 != 0; }

/* The panels (and a hot part) on the columns up to the last multiple of 8, then one SpMV per column
 * left (MX_SPMM_PANELS_SPMV). */
static int spmm_panels_spmv(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  const int k8 = k - k % 8;
  if (k8 > 0 && spmm_kernels(D, MX_SPMM_PANELS, k8, B, ldb, C, ldc, s)) return 1;
  return spmm_per_column(D, k - k8, B + (long long)k8 * ldb, ldb, C + (long long)k8 * ldc, ldc, s);
}

/* The pairs where D's cold kernel has them (mx_spmm_pairs_run): offered where the byte rule sends the
 * product to the SpMVs (a pack: pairs read it once for two columns), and beside the kernels below
 * MX_SPMM_PAIRS_MAX_K columns (mx_tuning.h). */
static bool spmm_pairs_offered(const mx_device *D, int k, bool kernels) {
  return k >= 2 && (!kernels || k < MX_SPMM_PAIRS_MAX_K) && mx_spmm_pairs_run(D);
}

/* C += D's hot part times k columns of B in place, per launch group (nothing without a hot part) */
static int spmm_hot_in_place(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (D->mode == MX_HOT_NONE || D->hot_nwork == 0) return 0;
  const int g = spmm_group(D, k);
  for (int j0 = 0; j0 < k; j0 += g)
    if (mx_spmm_hot_launch(D, std::min(g, k - j0), B + (long long)j0 * ldb, ldb, C + (long long)j0 * ldc, ldc, s)) return 1;
  return 0;
}

/* The columns two at a time (C =: the cold part, each column bitwise the cold SpMV's, and an SE hot
 * part +=), an odd last one by the SpMV, then a DU hot part on B in place (+=) for the paired
 * columns, per launch group (MX_SPMM_PAIRS; in_place: MX_SPMM_PAIRS_IN_PLACE, no SE hot part). */
static int spmm_pairs(mx_device *D, bool in_place, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  const int k2 = k - k % 2;
  if (in_place ? mx_spmm_pair_product_in_place(D, k2, B, ldb, C, ldc, s) : mx_spmm_pair_product(D, k2, B, ldb, C, ldc, s)) return 1;
  if (!mx_spmm_pairs_hot(D) && spmm_hot_in_place(D, k2, B, ldb, C, ldc, s)) return 1;
  return spmm_per_column(D, k - k2, B + (long long)k2 * ldb, ldb, C + (long long)k2 * ldc, ldc, s);
}

/* The cold part in row-pattern form for all k columns (C =), then a hot part on B in place (+=), per
 * launch group. */
static int spmm_rowpat(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (mx_cold_rowpat_spmm_launch(D, k, B, ldb, C, ldc, s)) return 1;
  return spmm_hot_in_place(D, k, B, ldb, C, ldc, s);
}

static int spmm_way(mx_device *D, int way, int k, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  if (way == MX_SPMM_HUB) return mx_device_hub_spmm(D, k, B, ldb, C, ldc, s);
  if (way == MX_SPMM_ROWPAT) return spmm_rowpat(D, k, B, ldb, C, ldc, s);
  if (way == MX_SPMM_WHOLE) return mx_device_spmm(D->spmm_whole, k, B, ldb, C, ldc, s); /* its own timed choice */
  if (way == MX_SPMM_PANELS_SPMV) return spmm_panels_spmv(D, k, B, ldb, C, ldc, s);
  if (way == MX_SPMM_PAIRS || way == MX_SPMM_PAIRS_IN_PLACE) return spmm_pairs(D, way == MX_SPMM_PAIRS_IN_PLACE, k, B, ldb, C, ldc, s);
  return way == MX_SPMM_COLUMNS ? spmm_per_column(D, k, B, ldb, C, ldc, s) : spmm_kernels(D, way, k, B, ldb, C, ldc, s);
}

/* whether a way reads D's plain cold arrays (our kernels on B in place or on panels) */
static bool spmm_way_reads_plain(int way) {
  return way == MX_SPMM_KERNELS || way == MX_SPMM_PANELS || way == MX_SPMM_PADDED || way == MX_SPMM_PANELS_SPMV;
}

/* whether a bucket keeps a way that reads D's plain cold arrays: while none does, a pack release may
 * free them again (the SpMVs, the row patterns, the split and the whole matrix do not read them) */
static bool spmm_plain_kept(const mx_device *D) {
  for (int b = 0; b < MX_SPMM_BUCKETS; ++b)
    if (spmm_way_reads_plain(D->spmm_choice[b])) return true;
  return false;
}

/* A way's entry in mx_device::spmm_way_us and mx_spmm_plan::way_us */
static int spmm_way_slot(int way) {
  return way == MX_SPMM_KERNELS ? 0
         : way == MX_SPMM_PANELS ? 1
         : way == MX_SPMM_COLUMNS ? 2
         : way == MX_SPMM_HUB ? 3
         : way == MX_SPMM_WHOLE ? 4
         : way == MX_SPMM_ROWPAT ? 5
         : way == MX_SPMM_PADDED ? 6
         : way == MX_SPMM_PANELS_SPMV ? 7
         : way == MX_SPMM_PAIRS ? 8
                                : 9;
}

/* A bucket's kept way can still run: a value refresh or a cold-kernel switch may have dropped the
 * row patterns, a refresh the whole-matrix device; such a bucket is timed again. */
static bool spmm_choice_runs(const mx_device *D, int way) {
  return (way != MX_SPMM_ROWPAT || D->rowpat) && (way != MX_SPMM_WHOLE || D->spmm_whole) && (way != MX_SPMM_HUB || D->hub_split) &&
         (way != MX_SPMM_PAIRS || mx_spmm_pairs_run(D)) && (way != MX_SPMM_PAIRS_IN_PLACE || mx_spmm_pairs_in_place_run(D));
}

/* One round of the timed choice: each of the nways ways `reps` times back to back, between events
 * ev[w] and ev[w + 1] on stream s; t[w] = ms per product. */
static int spmm_time_ways(mx_device *D, const int *ways, int nways, int reps, int k, const double *B, long long ldb, double *C, long long ldc,
                          cudaStream_t s, cudaEvent_t *ev, float *t) {
  int rc = mx_cuda_check(cudaEventRecord(ev[0], s), "SpMM: cudaEventRecord");
  for (int w = 0; w < nways && !rc; ++w) {
    for (int r = 0; r < reps && !rc; ++r) rc = spmm_way(D, ways[w], k, B, ldb, C, ldc, s);
    if (!rc) rc = mx_cuda_check(cudaEventRecord(ev[w + 1], s), "SpMM: cudaEventRecord");
  }
  if (!rc) rc = mx_cuda_check(cudaEventSynchronize(ev[nways]), "SpMM: cudaEventSynchronize");
  for (int w = 0; w < nways && !rc; ++w) {
    rc = mx_cuda_check(cudaEventElapsedTime(&t[w], ev[w], ev[w + 1]), "SpMM: cudaEventElapsedTime");
    t[w] /= (float)reps;
  }
  return rc;
}

/* The first product of a bucket where the byte rule takes the kernels (kernels): our kernels on B in
 * place, on row-major panels, k SpMVs, under a hub split the split's way (its rest and hub part),
 * where D holds row patterns their way, beside a hot part the whole matrix all cold
 * (mx_device_spmm_whole, where it was built), where they split k columns otherwise the padded panels,
 * where k > 8 is not a multiple of 8 the panels with one SpMV per column left, and where offered the
 * pairs (and beside them the pairs in place, where the segment kernel can read B so); where the byte
 * rule takes the SpMVs (not kernels) the pairs against the SpMVs alone (neither reads the plain
 * arrays). Each timed
 * between CUDA events on the stream (where that round took less than MX_SPMM_TIMED_SHORT_US, again
 * over MX_SPMM_TIMED_REPEATS back-to-back products each, which decide), the fastest kept for the
 * bucket; the kept way runs last, so that C holds its bits (later products repeat them). Each way
 * runs once untimed first: a kernel's first launch in a process loads its module (CUDA's lazy
 * loading), which must not count (docs/performance.md, "Many vectors"); the whole-matrix device
 * makes its own timed choice in that run. */
static int spmm_timed_choice(mx_device *D, int k, bool kernels, const double *B, long long ldb, double *C, long long ldc, cudaStream_t s) {
  int ways[MX_SPMM_NWAYS], nways = 0;
  if (kernels) {
    ways[nways++] = MX_SPMM_KERNELS;
    ways[nways++] = MX_SPMM_PANELS;
  }
  ways[nways++] = MX_SPMM_COLUMNS;
  if (kernels && D->hub_split) ways[nways++] = MX_SPMM_HUB;
  if (kernels && D->spmm_whole) ways[nways++] = MX_SPMM_WHOLE;
  if (kernels && D->rowpat) ways[nways++] = MX_SPMM_ROWPAT;
  if (kernels && mx_spmm_padding_differs(k)) ways[nways++] = MX_SPMM_PADDED;
  if (kernels && spmm_rest_differs(k)) ways[nways++] = MX_SPMM_PANELS_SPMV;
  if (spmm_pairs_offered(D, k, kernels)) {
    ways[nways++] = MX_SPMM_PAIRS;
    if (mx_spmm_pairs_in_place_run(D)) ways[nways++] = MX_SPMM_PAIRS_IN_PLACE;
  }
  cudaEvent_t ev[MX_SPMM_NWAYS + 1] = {};
  float t[MX_SPMM_NWAYS] = {};
  int rc = 0, made = 0;
  for (int w = 0; w < nways && !rc; ++w) rc = spmm_way(D, ways[w], k, B, ldb, C, ldc, s);
  for (; made <= nways && !rc; ++made) rc = mx_cuda_check(cudaEventCreate(&ev[made]), "SpMM: cudaEventCreate");
  if (!rc) rc = spmm_time_ways(D, ways, nways, 1, k, B, ldb, C, ldc, s, ev, t);
  float round_ms = 0.0f;
  for (int w = 0; w < nways; ++w) round_ms += t[w];
  if (!rc && 1e3f * round_ms < MX_SPMM_TIMED_SHORT_US) rc = spmm_time_ways(D, ways, nways, MX_SPMM_TIMED_REPEATS, k, B, ldb, C, ldc, s, ev, t);
  for (int i = 0; i < made; ++i) cudaEventDestroy(ev[i]);
  if (rc) return 1;
  int best = 0;
  for (int w = 0; w < nways; ++w) {
    D->spmm_way_us[spmm_bucket(k)][spmm_way_slot(ways[w])] = 1e3f * t[w];
    if (t[w] < t[best]) best = w;
  }
  D->spmm_choice[spmm_bucket(k)] = (char)ways[best];
  if (best != nways - 1 && spmm_way(D, ways[best], k, B, ldb, C, ldc, s)) return 1;
  spmm_whole_trim(D); /* its products finished: the event above waited for them */
  D->spmm_reads_plain = spmm_plain_kept(D);
  return 0;
}

extern "C" int mx_device_spmm(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  if (!D) return mx_fail("mx_device_spmm: device format is NULL");
  if (k < 0) return mx_fail("mx_device_spmm: %d columns", k);
  if (k == 0 || D->nrows == 0) return 0;
  if (!C) return mx_fail("mx_device_spmm: C is NULL");
  if (!B && D->ncols > 0) return mx_fail("mx_device_spmm: B is NULL");
  if (ldb < D->ncols || ldc < D->nrows)
    return mx_fail("mx_device_spmm: leading dimensions %lld, %lld below the rows of B (%d) or C (%d)", ldb, ldc, D->ncols, D->nrows);
  cudaStream_t s = (cudaStream_t)stream;
  if (spmm_split_alone(D, k)) return mx_device_hub_spmm(D, k, B, ldb, C, ldc, s);
  mx_spmm_plan plan;
  if (mx_device_spmm_plan(D, k, &plan)) return 1;
  const int choice = D->spmm_choice[spmm_bucket(k)];
  const bool kept = plan.timed && D->spmm_group == 0 && spmm_choice_runs(D, choice);
  if (!spmm_rule_kernels(D, k)) { /* the byte rule takes the SpMVs: the pairs against them alone, where offered */
    if (!spmm_pairs_offered(D, k, false) || (choice != 0 && choice != MX_SPMM_PAIRS && choice != MX_SPMM_PAIRS_IN_PLACE && choice != MX_SPMM_COLUMNS))
      return spmm_per_column(D, k, B, ldb, C, ldc, s); /* a forced kernel way too: the rule wins */
    return kept ? spmm_way(D, choice, k, B, ldb, C, ldc, s) : spmm_timed_choice(D, k, false, B, ldb, C, ldc, s);
  }
  if (kept && !spmm_way_reads_plain(choice)) return spmm_way(D, choice, k, B, ldb, C, ldc, s); /* no plain arrays back for it */
  if (spmm_prepare(D)) return 1;
  if (D->spmm_group > 0) return spmm_kernels(D, MX_SPMM_KERNELS, k, B, ldb, C, ldc, s);
  if (kept) return spmm_way(D, choice, k, B, ldb, C, ldc, s);
  return spmm_timed_choice(D, k, true, B, ldb, C, ldc, s);
}

/* Host B and C through device copies made for the call (synchronous). */
extern "C" int mx_device_spmm_host(mx_device *D, int k, const double *B, long long ldb, double *C, long long ldc, void *stream) {
  if (!D) return mx_fail("mx_device_spmm_host: device format is NULL");
  if (k <= 0 || D->nrows == 0) return k < 0 ? mx_fail("mx_device_spmm_host: %d columns", k) : 0;
  if (!C || (!B && D->ncols > 0)) return mx_fail("mx_device_spmm_host: B or C is NULL");
  if (ldb < D->ncols || ldc < D->nrows) return mx_fail("mx_device_spmm_host: leading dimensions below the rows of B or C");
  cudaStream_t s = (cudaStream_t)stream;
  const size_t m = (size_t)D->nrows, n = (size_t)D->ncols;
  double *dB = nullptr, *dC = nullptr;
  if ((n && mx_cuda_alloc((void **)&dB, sizeof(double) * n * k, "SpMM: device copy of B")) ||
      mx_cuda_alloc((void **)&dC, sizeof(double) * m * k, "SpMM: device copy of C")) {
    if (dB) cudaFree(dB);
    return 1;
  }
  int rc = 0;
  if (n) rc = mx_cuda_check(cudaMemcpy2DAsync(dB, n * sizeof(double), B, (size_t)ldb * sizeof(double), n * sizeof(double), (size_t)k,
                                              cudaMemcpyHostToDevice, s), "SpMM: copying B to the device");
  if (!rc) rc = mx_device_spmm(D, k, dB, n ? (long long)n : 1, dC, (long long)m, stream);
  if (!rc) rc = mx_cuda_check(cudaMemcpy2DAsync(C, (size_t)ldc * sizeof(double), dC, m * sizeof(double), m * sizeof(double), (size_t)k,
                                                cudaMemcpyDeviceToHost, s), "SpMM: copying C to the host");
  if (!rc) rc = mx_cuda_check(cudaStreamSynchronize(s), "SpMM: waiting for the product");
  if (dB) cudaFree(dB);
  cudaFree(dC);
  return rc;
}

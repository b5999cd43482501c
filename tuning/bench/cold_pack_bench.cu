/* cold_pack_bench - the packed cold CSR (issue 13) on the GPU: the segment cold kernel on the plain
 * CSR vs on its packed form (mx_device_compress, AUTO) vs cusparseSpMV CSR ALG1 and ALG2, at crux
 * (0,0) (the whole matrix is cold), per ../shared/docs/BENCHMARKING.md: every variant checked against
 * a CPU double reference first (relative 2-norm error < 1e-12), the packed y compared bit for bit
 * with the plain segment kernel's, then warm-up calls and the median (min, max) of the timed calls,
 * each between CUDA events on one stream; x/y rotated over 8 copies when the matrix is under 2x L2;
 * effective bandwidth as a fraction of the measured device-to-device copy bandwidth.
 *
 * Usage: cold-pack-bench [-o OUTDIR] [-warmup N] [-reps N] [SPEC[@VALUES][~ORDER][%degcols|%hubK|%nohubK] ...]
 *   SPEC    a generator spec (mx_gen, e.g. lap3d:100, kron:20:16)
 *   VALUES  as (the generator's, default), ones (unweighted), pagerank (a_ij = 1/(entries of
 *           column j): the transition matrix of PageRank, column-constant), unique (uniform in
 *           [-1,1), FEM-like: nothing to share), few (one of 5 integers)
 *   %degcols  relabel the columns by descending column count (an experiment: what a column
 *           permutation inside the library would give; the per-product permutation of x not timed)
 *   %hubK / %nohubK  only the nonzeros in the K most used columns (relabelled to [0, K) by rank) /
 *           only the others (an experiment: the two passes of a hub-split product, each alone)
 * Without specs: the default list below. Writes OUTDIR/cold_pack.csv, cold_pack.md, env.txt.
 * COLD_PACK_VARIANTS="1 2" also times those packed kernel variants (mx_cold_pack_set_variant, listed
 * in src/cuda/mx_cold_pack_dev.h, e.g. "6 7" the strided and the vectorized staging everywhere; the
 * table keeps variant 0) and prints each with its bitwise check against the plain kernel.
 * COLD_PACK_ROWS_AB=1 also times the pack with 16-bit row offsets (request {auto, auto, off16}) and
 * prints it against the AUTO pack (plain row pointers) with the bitwise check.
 * The AUTO request takes the row-pattern form (src/core/mx_cold_rowpat.h) where it holds the matrix in
 * fewer bytes than any pack (stencils): the table then shows "rowpat/<patterns>pat/id8" as its
 * encodings. COLD_PACK_FORM_AB=1 also times the pack AUTO takes without row patterns (form pack) and
 * prints it against the row-pattern form with the bitwise check.
 * COLD_PACK_SE=1 also times the whole format at cruxes (1,1) and (0.9,0.8) in SE hot mode (x-hot
 * by its rule) with plain SE values vs packed ones (one value, or column constants) against the best
 * cuSPARSE time, with the bitwise check.
 * COLD_PACK_MERGE=1 also times the merge cold kernel plain vs on the pack (it reads the pack by default;
 * mx_cold_pack_set_merge is the A/B switch) and prints both with the bitwise check;
 * COLD_PACK_XHOT="N ..." then times the plain merge kernel with the x-hot cache of the N most used
 * columns, the cold CSR coded (no pack: the cache's codes and the pack exclude each other), bitwise
 * against the plain merge kernel without it.
 * Exit 1 if any variant was wrong (error or not bitwise equal). */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>
#include "cuda_check.h"
#include "../common/rel_err.h"
#include "../common/event_timing.cuh"
#include "../common/csr32.h"
#include "../common/cusparse_check.h"

/* the packed segment kernel's variant switch (src/cuda/mx_cold_pack_dev.h) */
extern "C" int mx_cold_pack_set_variant(int v);
extern "C" int mx_cold_pack_set_merge(int on);

extern "C" {
#include "core/mx_cold_pack.h"
#include "core/mx_format.h"
#include "cuda/mx_device.h"
#include "io/mx_io.h"
}


static const char *default_specs[] = {"lap2d:2000",         "lap3d:150",          "lap3d27:100",  "lap3d:100@unique",
                                      "rgg:20@ones",        "rgg:20@unique",      "kron:20:16@ones", "kron:20:16@pagerank",
                                      "band:2000000:5",     "rand:1000000:8@few"};

static cudaStream_t g_stream;

static Timing time_calls(const std::function<void(int)> &f, int warmup, int reps) { return mx_time_calls(g_stream, f, warmup, reps); }
static double copy_bandwidth() { return mx_copy_bandwidth(g_stream); }

/* ---- matrices -------------------------------------------------------------------------------------- */

struct Csr {
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  int32_t nnz() const { return rowptr[nrows]; }
};

/* Relabel the columns of A by descending column count (ties by column): col(p) = rank(col(p)), the
 * nonzeros keep their order. The experiment of a column permutation done inside the library (x
 * permuted once per product): heavy columns' x values then share sectors and cache lines. */
static void relabel_columns_by_degree(Csr *A) {
  std::vector<int32_t> cnt((size_t)A->ncols, 0), order((size_t)A->ncols), rank((size_t)A->ncols);
  for (int32_t c : A->col) cnt[c]++;
  for (int32_t j = 0; j < A->ncols; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return cnt[a] > cnt[b]; });
  for (int32_t r = 0; r < A->ncols; ++r) rank[order[r]] = r;
  for (int32_t &c : A->col) c = rank[c];
}

/* Split by the K most used columns (ties by column): keep_hubs keeps only their nonzeros, relabelled
 * to [0, K) by rank (their x values in one K*8-byte window); otherwise only the other nonzeros, columns
 * unchanged. The experiment of a two-pass product (hub columns from a small window, the rest as now):
 * what each pass costs alone. */
static void split_by_hub_columns(Csr *A, int32_t K, bool keep_hubs) {
  std::vector<int32_t> cnt((size_t)A->ncols, 0), order((size_t)A->ncols), rank((size_t)A->ncols);
  for (int32_t c : A->col) cnt[c]++;
  for (int32_t j = 0; j < A->ncols; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return cnt[a] > cnt[b]; });
  for (int32_t r = 0; r < A->ncols; ++r) rank[order[r]] = r;
  std::vector<int32_t> rowptr((size_t)A->nrows + 1, 0), col;
  std::vector<double> val;
  for (int32_t i = 0; i < A->nrows; ++i) {
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; ++p) {
      const bool hub = rank[A->col[p]] < K;
      if (hub != keep_hubs) continue;
      col.push_back(keep_hubs ? rank[A->col[p]] : A->col[p]);
      val.push_back(A->val[p]);
    }
    if (keep_hubs) { /* ranks are not in column order: sort the row's (column, value) pairs */
      std::vector<std::pair<int32_t, double>> row;
      for (size_t q = (size_t)rowptr[i]; q < col.size(); ++q) row.emplace_back(col[q], val[q]);
      std::sort(row.begin(), row.end());
      for (size_t q = 0; q < row.size(); ++q) col[rowptr[i] + q] = row[q].first, val[rowptr[i] + q] = row[q].second;
    }
    rowptr[i + 1] = (int32_t)col.size();
  }
  A->rowptr.swap(rowptr);
  A->col.swap(col);
  A->val.swap(val);
}

/* SPEC[@VALUES][~ORDER][%degcols] -> A; false (and a message) when it cannot be made */
static bool make_matrix(const std::string &item_in, Csr *A, std::string *values) {
  const size_t pct = item_in.find('%');
  const std::string item = item_in.substr(0, pct);
  const std::string suffix = pct == std::string::npos ? "" : item_in.substr(pct + 1);
  const bool degcols = suffix == "degcols";
  int32_t hubs = 0;
  bool keep_hubs = false;
  if (suffix.rfind("nohub", 0) == 0) hubs = atoi(suffix.c_str() + 5);
  else if (suffix.rfind("hub", 0) == 0) hubs = atoi(suffix.c_str() + 3), keep_hubs = true;
  if (pct != std::string::npos && !degcols && hubs <= 0) {
    fprintf(stderr, "skip %s: unknown suffix (%%degcols, %%hubK, %%nohubK)\n", item_in.c_str());
    return false;
  }
  const size_t tilde = item.find('~'); /* SPEC[@VALUES][~ORDER]: the generator relabels, then the values */
  const std::string named = item.substr(0, tilde);
  const size_t at = named.find('@');
  const std::string spec = named.substr(0, at) + (tilde == std::string::npos ? "" : item.substr(tilde));
  *values = at == std::string::npos ? "as" : named.substr(at + 1);
  if (!mx_csr32_gen(spec.c_str(), A, item.c_str())) return false;
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<int32_t> cnt;
  if (*values == "pagerank") {
    cnt.assign((size_t)A->ncols + 1, 0);
    for (int32_t c : A->col) cnt[c]++;
  }
  for (size_t p = 0; p < A->val.size(); ++p) {
    if (*values == "ones") A->val[p] = 1.0;
    else if (*values == "pagerank") A->val[p] = 1.0 / cnt[A->col[p]];
    else if (*values == "unique") A->val[p] = u(rng);
    else if (*values == "few") A->val[p] = (double)(rng() % 5) - 2.0;
    else if (*values != "as") {
      fprintf(stderr, "skip %s: unknown values '%s' (as, ones, pagerank, unique, few)\n", item.c_str(), values->c_str());
      return false;
    }
  }
  if (degcols) relabel_columns_by_degree(A);
  if (hubs > 0) split_by_hub_columns(A, hubs, keep_hubs);
  return true;
}

/* ---- one matrix ------------------------------------------------------------------------------------ */

struct Row {
  std::string item, values, val_enc, idx_enc, row_enc;
  int32_t nrows, ncols, nnz, ncopy;
  double bpn_plain, bpn_packed, compress_ms, err_plain, err_packed, err_alg1, err_alg2;
  bool bitwise;
  Timing plain, packed, alg1, alg2;
};

static double bytes_to_bw(double matrix_bytes, const Csr &A, double us) {
  return (matrix_bytes + 8.0 * A.nrows + 8.0 * A.ncols) / (us * 1e-6);
}

/* cusparseSpMV CSR with algorithm alg on device copies of A, after preprocess; y of copy 0 into *y0 */
static Timing time_cusparse(const Csr &A, cusparseSpMVAlg_t alg, const std::vector<double *> &dx, const std::vector<double *> &dy,
                            int warmup, int reps, std::vector<double> *y0) {
  int32_t *rp, *ci;
  double *v;
  const size_t nz = (size_t)A.nnz();
  CK(cudaMalloc(&rp, sizeof(int32_t) * (A.nrows + 1)));
  CK(cudaMalloc(&ci, sizeof(int32_t) * (nz ? nz : 1)));
  CK(cudaMalloc(&v, sizeof(double) * (nz ? nz : 1)));
  CK(cudaMemcpy(rp, A.rowptr.data(), sizeof(int32_t) * (A.nrows + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ci, A.col.data(), sizeof(int32_t) * nz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(v, A.val.data(), sizeof(double) * nz, cudaMemcpyHostToDevice));
  cusparseHandle_t h;
  SP(cusparseCreate(&h));
  SP(cusparseSetStream(h, g_stream));
  cusparseSpMatDescr_t mA;
  SP(cusparseCreateCsr(&mA, A.nrows, A.ncols, (int64_t)nz, rp, ci, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  const int nc = (int)dx.size();
  std::vector<cusparseDnVecDescr_t> vx(nc), vy(nc);
  for (int c = 0; c < nc; ++c) {
    SP(cusparseCreateDnVec(&vx[c], A.ncols, dx[c], CUDA_R_64F));
    SP(cusparseCreateDnVec(&vy[c], A.nrows, dy[c], CUDA_R_64F));
  }
  const double alpha = 1.0, beta = 0.0;
  size_t bytes = 0;
  void *buf;
  SP(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F, alg, &bytes));
  CK(cudaMalloc(&buf, bytes ? bytes : 1));
  SP(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F, alg, buf));
  SP(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F, alg, buf));
  CK(cudaStreamSynchronize(g_stream));
  y0->resize(A.nrows);
  CK(cudaMemcpy(y0->data(), dy[0], sizeof(double) * A.nrows, cudaMemcpyDeviceToHost));
  const Timing t = time_calls(
      [&](int i) {
        SP(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[i % nc], &beta, vy[i % nc], CUDA_R_64F, alg, buf));
      },
      warmup, reps);
  for (int c = 0; c < nc; ++c) {
    cusparseDestroyDnVec(vx[c]);
    cusparseDestroyDnVec(vy[c]);
  }
  cusparseDestroySpMat(mA);
  cusparseDestroy(h);
  CK(cudaFree(buf));
  CK(cudaFree(rp));
  CK(cudaFree(ci));
  CK(cudaFree(v));
  return t;
}

/* our SpMV of D on copy 0 (y into *y0), then timed over the copies */
static Timing time_ours(mx_device *D, const Csr &A, const std::vector<double *> &dx, const std::vector<double *> &dy, int warmup,
                        int reps, std::vector<double> *y0) {
  if (mx_device_spmv(D, dx[0], nullptr, dy[0], g_stream)) {
    fprintf(stderr, "mx_device_spmv: %s\n", mx_device_last_error());
    exit(2);
  }
  CK(cudaStreamSynchronize(g_stream));
  y0->resize(A.nrows);
  CK(cudaMemcpy(y0->data(), dy[0], sizeof(double) * A.nrows, cudaMemcpyDeviceToHost));
  const int nc = (int)dx.size();
  return time_calls([&](int i) { mx_device_spmv(D, dx[i % nc], nullptr, dy[i % nc], g_stream); }, warmup, reps);
}

/* The merge cold kernel on F plain and on its pack (the switch on), printed; false if the
 * packed y is not the plain merge kernel's bit for bit (or a step failed). */
static bool time_merge(const std::string &item, const mx_format &F, const Csr &A, const mx_pack_request &rq,
                       const std::vector<double *> &dx, const std::vector<double *> &dy, int warmup, int reps,
                       std::vector<double> &y_plain) {
  mx_device *D = nullptr;
  std::vector<double> y;
  if (mx_device_upload_xhot(&F, MX_COLD_MERGE, 0, &D) || mx_device_cold_kernel(D) != MX_COLD_MERGE) {
    fprintf(stderr, "%s: merge upload: %s\n", item.c_str(), mx_device_last_error());
    mx_device_free(D);
    return false;
  }
  const Timing plain = time_ours(D, A, dx, dy, warmup, reps, &y_plain);
  bool ok = mx_device_compress(D, &rq) == 0;
  const int old = mx_cold_pack_set_merge(1);
  const Timing packed = ok ? time_ours(D, A, dx, dy, warmup, reps, &y) : Timing();
  mx_cold_pack_set_merge(old);
  ok = ok && y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
  printf("  %-22s merge: plain %9.1f us  packed %9.1f us  x%.3f  %s\n", item.c_str(), plain.med, packed.med,
         packed.med > 0 ? plain.med / packed.med : 0.0, ok ? "bitwise" : "NOT BITWISE (or failed)");
  mx_device_free(D);
  return ok;
}

/* The plain merge kernel on F with the x-hot cache of the ncols most used columns (the cold CSR
 * coded), printed; false if its y is not y_plain (the merge kernel without the cache) bit for bit. */
static bool time_merge_xhot(const std::string &item, const mx_format &F, const Csr &A, int ncols, const std::vector<double *> &dx,
                            const std::vector<double *> &dy, int warmup, int reps, const std::vector<double> &y_plain) {
  mx_device *D = nullptr;
  std::vector<double> y;
  if (mx_device_upload_xhot(&F, MX_COLD_MERGE, ncols, &D) || mx_device_cold_kernel(D) != MX_COLD_MERGE) {
    fprintf(stderr, "%s: merge upload with x-hot %d: %s\n", item.c_str(), ncols, mx_device_last_error());
    mx_device_free(D);
    return false;
  }
  const Timing t = time_ours(D, A, dx, dy, warmup, reps, &y);
  const bool ok = y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
  printf("  %-22s merge x-hot %6d cols (%d cached): %9.1f us (min %.1f)  %s\n", item.c_str(), ncols, mx_device_xhot_cols(D), t.med, t.mn,
         ok ? "bitwise" : "NOT BITWISE (or failed)");
  mx_device_free(D);
  return ok;
}

/* COLD_PACK_SE=1: the whole matrix at cruxes with an SE hot region ((1,1), (0.9,0.8); x-hot by its
 * rule, segment cold kernel) with plain SE values vs after mx_device_compress (AUTO: the hot values
 * as one value or column constants, the cold region packed), against the best cuSPARSE time
 * best_us; bitwise and CPU checks. false if any was wrong. */
static bool time_se(const std::string &item, const Csr &A, const std::vector<double> &ref, const std::vector<double *> &dx,
                    const std::vector<double *> &dy, int warmup, int reps, double best_us) {
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  bool ok = true;
  for (const mx_crux c : {mx_crux{1, 1}, mx_crux{0.9, 0.8}}) {
    mx_format F;
    mx_device *D = nullptr;
    if (mx_format_build_borrow(&a, c, MX_MODE_SE, &F) != MX_OK || mx_device_upload(&F, MX_COLD_SEGMENT, &D)) {
      printf("  %-22s SE crux(%g,%g): build/upload failed (%s)\n", item.c_str(), c.tau_c, c.tau_r, mx_device_last_error());
      mx_format_free(&F);
      ok = false;
      continue;
    }
    std::vector<double> y_plain, y;
    const Timing plain = time_ours(D, A, dx, dy, warmup, reps, &y_plain);
    const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
    mx_device_pack_info info;
    if (mx_device_compress(D, &rq) || mx_device_compress_info(D, &info)) {
      printf("  %-22s SE crux(%g,%g): compress failed (%s)\n", item.c_str(), c.tau_c, c.tau_r, mx_device_last_error());
      ok = false;
    } else {
      const Timing packed = time_ours(D, A, dx, dy, warmup, reps, &y);
      const bool bw = y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
      const double err = mx_rel_err(y, ref);
      ok = ok && bw && err < 1e-12;
      printf("  %-22s SE crux(%g,%g) hot %.0f%% xhot %d: plain %9.1f us  hot values %-8s %9.1f us (x%.3f)  cold %s  best cuSPARSE %9.1f us: "
             "x%.2f  %s\n",
             item.c_str(), c.tau_c, c.tau_r, 100.0 * F.hot_nnz / std::max(1, F.nnz), mx_device_xhot_cols(D), plain.med,
             mx_val_enc_name(info.hot_val_enc), packed.med, plain.med / packed.med,
             info.rowpat ? "rowpat" : info.packed ? mx_val_enc_name(info.val_enc) : "plain", best_us, best_us / packed.med,
             bw && err < 1e-12 ? "bitwise" : "NOT BITWISE OR WRONG");
    }
    mx_device_free(D);
    mx_format_free(&F);
  }
  return ok;
}

static bool run_one(const std::string &item, size_t l2, int warmup, int reps, Row *r) {
  Csr A;
  if (!make_matrix(item, &A, &r->values)) return false;
  r->item = item;
  r->nrows = A.nrows, r->ncols = A.ncols, r->nnz = A.nnz();
  const mx_csr a = {A.nrows, A.ncols, A.rowptr.data(), A.col.data(), A.val.data()};
  mx_format F;
  mx_device *D = nullptr;
  if (mx_format_build_borrow(&a, mx_crux{0, 0}, MX_MODE_AUTO, &F) != MX_OK || mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 0, &D)) {
    fprintf(stderr, "skip %s: build/upload: %s\n", item.c_str(), mx_device_last_error());
    return false;
  }
  /* x, y copies: 8 when the matrix fits in 2x L2 (then every call reads other x/y lines) */
  const double csr_bytes = (double)mx_csr_bytes(A.nrows, A.nnz());
  const int nc = csr_bytes < 2.0 * (double)l2 ? 8 : 1;
  r->ncopy = nc;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(A.ncols), ref(A.nrows), y;
  for (double &e : x) e = u(rng);
  mx_spmv(&F, x.data(), ref.data()); /* the CPU kernel: a plain CSR product in row order */
  std::vector<double *> dx(nc), dy(nc);
  for (int c = 0; c < nc; ++c) {
    CK(cudaMalloc(&dx[c], sizeof(double) * (A.ncols ? A.ncols : 1)));
    CK(cudaMalloc(&dy[c], sizeof(double) * (A.nrows ? A.nrows : 1)));
    CK(cudaMemcpy(dx[c], x.data(), sizeof(double) * A.ncols, cudaMemcpyHostToDevice));
  }
  r->plain = time_ours(D, A, dx, dy, warmup, reps, &y);
  r->err_plain = mx_rel_err(y, ref);
  const std::vector<double> y_plain = y;
  /* compress (AUTO), timed on the host: the device work is synchronous */
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  const auto t0 = std::chrono::steady_clock::now();
  if (mx_device_compress(D, &rq)) {
    fprintf(stderr, "skip %s: compress: %s\n", item.c_str(), mx_device_last_error());
    return false;
  }
  r->compress_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  mx_device_pack_info info;
  mx_device_compress_info(D, &info);
  r->val_enc = info.rowpat ? "rowpat" : mx_val_enc_name(info.val_enc); /* the row-pattern form: its patterns, id width */
  r->idx_enc = info.rowpat ? std::to_string(info.npat) + "pat" : mx_idx_enc_name(info.idx_enc);
  r->row_enc = info.rowpat ? (info.id_bytes == 1 ? "id8" : "id16") : mx_row_enc_name(info.row_enc);
  r->bpn_plain = (double)info.plain_bytes / std::max(1, A.nnz());
  r->bpn_packed = (double)info.bytes / std::max(1, A.nnz());
  r->packed = time_ours(D, A, dx, dy, warmup, reps, &y);
  r->err_packed = mx_rel_err(y, ref);
  r->bitwise = y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
  if (const char *vs = getenv("COLD_PACK_VARIANTS")) {
    char *end = nullptr;
    for (long v = strtol(vs, &end, 10); end != vs; vs = end, v = strtol(vs, &end, 10)) {
      mx_cold_pack_set_variant((int)v);
      const Timing t = time_ours(D, A, dx, dy, warmup, reps, &y);
      const bool bw = y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
      r->bitwise = r->bitwise && bw;
      printf("  %-22s variant %ld: packed %9.1f us (min %.1f)  x%.3f vs variant 0  %s\n", item.c_str(), v, t.med, t.mn,
             r->packed.med / t.med, bw ? "bitwise" : "NOT BITWISE");
      mx_cold_pack_set_variant(0);
    }
  }
  if (info.rowpat && getenv("COLD_PACK_FORM_AB") && atoi(getenv("COLD_PACK_FORM_AB")) == 1) {
    /* the pack AUTO would take without row patterns, timed against the row-pattern form */
    mx_pack_request pack_only = rq;
    pack_only.form = MX_FORM_PACK;
    mx_device_pack_info ip;
    if (mx_device_compress(D, &pack_only) || mx_device_compress_info(D, &ip)) {
      printf("  %-22s pack only: failed (%s)\n", item.c_str(), mx_device_last_error());
      r->bitwise = false;
    } else {
      const Timing t = time_ours(D, A, dx, dy, warmup, reps, &y);
      const bool bw = y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
      r->bitwise = r->bitwise && bw;
      printf("  %-22s row patterns %.2f B/nnz %9.1f us vs pack %s/%s %.2f B/nnz %9.1f us (min %.1f): x%.3f  %s\n", item.c_str(),
             r->bpn_packed, r->packed.med, mx_val_enc_name(ip.val_enc), mx_idx_enc_name(ip.idx_enc), (double)ip.bytes / std::max(1, A.nnz()),
             t.med, t.mn, t.med / r->packed.med, bw ? "bitwise" : "NOT BITWISE");
    }
    if (mx_device_compress(D, &rq)) r->bitwise = false; /* the AUTO form again for what follows */
  }
  if (getenv("COLD_PACK_ROWS_AB") && atoi(getenv("COLD_PACK_ROWS_AB")) == 1) {
    const mx_pack_request rows_off16 = {MX_PACK_AUTO, MX_PACK_AUTO, MX_ROW_OFF16};
    mx_device_pack_info ip;
    if (mx_device_compress(D, &rows_off16) || mx_device_compress_info(D, &ip)) {
      printf("  %-22s rows off16: not packed (%s)\n", item.c_str(), mx_device_last_error()); /* a chunk too long for 16 bits */
    } else {
      const Timing t = time_ours(D, A, dx, dy, warmup, reps, &y);
      const bool bw = y.size() == y_plain.size() && memcmp(y.data(), y_plain.data(), sizeof(double) * y.size()) == 0;
      r->bitwise = r->bitwise && bw;
      printf("  %-22s rows %s %.2f B/nnz %9.1f us (min %.1f) vs rows %s %.2f B/nnz %9.1f us (min %.1f): x%.3f  %s\n",
             item.c_str(), r->row_enc.c_str(), r->bpn_packed, r->packed.med, r->packed.mn, mx_row_enc_name(ip.row_enc),
             (double)ip.bytes / std::max(1, A.nnz()), t.med, t.mn, r->packed.med / t.med, bw ? "bitwise" : "NOT BITWISE");
    }
  }
  mx_device_free(D);
  if (getenv("COLD_PACK_MERGE") && atoi(getenv("COLD_PACK_MERGE")) == 1) {
    std::vector<double> y_merge;
    r->bitwise = time_merge(item, F, A, rq, dx, dy, warmup, reps, y_merge) && r->bitwise;
    if (const char *xs = getenv("COLD_PACK_XHOT")) {
      std::string list = xs;
      for (char *t = strtok(&list[0], " ,"); t; t = strtok(nullptr, " ,"))
        r->bitwise = time_merge_xhot(item, F, A, atoi(t), dx, dy, warmup, reps, y_merge) && r->bitwise;
    }
  }
  mx_format_free(&F);
  r->alg1 = time_cusparse(A, CUSPARSE_SPMV_CSR_ALG1, dx, dy, warmup, reps, &y);
  r->err_alg1 = mx_rel_err(y, ref);
  r->alg2 = time_cusparse(A, CUSPARSE_SPMV_CSR_ALG2, dx, dy, warmup, reps, &y);
  r->err_alg2 = mx_rel_err(y, ref);
  if (getenv("COLD_PACK_SE") && atoi(getenv("COLD_PACK_SE")) == 1)
    r->bitwise = time_se(item, A, ref, dx, dy, warmup, reps, std::min(r->alg1.med, r->alg2.med)) && r->bitwise;
  for (int c = 0; c < nc; ++c) {
    CK(cudaFree(dx[c]));
    CK(cudaFree(dy[c]));
  }
  return true;
}

int main(int argc, char **argv) {
  std::string outdir = ".";
  int warmup = 20, reps = 200;
  std::vector<std::string> items;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) outdir = argv[++i];
    else if (!strcmp(argv[i], "-warmup") && i + 1 < argc) warmup = std::max(20, atoi(argv[++i]));
    else if (!strcmp(argv[i], "-reps") && i + 1 < argc) reps = std::max(100, atoi(argv[++i]));
    else items.push_back(argv[i]);
  }
  if (items.empty()) items.assign(default_specs, default_specs + sizeof default_specs / sizeof default_specs[0]);
  if (mx_device_count() == 0) {
    printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  mkdir(outdir.c_str(), 0755);
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0, rt = 0, csp = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  cusparseGetProperty(MAJOR_VERSION, &csp);
  const double bw = copy_bandwidth();
  printf("# %s, %d SMs, L2 %.0f MB, driver %d, runtime %d, cuSPARSE %d, D2D copy %.0f GB/s; warm-up %d, median of %d\n", prop.name,
         prop.multiProcessorCount, prop.l2CacheSize / 1e6, drv, rt, csp, bw / 1e9, warmup, reps);
  FILE *fe = fopen((outdir + "/env.txt").c_str(), "w");
  if (fe) {
    fprintf(fe, "gpu_name=%s\nsms=%d\nl2_bytes=%d\ncuda_driver=%d\ncuda_runtime=%d\ncusparse_major=%d\nd2d_copy_GBps=%.1f\nwarmup=%d\nreps=%d\n",
            prop.name, prop.multiProcessorCount, prop.l2CacheSize, drv, rt, csp, bw / 1e9, warmup, reps);
    fclose(fe);
  }
  FILE *fc = fopen((outdir + "/cold_pack.csv").c_str(), "w"), *fm = fopen((outdir + "/cold_pack.md").c_str(), "w");
  if (!fc || !fm) {
    fprintf(stderr, "cannot write into %s\n", outdir.c_str());
    return 2;
  }
  fprintf(fc, "matrix,values,rows,cols,nnz,val_enc,idx_enc,bytes_per_nnz_plain,bytes_per_nnz_packed,compress_ms,ncopy,"
              "plain_us,plain_min_us,plain_max_us,packed_us,packed_min_us,packed_max_us,alg1_us,alg1_min_us,alg1_max_us,"
              "alg2_us,alg2_min_us,alg2_max_us,bw_plain,bw_packed,bw_alg2_plain_bytes,speedup_packed_vs_plain,"
              "speedup_packed_vs_best_cusparse,err_plain,err_packed,err_alg1,err_alg2,bitwise_equal,row_enc\n");
  fprintf(fm, "# cold-pack-bench\n\n%s (%d SMs, L2 %.0f MB), driver %d, runtime %d, cuSPARSE %d; D2D copy %.0f GB/s; crux (0,0); "
              "warm-up %d, median of %d (us).\n\n| matrix | nnz | enc (val/col/rows) | B/nnz | plain | packed | ALG1 | ALG2 | bw plain | bw packed "
              "| packed/plain | packed/best cuSPARSE | bitwise |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, drv, rt, csp, bw / 1e9, warmup, reps);
  int wrong = 0;
  for (const std::string &item : items) {
    Row r;
    if (!run_one(item, (size_t)prop.l2CacheSize, warmup, reps, &r)) {
      ++wrong;
      continue;
    }
    Csr dims;
    dims.nrows = r.nrows, dims.ncols = r.ncols;
    const double plain_bytes = r.bpn_plain * r.nnz, packed_bytes = r.bpn_packed * r.nnz;
    const double bwp = bytes_to_bw(plain_bytes, dims, r.plain.med) / bw, bwk = bytes_to_bw(packed_bytes, dims, r.packed.med) / bw;
    const double bwa = bytes_to_bw(plain_bytes, dims, r.alg2.med) / bw;
    const double best = std::min(r.alg1.med, r.alg2.med);
    const bool ok = r.err_plain < 1e-12 && r.err_packed < 1e-12 && r.bitwise;
    wrong += !ok;
    printf("%-24s %-8s nnz %10d %-8s/%-7s/%-5s %5.2f -> %5.2f B/nnz  plain %9.1f  packed %9.1f  alg1 %9.1f  alg2 %9.1f us  "
           "bw %.2f -> %.2f  x%.2f vs plain  x%.2f vs best cuSPARSE  %s%s\n",
           item.c_str(), r.values.c_str(), r.nnz, r.val_enc.c_str(), r.idx_enc.c_str(), r.row_enc.c_str(), r.bpn_plain, r.bpn_packed,
           r.plain.med, r.packed.med, r.alg1.med, r.alg2.med, bwp, bwk, r.plain.med / r.packed.med, best / r.packed.med,
           r.bitwise ? "bitwise" : "NOT BITWISE", ok ? "" : " WRONG");
    fflush(stdout);
    fprintf(fc, "%s,%s,%d,%d,%d,%s,%s,%.4f,%.4f,%.2f,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.4f,%.4f,%.4f,"
                "%.4f,%.4f,%.3g,%.3g,%.3g,%.3g,%d,%s\n",
            item.c_str(), r.values.c_str(), r.nrows, r.ncols, r.nnz, r.val_enc.c_str(), r.idx_enc.c_str(), r.bpn_plain, r.bpn_packed,
            r.compress_ms, r.ncopy, r.plain.med, r.plain.mn, r.plain.mx, r.packed.med, r.packed.mn, r.packed.mx, r.alg1.med,
            r.alg1.mn, r.alg1.mx, r.alg2.med, r.alg2.mn, r.alg2.mx, bwp, bwk, bwa, r.plain.med / r.packed.med, best / r.packed.med,
            r.err_plain, r.err_packed, r.err_alg1, r.err_alg2, r.bitwise ? 1 : 0, r.row_enc.c_str());
    fprintf(fm, "| %s | %d | %s/%s/%s | %.2f -> %.2f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %s |\n", item.c_str(), r.nnz,
            r.val_enc.c_str(), r.idx_enc.c_str(), r.row_enc.c_str(), r.bpn_plain, r.bpn_packed, r.plain.med, r.packed.med, r.alg1.med, r.alg2.med, bwp,
            bwk, r.plain.med / r.packed.med, best / r.packed.med, r.bitwise ? "yes" : "NO");
  }
  fprintf(fm, "\nbw = (matrix bytes + 8 rows + 8 cols) / t as a fraction of the copy bandwidth (plain: 12 nnz + 4 (rows+1); "
              "packed: the packed bytes). Command: cold-pack-bench");
  for (int i = 1; i < argc; ++i) fprintf(fm, " %s", argv[i]);
  fprintf(fm, "\n");
  fclose(fc);
  fclose(fm);
  CK(cudaStreamDestroy(g_stream));
  printf("%s\n", wrong ? "SOME VARIANTS WRONG OR SKIPPED" : "all variants correct");
  return wrong ? 1 : 0;
}

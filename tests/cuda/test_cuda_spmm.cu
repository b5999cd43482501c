/* test_cuda_spmm - C = A B for k dense columns on the GPU (mx_device_spmm, src/cuda/mx_spmm_ways.cu and mx_spmm.cu)
 * against the CPU oracle mx_spmm of the same host format.
 *
 * For the zoo (shapes, real matrices, generated ones) x cruxes ((0,0) all cold; (1,1) DU and SE;
 * (0.6,0.4) auto) x x-hot (off, the 64 most used columns) x k (1 .. 256, odd, multiples of 8 and
 * not) with leading dimensions above the rows:
 *   - every column of C within 1e-12 (relative) of the CPU SpMM's column;
 *   - the padding rows of C are not written (poisoned before, poisoned after);
 *   - a second product is bitwise equal to the first (reproducible run to run);
 *   - host B and C (mx_device_spmm_host) give the device product's bits;
 *   - the plan: one SpMV per column at k = 1, the kernels at k >= 2 on plain arrays by bytes, and
 *     the choice between them timed by the first product of a k (the later ones repeat its bits);
 *     every way forced in turn (our kernels on B in place, on row-major panels, on padded panels, on
 *     panels with an SpMV per column past the last multiple of 8, the SpMVs), each right and
 *     repeating its bits; a first product at k = 10 times the padded panels and the panels with SpMVs.
 * On a merge plan, the 2-column panels on the merge tiles: right, and all cold bitwise the merge
 * SpMVs (check_merge_panels). The pairs on segment and merge plans, plain and under every value
 * encoding of a pack, timed against the SpMVs alone where the byte rule takes them, refused where the
 * cold kernel has none, and the pairs in place (B's two columns read where they are) on segment
 * plans without column constants or an SE hot part, each column bitwise its SpMV, refused elsewhere
 * (check_pairs, check_pairs_refused); on an SE hot part under each encoding of
 * its values, x-hot off and on, every column bitwise its SpMV (check_pairs_se_hot); k = 3 a bucket
 * of its own. Then, on
 * few-valued copies: packed (mx_device_compress AUTO) with the plain arrays released, the
 * product still right and, once the kernels ran, the plain arrays back and kept while a bucket keeps
 * a kernel way (a release frees nothing), freed again by a release once every bucket runs the SpMVs
 * (which then leave them released); after a value refresh, right for the new values; under a hub
 * split (plain arrays released too), right.
 * Usage: test_cuda_spmm [small|race] [MATRICES_DIR]. Exit: 0 pass, 1 fail, 77 no GPU. */
#include "cuda_test_products.h"
extern "C" {
#include "core/mx_hot_pack.h" /* mx_hot_pack_build: the rule the hot values are encoded by */
}

/* column-major n x k with leading dimension ld, padding rows NaN (never read) */
static std::vector<double> rand_block(int32_t n, int k, int64_t ld, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> b((size_t)(ld * k), NAN);
  for (int j = 0; j < k; ++j)
    for (int32_t i = 0; i < n; ++i) b[(size_t)(j * ld + i)] = u(rng);
  return b;
}

static const uint64_t POISON = 0xffffffffffffffffull;

/* C = D B on device arrays, C's every entry poisoned first; the whole ldc x k block back. */
static std::vector<double> device_spmm(mx_device *D, int k, const std::vector<double> &B, int64_t ldb, int64_t ldc,
                                       const std::string &tag) {
  DevVec dB(B.size()), dC((size_t)(ldc * k));
  dB.put(B);
  dC.poison();
  if (mx_device_spmm(D, k, dB.p, ldb, dC.p, ldc, nullptr)) expect(false, tag + " mx_device_spmm: " + mx_device_last_error());
  CK(cudaDeviceSynchronize());
  return dC.get();
}

/* Every column of C within TOL of Cref's; the padding rows of C still poisoned. */
static void expect_spmm_close(const std::vector<double> &C, const std::vector<double> &Cref, int32_t m, int k, int64_t ldc,
                              const std::string &tag) {
  double worst = 0.0;
  bool pad_ok = true;
  for (int j = 0; j < k; ++j) {
    std::vector<double> c(C.begin() + j * ldc, C.begin() + j * ldc + m), r(Cref.begin() + j * ldc, Cref.begin() + j * ldc + m);
    worst = std::max(worst, mx_rel_err(c, r));
    for (int64_t i = m; i < ldc; ++i) {
      uint64_t u;
      memcpy(&u, &C[(size_t)(j * ldc + i)], 8);
      pad_ok = pad_ok && u == POISON;
    }
  }
  char buf[96];
  snprintf(buf, sizeof buf, " (k %d: worst column rel err %.3g)", k, worst);
  expect(worst <= TOL, tag + " columns vs the CPU SpMM" + buf);
  expect(pad_ok, tag + " padding rows of C left alone" + buf);
}

/* The CPU oracle: mx_spmm of F on B, C's padding poisoned like the device's. */
static std::vector<double> cpu_spmm(const mx_format &F, int k, const std::vector<double> &B, int64_t ldb, int64_t ldc) {
  std::vector<double> C((size_t)(ldc * k));
  memset(C.data(), 0xff, C.size() * sizeof(double));
  mx_spmm(&F, k, B.data(), ldb, C.data(), ldc);
  return C;
}

/* One (D, F) at every k: device vs CPU, reproducible, host path, plan. */
static void check_ks(mx_device *D, const mx_format &F, const std::vector<int> &ks, std::mt19937_64 &rng, const std::string &tag) {
  const int32_t m = F.nrows, n = F.ncols;
  for (int k : ks) {
    if ((double)(m + n) * k > 6e7) continue;
    const int64_t ldb = n + 3, ldc = m + 5;
    const std::vector<double> B = rand_block(n, k, ldb, rng);
    const std::vector<double> ref = cpu_spmm(F, k, B, ldb, ldc);
    const std::string kt = tag + " k=" + std::to_string(k);
    const std::vector<double> C = device_spmm(D, k, B, ldb, ldc, kt);
    expect_spmm_close(C, ref, m, k, ldc, kt);
    if (!g_race) expect(bitwise_equal(device_spmm(D, k, B, ldb, ldc, kt), C), kt + " second product bitwise equal");
    if (!g_race && (k == 3 || k == 9)) {
      std::vector<double> Ch((size_t)(ldc * k));
      memset(Ch.data(), 0xff, Ch.size() * sizeof(double));
      if (mx_device_spmm_host(D, k, B.data(), ldb, Ch.data(), ldc, nullptr)) expect(false, kt + " host: " + mx_device_last_error());
      expect(bitwise_equal(Ch, C), kt + " host B and C: the device product's bits");
    }
  }
}

static void check_plan_basics(mx_device *D, const std::string &tag) {
  mx_spmm_plan p1, p2;
  expect(mx_device_spmm_plan(D, 1, &p1) == 0 && !p1.kernel, tag + " plan: k = 1 runs one SpMV");
  expect(mx_device_spmm_plan(D, 2, &p2) == 0 && p2.kernel && p2.min_k_kernel == 2, tag + " plan: plain arrays, k = 2 runs the kernels");
  expect(p2.lanes_per_row >= 2 && p2.lanes_per_row <= 32, tag + " plan: lanes per row in [2, 32]");
}

static Csr few_values(const Csr &A0) {
  Csr A = A0;
  A.name = A0.name + " few";
  for (size_t p = 0; p < A.val.size(); ++p) A.val[p] = (double)(A.col[p] % 3) - 1.0 + 0.5 * (double)(p % 2);
  return A;
}

/* every nonzero its own value (the generators' graphs hold ones) */
static Csr unique_values(const Csr &A0) {
  Csr A = A0;
  A.name = A0.name + " unique";
  for (size_t p = 0; p < A.val.size(); ++p) A.val[p] = 1.0 + 1e-3 * (double)p;
  return A;
}

static Csr one_value(const Csr &A0) {
  Csr A = A0;
  A.name = A0.name + " one value";
  for (double &v : A.val) v = 0.75;
  return A;
}

/* every column's entries one value (PageRank's form): a hub split keeps them as column scales */
static Csr column_constants(const Csr &A0) {
  Csr A = A0;
  A.name = A0.name + " column constants";
  for (size_t p = 0; p < A.val.size(); ++p) A.val[p] = 1.0 / (double)(A.col[p] % 7 + 1);
  return A;
}

/* Rows in bands of lengths len[b] (n / |len| rows each, the last band the rest), row i's nonzeros in
 * columns i .. i + len - 1 with values 1 + d / 64 by offset d: one row pattern a band, lane groups of
 * the segment kernel by the length (16 g <= mean: lengths 20, 40 and 64 give g = 1, 2 and 4). */
static Csr banded_patterns(const std::string &name, int32_t n, const std::vector<int> &len) {
  Csr A;
  A.name = name;
  A.nrows = n;
  A.ncols = n + *std::max_element(len.begin(), len.end());
  A.rowptr.assign(1, 0);
  const int32_t per = std::max<int32_t>(1, n / (int32_t)len.size());
  for (int32_t i = 0; i < n; ++i) {
    const int L = len[std::min<size_t>((size_t)(i / per), len.size() - 1)];
    for (int d = 0; d < L; ++d) {
      A.col.push_back(i + d);
      A.val.push_back(1.0 + d / 64.0);
    }
    A.rowptr.push_back((int32_t)A.col.size());
  }
  return A;
}

/* F = A's format at crux c and hot mode `mode`, uploaded as *D with cold kernel `cold` and x-hot
 * request `xhot`; false after a failed check (nothing left allocated). */
static bool format_on_device(const Csr &A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int xhot, const std::string &tag,
                             mx_format *F, mx_device **D) {
  const mx_csr v = A.view();
  memset(F, 0, sizeof *F);
  *D = nullptr;
  if (mx_format_build(&v, c, mode, F) != MX_OK) {
    expect(false, tag + " build");
    return false;
  }
  if (mx_device_upload_xhot(F, cold, xhot, D)) {
    expect(false, tag + " upload: " + mx_device_last_error());
    mx_format_free(F);
    return false;
  }
  return true;
}

/* Packed with the plain arrays released, then refreshed: right throughout; the kernels bring the
 * plain arrays back and keep them. */
/* whether the way a plan kept reads the plain cold arrays (our kernels on B in place or on panels) */
static bool way_reads_plain(const mx_spmm_plan &p) { return p.kernel && !p.rowpat && !p.whole && !p.hub_slabs; }

static void check_packed(const Csr &A, mx_crux c, std::mt19937_64 &rng) {
  const std::string tag = A.name + " packed crux (" + std::to_string(c.tau_c) + "," + std::to_string(c.tau_r) + ")";
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, c, MX_MODE_AUTO, MX_COLD_SEGMENT, 0, tag, &F, &D)) return;
  const mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);
  expect(mx_device_compress(D, &req) == 0, tag + " compress: " + mx_device_last_error());
  expect(mx_device_pack_release_plain(D) == 0, tag + " release: " + mx_device_last_error());
  const size_t released = mx_device_pack_plain_released(D);
  mx_spmm_plan plan;
  mx_device_spmm_plan(D, 16, &plan);
  check_ks(D, F, {1, 2, 16}, rng, tag + (released ? " (plain released)" : ""));
  if (plan.kernel && released) { /* the timed choices of k = 2 and 16 ran our kernels on the plain arrays */
    mx_spmm_plan p2, p16;
    expect(mx_device_spmm_plan(D, 2, &p2) == 0 && mx_device_spmm_plan(D, 16, &p16) == 0, tag + " plans");
    const bool kept = way_reads_plain(p2) || way_reads_plain(p16);
    expect(mx_device_pack_release_plain(D) == 0, tag + " release after the products: " + mx_device_last_error());
    expect(mx_device_pack_plain_released(D) == (kept ? 0 : released),
           tag + (kept ? " a kept kernel way: the plain arrays back, a release frees nothing" : " only the SpMVs kept: a release frees the plain arrays again"));
    /* every bucket on the pack's SpMVs: the plain arrays go again, and the products do not bring them back */
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_COLUMNS) == 0 && mx_device_pack_release_plain(D) == 0 &&
               mx_device_pack_plain_released(D) == released,
           tag + " the SpMVs forced: a release frees the plain arrays again");
    check_ks(D, F, {2, 16}, rng, tag + " the SpMVs forced");
    expect(mx_device_pack_plain_released(D) == released, tag + " the SpMVs leave the plain arrays released");
    /* our kernels forced bring them back; a new cold form resets every bucket's way, and a release
     * then frees them again (the next SpMM brings them back where it needs them) */
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_KERNELS) == 0, tag + " kernels forced");
    check_ks(D, F, {16}, rng, tag + " the kernels forced");
    expect(mx_device_pack_plain_released(D) == 0, tag + " the kernels forced: the plain arrays back");
    expect(mx_device_compress(D, &req) == 0 && mx_device_pack_release_plain(D) == 0 && mx_device_pack_plain_released(D) == released,
           tag + " compressed again: the ways reset, a release frees the plain arrays again");
    check_ks(D, F, {2, 16}, rng, tag + " compressed again");
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_AUTO) == 0, tag + " way back to auto");
  }
  if (A.nnz() > 0) { /* new values, same pattern */
    std::vector<double> nv(A.val);
    for (size_t p = 0; p < nv.size(); ++p) nv[p] = 0.25 * nv[p] - 1.0 / (1.0 + (double)(p % 7));
    expect(mx_device_refresh_values(D, nv.data(), nullptr) == 0, tag + " refresh: " + mx_device_last_error());
    mx_format_refresh_values(&F, nv.data());
    check_ks(D, F, {3, 8}, rng, tag + " refreshed");
  }
  mx_device_free(D);
  mx_format_free(&F);
}

/* Under a hub split of the all-cold device, its plain arrays released: right at every slab width and
 * per column; with them back (columns and values), the timed choice weighs the split's way beside
 * the whole matrix's: right, the plan names the way kept, and the arrays are never released again
 * (the SpMM kernels read them). */
static void check_hub(const Csr &A, std::mt19937_64 &rng) {
  const mx_csr v = A.view();
  mx_format F;
  memset(&F, 0, sizeof F);
  const std::string tag = A.name + " hub split";
  /* borrowed: the device's cold CSR is then the whole matrix in input order, which a split may free */
  if (A.nnz() == 0 || mx_format_build_borrow(&v, mx_crux{0, 0}, MX_MODE_AUTO, &F) != MX_OK) return;
  mx_device *D = nullptr;
  if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 0, &D)) {
    expect(false, tag + " upload: " + mx_device_last_error());
    mx_format_free(&F);
    return;
  }
  if (mx_device_hub(D, &v, 16) == 0) {
    int K = 0;
    mx_device_hub_info(D, &K, nullptr);
    if (K > 0) {
      expect(mx_device_hub_release_plain(D) == 0, tag + " release: " + mx_device_last_error());
      mx_spmm_plan plan;
      expect(mx_device_spmm_plan(D, 8, &plan) == 0 && plan.hub_slabs, tag + " plan names the hub part's slabs");
      check_ks(D, F, {1, 2, 3, 5, 8, 12, 17}, rng, tag); /* the hub part per column, in slabs of 4 and 8 */
      expect(mx_device_hub_restore_plain(D, &v) == 0 && !mx_device_hub_plain_released(D), tag + " restore: " + mx_device_last_error());
      check_ks(D, F, {1, 5, 8, 17}, rng, tag + ", plain arrays back");
      expect(mx_device_spmm_plan(D, 8, &plan) == 0 && plan.timed && plan.way_us[3] > 0 &&
                 plan.hub_slabs == (plan.way_us[3] < std::min({plan.way_us[0], plan.way_us[1], plan.way_us[2]})),
             tag + " plan: the split's way timed, named where kept");
      expect(mx_device_hub_release_plain(D) != 0 && !mx_device_hub_plain_released(D), tag + " no release once the SpMM kernels ran");
    }
  } else {
    expect(false, tag + ": " + mx_device_last_error());
  }
  mx_device_free(D);
  mx_format_free(&F);
}

/* Beside a hot part: the whole matrix all cold made for the timed choice (a CSR of other counts
 * refused), right, timed, named where kept and freed where not; forced, right before and after a value
 * refresh (its values copied from D's on the GPU). */
static void check_whole(const Csr &A, mx_crux c, mx_mode_request mode, std::mt19937_64 &rng) {
  const mx_csr v = A.view();
  char ctag[96];
  snprintf(ctag, sizeof ctag, " whole matrix beside crux (%g,%g) mode %d", c.tau_c, c.tau_r, (int)mode);
  const std::string tag = A.name + ctag;
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, c, mode, MX_COLD_AUTO, 0, tag, &F, &D)) return;
  if (F.mode == MX_HOT_NONE) { /* no hot part: nothing to make */
    mx_device_free(D);
    mx_format_free(&F);
    return;
  }
  mx_csr other = v;
  other.ncols += 1;
  expect(mx_device_spmm_whole(D, &other, 8) != 0, tag + " a CSR of other counts refused");
  expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_WHOLE) != 0, tag + " the whole way not forced before it exists");
  const size_t bytes0 = mx_device_bytes(D);
  expect(mx_device_spmm_whole(D, &v, 8) == 0 && mx_device_bytes(D) > bytes0, tag + " made for k = 8: " + mx_device_last_error());
  expect(mx_device_spmm_whole(D, &v, 1) == 0, tag + " k = 1 (one SpMV) asks nothing");
  check_ks(D, F, {8}, rng, tag);
  mx_spmm_plan p;
  expect(mx_device_spmm_plan(D, 8, &p) == 0 && p.timed && p.way_us[4] > 0 &&
             p.whole == (p.way_us[4] < std::min({p.way_us[0], p.way_us[1], p.way_us[2]})),
         tag + " plan: the whole matrix timed, named where kept");
  expect((mx_device_spmm_set_way(D, MX_SPMM_WAY_WHOLE) == 0) == (p.whole != 0), tag + " the whole matrix freed unless kept");
  expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_AUTO) == 0, tag + " way back to auto");
  expect(mx_device_spmm_whole(D, &v, 16) == 0 && mx_device_spmm_set_way(D, MX_SPMM_WAY_WHOLE) == 0,
         tag + " made again for k = 16, forced: " + mx_device_last_error());
  check_ks(D, F, {3, 16}, rng, tag + " forced");
  std::vector<double> nv(A.val);
  for (size_t q = 0; q < nv.size(); ++q) nv[q] = 0.5 * nv[q] + 1.0 / (2.0 + (double)(q % 5));
  expect(mx_device_refresh_values(D, nv.data(), nullptr) == 0, tag + " refresh: " + mx_device_last_error());
  mx_format_refresh_values(&F, nv.data());
  check_ks(D, F, {16}, rng, tag + " forced, refreshed");
  mx_device_free(D);
  mx_format_free(&F);
}

/* Column j >= j0 of C bitwise the device SpMV of column j of B (z = NULL). */
static void expect_columns_are_spmvs(mx_device *D, int32_t m, int32_t n, int k, std::mt19937_64 &rng, const std::string &tag, int j0 = 0) {
  const int64_t ldb = n + 3, ldc = m + 5;
  const std::vector<double> B = rand_block(n, k, ldb, rng);
  const std::vector<double> C = device_spmm(D, k, B, ldb, ldc, tag);
  DevVec dB(B.size()), y((size_t)std::max(m, 1));
  dB.put(B);
  bool same = true;
  for (int j = j0; j < k; ++j) {
    y.poison();
    if (mx_device_spmv(D, dB.p + j * ldb, nullptr, y.p, nullptr)) expect(false, tag + " SpMV: " + mx_device_last_error());
    CK(cudaDeviceSynchronize());
    const std::vector<double> yj = y.get();
    same = same && (m == 0 || memcmp(yj.data(), C.data() + j * ldc, sizeof(double) * m) == 0);
  }
  expect(same, tag + " k=" + std::to_string(k) + ": every column from " + std::to_string(j0) + " on bitwise its SpMV");
}

/* The cold part in row-pattern form (where the form pays for A's values): the timed choice times its
 * way, named where kept; forced, right (all columns bitwise the SpMVs where there is no hot part);
 * after a refresh whose values the patterns cannot hold, a bucket that kept the way is timed again. */
static void check_rowpat(const Csr &A, mx_crux c, std::mt19937_64 &rng, bool must_hold = false) {
  char ctag[96];
  snprintf(ctag, sizeof ctag, " row patterns crux (%g,%g)", c.tau_c, c.tau_r);
  const std::string tag = A.name + ctag;
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, c, MX_MODE_AUTO, MX_COLD_SEGMENT, 0, tag, &F, &D)) return;
  const mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_device_pack_info pi;
  expect(mx_device_compress(D, &req) == 0 && mx_device_compress_info(D, &pi) == 0, tag + " compress: " + mx_device_last_error());
  if (must_hold) expect(pi.rowpat, tag + ": the row patterns hold");
  if (pi.rowpat && F.nrows > 0) {
    mx_spmm_plan p;
    expect(mx_device_spmm_plan(D, 2, &p) == 0 && p.kernel && p.min_k_kernel == 2, tag + " plan: k = 2 times the ways");
    check_ks(D, F, {2, 8, 17}, rng, tag);
    expect(mx_device_spmm_plan(D, 8, &p) == 0 && p.timed && p.way_us[5] > 0 &&
               p.rowpat == (p.way_us[5] < std::min({p.way_us[0], p.way_us[1], p.way_us[2]})),
           tag + " plan: the row patterns timed, named where kept");
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_ROWPAT) == 0, tag + " row patterns forced: " + mx_device_last_error());
    check_ks(D, F, {2, 3, 4, 9, 16}, rng, tag + " forced"); /* the narrow kernels (k <= 2, k <= 4) and the wide one */
    if (F.mode == MX_HOT_NONE)
      for (int k : {2, 3, 9}) expect_columns_are_spmvs(D, F.nrows, F.ncols, k, rng, tag + " forced");
    std::vector<double> nv(A.val);
    for (size_t q = 0; q < nv.size(); ++q) nv[q] = 1.0 + 1e-3 * (double)q; /* every value its own: no pattern repeats */
    expect(mx_device_refresh_values(D, nv.data(), nullptr) == 0, tag + " refresh: " + mx_device_last_error());
    mx_format_refresh_values(&F, nv.data());
    expect(mx_device_compress_info(D, &pi) == 0, tag + " info after the refresh");
    if (!pi.rowpat) expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_ROWPAT) != 0, tag + " row patterns gone: the way refused");
    check_ks(D, F, {9}, rng, tag + " refreshed");
    if (!pi.rowpat) expect(mx_device_spmm_plan(D, 9, &p) == 0 && p.timed && !p.rowpat, tag + " refreshed: the bucket timed again without them");
  } else {
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_ROWPAT) != 0, tag + " no row patterns: the way refused");
  }
  mx_device_free(D);
  mx_format_free(&F);
}

/* A bucket whose first product is at k = 10 (panels of 8 and 2, padded: one of 16, panels and
 * SpMVs: 8 and two SpMVs): the timed choice times the padded panels and the panels with SpMVs too
 * and keeps the fastest of the ways it timed; right either way. */
static void check_k10_ways_timed(const Csr &A, std::mt19937_64 &rng) {
  const std::string tag = A.name + " k = 10 ways timed";
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, mx_crux{0, 0}, MX_MODE_AUTO, MX_COLD_AUTO, 0, tag, &F, &D)) return;
  check_ks(D, F, {10}, rng, tag);
  mx_spmm_plan p;
  if (F.nrows > 0) { /* plain arrays: the byte rule takes the kernels (check_plan_basics), so k = 10 is timed */
    expect(mx_device_spmm_plan(D, 10, &p) == 0 && p.timed && p.way_us[6] > 0, tag + ": the padded panels timed");
    double best = 0.0;
    for (double t : p.way_us)
      if (t > 0 && (best == 0.0 || t < best)) best = t;
    expect(p.way_us[7] > 0, tag + ": the panels and SpMVs timed");
    expect(!p.padded_panels || p.way_us[6] == best, tag + ": the padded panels kept only where fastest (ties keep the earlier way)");
    expect(!p.rest_spmv || p.way_us[7] == best, tag + ": the panels and SpMVs kept only where fastest");
  }
  check_ks(D, F, {12, 15}, rng, tag + " the bucket's way");
  mx_device_free(D);
  mx_format_free(&F);
}

/* The 2-column panel on the merge tiles (mx_spmm_merge.cu), on a merge plan with the panels forced:
 * k = 2, and k = 9 / 10 whose last panel holds 1 / 2 columns, right and reproducible; all cold, the
 * panel's columns bitwise the merge SpMVs; the same products right with the lanes-per-row panel. */
static void check_merge_panels(const Csr &A, mx_crux c, mx_mode_request mode, int xhot, std::mt19937_64 &rng) {
  char ctag[96];
  snprintf(ctag, sizeof ctag, " merge panels crux (%g,%g) mode %d xhot %d", c.tau_c, c.tau_r, (int)mode, xhot);
  const std::string tag = A.name + ctag;
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, c, mode, MX_COLD_MERGE, xhot, tag, &F, &D)) return;
  expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PANELS) == 0, tag + " panels forced: " + mx_device_last_error());
  const int was = mx_spmm_set_merge_panels(2); /* the test's matrices fit the L2 anyway */
  check_ks(D, F, {2, 9, 10}, rng, tag);
  if (F.mode == MX_HOT_NONE) {
    expect_columns_are_spmvs(D, F.nrows, F.ncols, 2, rng, tag);
    expect_columns_are_spmvs(D, F.nrows, F.ncols, 9, rng, tag, 8);
    expect_columns_are_spmvs(D, F.nrows, F.ncols, 10, rng, tag, 8);
  }
  mx_spmm_set_merge_panels(0);
  check_ks(D, F, {2, 9}, rng, tag + " lanes per row");
  mx_spmm_set_merge_panels(was);
  mx_device_free(D);
  mx_format_free(&F);
}

/* The pairs (MX_SPMM_WAY_PAIRS: two columns a launch by the SpMV's cold kernel) on a segment or merge
 * plan, plain or packed (value encoding val_enc >= 0, the plain arrays released): forced, right at
 * even and odd k and reproducible; all cold or with an SE hot part, every column bitwise its SpMV;
 * the plan names them; they leave a pack's released plain arrays released; where the byte rule
 * takes the SpMVs (a pack), the first product times the pairs against the SpMVs alone (not the
 * kernels). */
static void check_pairs(const Csr &A, mx_crux c, mx_mode_request mode, mx_cold_kernel cold, int val_enc, std::mt19937_64 &rng) {
  const bool pack = val_enc >= 0;
  char ctag[128];
  snprintf(ctag, sizeof ctag, " pairs crux (%g,%g) mode %d %s%s%s", c.tau_c, c.tau_r, (int)mode, cold == MX_COLD_MERGE ? "merge" : "segment",
           pack ? " packed " : "", pack ? mx_val_enc_name(val_enc) : "");
  const std::string tag = A.name + ctag;
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, c, mode, cold, 0, tag, &F, &D)) return;
  size_t released = 0;
  bool colconst = false; /* the segment kernel reads a pair scaled by column constants: no pairs in place */
  const int l2_rule = mx_spmm_set_l2_rule(0); /* the byte rule as on a matrix larger than the L2 */
  if (pack) { /* value encoding val_enc, the columns and row pointers by the rule */
    const mx_pack_request req = {val_enc, MX_PACK_AUTO, MX_PACK_AUTO, MX_FORM_PACK};
    mx_device_pack_info pi;
    expect(mx_device_compress(D, &req) == 0 && mx_device_pack_release_plain(D) == 0 && mx_device_compress_info(D, &pi) == 0,
           tag + " compress: " + mx_device_last_error());
    if (c.tau_c == 0 && c.tau_r == 0 && A.nnz() > 0)
      expect(pi.val_enc == val_enc && (val_enc == MX_VAL_PLAIN || pi.in_use), tag + ": the pack in use, its value encoding");
    released = mx_device_pack_plain_released(D);
    colconst = pi.packed && pi.val_enc == MX_VAL_COLCONST; /* as the pair kernels decide: the pack active, whoever reads it */
  }
  const bool in_place = mx_device_cold_kernel(D) == MX_COLD_SEGMENT && !colconst && !(F.mode == MX_HOT_SE && F.se_nslots > 0);
  mx_spmm_plan p;
  if (F.nrows > 0 && mx_device_spmm_plan(D, 2, &p) == 0 && !p.kernel) { /* the rule takes the SpMVs: the pairs timed against them */
    check_ks(D, F, {2}, rng, tag + " timed");
    const bool planned = mx_device_spmm_plan(D, 2, &p) == 0;
    const double pair_us = p.way_us[9] > 0 ? std::min(p.way_us[8], p.way_us[9]) : p.way_us[8];
    expect(planned && p.timed && p.way_us[8] > 0 && p.way_us[2] > 0 && p.way_us[0] == 0 && p.way_us[1] == 0 &&
               (p.way_us[9] > 0) == in_place && p.pairs == (pair_us < p.way_us[2]) && (!p.pairs_in_place || p.way_us[9] < p.way_us[8]),
           tag + " the pairs (in place too where they run) timed against the SpMVs alone, named where kept");
    expect(mx_device_pack_plain_released(D) == released, tag + " the timed choice leaves the plain arrays released");
  }
  expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS) == 0, tag + " pairs forced: " + mx_device_last_error());
  if (F.nrows > 0) expect(mx_device_spmm_plan(D, 4, &p) == 0 && p.pairs && !p.kernel && p.timed, tag + " plan names the pairs");
  check_ks(D, F, g_race ? std::vector<int>{2, 3} : std::vector<int>{2, 3, 4, 7, 16, 33}, rng, tag + " forced");
  if (F.mode != MX_HOT_DU && !g_race) /* all cold, or an SE hot part by the SpMV's SE kernel on pairs */
    for (int k : {2, 5}) expect_columns_are_spmvs(D, F.nrows, F.ncols, k, rng, tag + " forced");
  expect(mx_device_pack_plain_released(D) == released, tag + " the pairs leave the plain arrays released");
  expect((mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS_IN_PLACE) == 0) == in_place,
         tag + " the pairs in place offered where the segment kernel reads B unscaled and runs no SE hot part");
  if (in_place) { /* B's columns in place: ldb odd in expect_columns_are_spmvs, so column 1 of a pair is not 16-byte aligned */
    if (F.nrows > 0) expect(mx_device_spmm_plan(D, 4, &p) == 0 && p.pairs && p.pairs_in_place && !p.kernel, tag + " plan names the pairs in place");
    check_ks(D, F, g_race ? std::vector<int>{2, 3} : std::vector<int>{2, 3, 4, 7, 16, 33}, rng, tag + " in place forced");
    if (!g_race)
      for (int k : {2, 5}) expect_columns_are_spmvs(D, F.nrows, F.ncols, k, rng, tag + " in place forced");
    expect(mx_device_pack_plain_released(D) == released, tag + " the pairs in place leave the plain arrays released");
  }
  if (pack && A.nnz() > 0 && !g_race) { /* new values: the pack refreshed, the pairs right */
    std::vector<double> nv(A.val);
    for (size_t q = 0; q < nv.size(); ++q) nv[q] = 2.0 * nv[q] + 0.125;
    expect(mx_device_refresh_values(D, nv.data(), nullptr) == 0, tag + " refresh: " + mx_device_last_error());
    mx_format_refresh_values(&F, nv.data());
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS) == 0, tag + " pairs forced after the refresh");
    check_ks(D, F, {2, 3}, rng, tag + " refreshed");
    if (in_place && mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS_IN_PLACE) == 0) check_ks(D, F, {2, 3}, rng, tag + " in place refreshed");
  }
  mx_spmm_set_l2_rule(l2_rule);
  if (pack && c.tau_c == 0 && c.tau_r == 0 && F.nrows > 0 && 12.0 * A.nnz() + 4.0 * (F.nrows + 1) <= 0.4 * (double)mx_device_l2_bytes()) {
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_AUTO) == 0 && mx_device_spmm_plan(D, 2, &p) == 0 && p.kernel,
           tag + ": the plain matrix fits half the L2, the kernels timed beside the pack");
    check_ks(D, F, {2, 3}, rng, tag + " the kernels timed beside the pack");
  }
  mx_device_free(D);
  mx_format_free(&F);
}

/* The pairs on an SE hot part (the SpMV's SE kernel on pairs) under every encoding of its values the
 * engine's compression picks (plain, one value, a constant per column), with x-hot off (segment
 * kernel) and on (merge kernel: x-hot requested codes the cold CSR too, which the segment kernel's
 * pairs refuse): right at even and odd k, every column bitwise its SpMV. */
static void check_pairs_se_hot(const Csr &A, mx_val_enc hot_enc, int xhot, std::mt19937_64 &rng) {
  const std::string tag = A.name + " pairs SE hot " + mx_val_enc_name(hot_enc) + " x-hot " + std::to_string(xhot);
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, mx_crux{0.6, 0.4}, MX_MODE_SE, xhot ? MX_COLD_MERGE : MX_COLD_SEGMENT, xhot, tag, &F, &D)) return;
  const mx_pack_request req = {MX_PACK_AUTO, MX_PACK_AUTO, MX_PACK_AUTO, MX_FORM_PACK};
  mx_device_pack_info pi;
  expect(mx_device_compress(D, &req) == 0 && mx_device_compress_info(D, &pi) == 0, tag + " compress: " + mx_device_last_error());
  if (F.mode == MX_HOT_SE && F.se_nslots > 0) {
    mx_hot_pack H; /* the host's choice (no x-hot codes in a cold CSR there) */
    expect(mx_hot_pack_build(&F, &H) == MX_OK, tag + " host hot pack");
    const mx_val_enc want = H.enc == MX_VAL_COLCONST && mx_device_xhot_cols(D) > 0 ? MX_VAL_PLAIN : H.enc;
    mx_hot_pack_free(&H);
    expect(pi.hot_val_enc == want && (want == hot_enc || hot_enc == MX_VAL_COLCONST), tag + ": the hot values' encoding (column constants: as the host rule)");
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS_IN_PLACE) != 0, tag + ": no pairs in place beside an SE hot part");
    expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS) == 0, tag + " pairs forced: " + mx_device_last_error());
    check_ks(D, F, {2, 3, 4, 7}, rng, tag);
    for (int k : {2, 5}) expect_columns_are_spmvs(D, F.nrows, F.ncols, k, rng, tag);
  }
  mx_device_free(D);
  mx_format_free(&F);
}

/* No pairs where the cold kernel has none: cuSPARSE's, a segment kernel whose cold CSR x-hot codes
 * (crux (0,0): the x-hot columns are cold ones); the way refused, the timed choice without them,
 * right. */
static void check_pairs_refused(const Csr &A, std::mt19937_64 &rng) {
  for (int xhot : {0, 64}) {
    const mx_cold_kernel cold = xhot ? MX_COLD_SEGMENT : MX_COLD_CUSPARSE;
    const std::string tag = A.name + (xhot ? " no pairs: x-hot codes in the segment kernel's cold CSR" : " no pairs: cuSPARSE cold");
    mx_format F;
    mx_device *D;
    if (!format_on_device(A, mx_crux{0, 0}, MX_MODE_AUTO, cold, xhot, tag, &F, &D)) continue;
    if (F.nrows > 0 && (xhot ? mx_device_xhot_cols(D) > 0 : mx_device_cold_kernel(D) == MX_COLD_CUSPARSE)) {
      expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS) != 0, tag + ": the pairs refused");
      check_ks(D, F, {2, 3}, rng, tag);
      mx_spmm_plan p;
      expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_PAIRS_IN_PLACE) != 0, tag + ": the pairs in place refused");
      expect(mx_device_spmm_plan(D, 2, &p) == 0 && !p.pairs && p.way_us[8] == 0 && p.way_us[9] == 0, tag + ": the pairs not timed");
    }
    mx_device_free(D);
    mx_format_free(&F);
  }
}

static void check_case(const Csr &A, mx_crux c, mx_mode_request mode, int xhot, const std::vector<int> &ks, std::mt19937_64 &rng) {
  char ctag[96];
  snprintf(ctag, sizeof ctag, " crux (%g,%g) mode %d xhot %d", c.tau_c, c.tau_r, (int)mode, xhot);
  const std::string tag = A.name + ctag;
  mx_format F;
  mx_device *D;
  if (!format_on_device(A, c, mode, MX_COLD_AUTO, xhot, tag, &F, &D)) return;
  if (F.nrows > 0) {
    check_plan_basics(D, tag);
    check_ks(D, F, {2}, rng, tag + " first");
    mx_spmm_plan p2, p3;
    expect(mx_device_spmm_plan(D, 2, &p2) == 0 && p2.timed && mx_device_spmm_plan(D, 3, &p3) == 0 && !p3.timed,
           tag + " plan: k = 3 its own bucket, not timed by k = 2's product");
  }
  check_ks(D, F, ks, rng, tag);
  mx_spmm_plan p;
  if (F.nrows > 0 && mx_device_spmm_plan(D, 2, &p) == 0) expect(p.timed, tag + " plan: k = 2's choice timed by its first product");
  /* every way forced: our kernels on B in place and on row-major panels (2 .. 70: panels of 64, 32,
   * 16, 8, 4 and 2 columns, with padding columns), the SpMVs */
  const std::vector<int> few = g_race ? std::vector<int>{3, 9} : std::vector<int>{2, 3, 9, 17, 41, 70};
  for (mx_spmm_way w : {MX_SPMM_WAY_KERNELS, MX_SPMM_WAY_PANELS, MX_SPMM_WAY_PADDED, MX_SPMM_WAY_PANELS_SPMV, MX_SPMM_WAY_COLUMNS}) {
    expect(mx_device_spmm_set_way(D, w) == 0, tag + " set way: " + mx_device_last_error());
    if (F.nrows > 0 && mx_device_spmm_plan(D, 9, &p) == 0)
      expect(w == MX_SPMM_WAY_COLUMNS ? !p.kernel
                                      : p.kernel && p.cold_panels == (w != MX_SPMM_WAY_KERNELS) && p.padded_panels == (w == MX_SPMM_WAY_PADDED) &&
                                            p.rest_spmv == (w == MX_SPMM_WAY_PANELS_SPMV),
             tag + " plan follows the forced way");
    check_ks(D, F, few, rng, tag + " way " + std::to_string((int)w));
  }
  expect(mx_device_spmm_set_way(D, (mx_spmm_way)4) != 0 && mx_device_spmm_set_way(D, (mx_spmm_way)11) != 0,
         tag + " the hub's way and an unknown way refused");
  expect(mx_device_spmm_set_way(D, MX_SPMM_WAY_AUTO) == 0, tag + " way back to auto");
  mx_device_free(D);
  mx_format_free(&F);
}

int main(int argc, char **argv) {
  std::string dir;
  bool small = false;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261128);
  std::vector<Csr> mats;
  for (const char *spec : {"kron:11:8", "lap2d:40", "chunglu:5000:8:2.1"}) mats.push_back(generated(spec));
  if (!small)
    for (const char *spec : {"kron:15:16", "lap3d:30"}) mats.push_back(generated(spec));
  if (g_race) mats.resize(2);
  for (const Csr &z : test_zoo(true, dir)) mats.push_back(z);
  const std::vector<int> ks = g_race ? std::vector<int>{1, 3, 8, 9} : small ? std::vector<int>{1, 2, 3, 8, 9, 17}
                                                                            : std::vector<int>{1, 2, 3, 5, 8, 9, 16, 17, 33, 64, 256};
  struct {
    mx_crux c;
    mx_mode_request mode;
  } cases[] = {{{0, 0}, MX_MODE_AUTO}, {{1, 1}, MX_MODE_DU}, {{1, 1}, MX_MODE_SE}, {{0.6, 0.4}, MX_MODE_AUTO}};
  for (const Csr &A : mats) {
    const int fail0 = g_fail;
    for (const auto &cs : cases)
      for (int xhot : {0, 64}) {
        if (g_race && xhot) continue;
        check_case(A, cs.c, cs.mode, xhot, ks, rng);
      }
    if (g_race && &A == &mats.front()) check_merge_panels(A, mx_crux{0, 0}, MX_MODE_AUTO, 0, rng); /* its shared memory raced */
    if (g_race)
      for (mx_cold_kernel cold : {MX_COLD_SEGMENT, MX_COLD_MERGE}) check_pairs(A, mx_crux{0, 0}, MX_MODE_AUTO, cold, -1, rng);
    if (!g_race) {
      const Csr Af = few_values(A);
      for (mx_crux c : {mx_crux{0, 0}, mx_crux{0.6, 0.4}}) check_packed(Af, c, rng);
      check_whole(A, mx_crux{0.6, 0.4}, MX_MODE_SE, rng);
      for (mx_crux c : {mx_crux{0, 0}, mx_crux{0.6, 0.4}}) check_rowpat(A, c, rng);
      check_whole(A, mx_crux{1, 1}, MX_MODE_DU, rng);
      check_hub(A, rng);
      check_hub(column_constants(A), rng); /* the hub part scaled per column, without values */
      for (int xhot : {0, 64}) check_merge_panels(A, mx_crux{0, 0}, MX_MODE_AUTO, xhot, rng);
      check_merge_panels(A, mx_crux{0.6, 0.4}, MX_MODE_SE, 0, rng); /* an SE hot part adds on the panel */
      check_k10_ways_timed(A, rng);
      for (mx_cold_kernel cold : {MX_COLD_SEGMENT, MX_COLD_MERGE}) {
        for (const auto &cs : cases) check_pairs(A, cs.c, cs.mode, cold, -1, rng);
        for (mx_crux c : {mx_crux{0, 0}, mx_crux{0.6, 0.4}}) { /* every value encoding */
          check_pairs(one_value(A), c, MX_MODE_AUTO, cold, MX_VAL_DICT0, rng);
          check_pairs(few_values(A), c, MX_MODE_AUTO, cold, MX_VAL_DICT8, rng);
          check_pairs(few_values(A), c, MX_MODE_AUTO, cold, MX_VAL_DICT16, rng);
          check_pairs(column_constants(A), c, MX_MODE_AUTO, cold, MX_VAL_COLCONST, rng);
          check_pairs(A, c, MX_MODE_AUTO, cold, MX_VAL_PLAIN, rng);
        }
      }
      check_pairs_refused(A, rng);
      for (int xhot : {0, 64}) {
        check_pairs_se_hot(unique_values(A), MX_VAL_PLAIN, xhot, rng);
        check_pairs_se_hot(one_value(A), MX_VAL_DICT0, xhot, rng);
        check_pairs_se_hot(column_constants(A), MX_VAL_COLCONST, xhot, rng);
      }
    }
    printf("%-32s %9d x %-9d nnz %-10d %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), g_fail == fail0 ? "ok" : "FAILED");
    fflush(stdout);
  }
  if (!g_race) /* the row-pattern SpMM's lane groups of 2 and 4 (lane groups up to 2 only, and mixed with 1 and 4) */
    for (const Csr &A : {banded_patterns("row patterns g 2", 3000, {40}), banded_patterns("row patterns g 1,2,4", 6000, {20, 40, 64})})
      check_rowpat(A, mx_crux{0, 0}, rng, true);
  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}

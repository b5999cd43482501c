/* test_cuda_build - the GPU builder (mx_device_build) against the host builder, its oracle.
 *
 * For every zoo matrix x crux grid x hot mode request: the device-built format, copied back, equals
 * mx_format_build_borrow's byte for byte (every count and every array: cold CSR, gather maps, hot
 * rows, DU bitmaps/columns/value pointers/values, SE slots); the host format uploaded
 * (mx_device_upload) copies back to the same bytes; SpMV (and y = A x + z) of the two devices is
 * bitwise equal and within 1e-12 of the CPU kernel; after a value refresh still bitwise equal; with
 * the x-hot cache (AUTO and forced) the column codes and the products agree as well. The launch plans
 * the builder makes on the GPU (segment, merge, hot work/split; mx_plans_gpu.cu) equal the host
 * planners' of the upload entry for entry, and the AUTO cold-kernel rule (row statistics on the GPU)
 * picks the upload's kernel. Bad input
 * (invalid crux, column out of range, decreasing rowptr, unknown mode) is refused with a message.
 * The process's warm-up thread (mx_device_warm_start) runs beside the first of these builds.
 * Usage: test_cuda_build [small|race] [MATRICES_DIR]. Exit: 0 pass, 1 fail, 77 no GPU. */
#include "cuda_test_util.h"
#include "cuda/mx_device_impl.h" /* the launch plans, compared field by field */

static bool g_small = false; /* the quick set for compute-sanitizer: fewer cruxes and modes */

/* a == b for n T's, both NULL (n = 0 too) or both present. */
template <typename T>
static bool same_array(const T *a, const T *b, size_t n) {
  if (n == 0) return true;
  if (!a || !b) return a == b;
  return memcmp(a, b, n * sizeof(T)) == 0;
}

/* Every count and array of the device copy G equals the host format F (with cold entries: F's
 * cold_src NULL, i.e. borrowed, iff G's is NULL, i.e. identity). */
static void expect_same_format(const mx_format &F, const mx_format &G, const std::string &tag) {
  const bool counts = F.nrows == G.nrows && F.ncols == G.ncols && F.nnz == G.nnz && F.crux.tau_c == G.crux.tau_c &&
                      F.crux.tau_r == G.crux.tau_r && F.hot_ncols == G.hot_ncols && F.hot_nrows == G.hot_nrows &&
                      F.hot_nnz == G.hot_nnz && F.nchunks == G.nchunks && F.mode == G.mode && F.cold_nnz == G.cold_nnz &&
                      (F.mode != MX_HOT_DU || F.du_nblocks == G.du_nblocks) && (F.mode != MX_HOT_SE || F.se_nslots == G.se_nslots);
  expect(counts, tag + " counts");
  if (!counts) return;
  const size_t m1 = (size_t)F.nrows + 1, c = (size_t)F.cold_nnz, q = F.mode != MX_HOT_NONE ? (size_t)F.nchunks + 1 : 0;
  expect(same_array(F.cold_rowptr, G.cold_rowptr, m1), tag + " cold_rowptr");
  expect(same_array(F.cold_col, G.cold_col, c), tag + " cold_col");
  expect(same_array(F.cold_val, G.cold_val, c), tag + " cold_val");
  /* an empty cold part has no map to compare (the host keeps a 1-entry allocation, the device none) */
  expect(c == 0 || ((F.cold_src == nullptr) == (G.cold_src == nullptr) && same_array(F.cold_src, G.cold_src, F.cold_src ? c : 0)),
         tag + " cold_src");
  if (F.mode == MX_HOT_NONE) return;
  expect(same_array(F.hot_row, G.hot_row, (size_t)F.nchunks * MX_CHUNK_ROWS), tag + " hot_row");
  if (F.mode == MX_HOT_DU) {
    const size_t nb = (size_t)F.du_nblocks;
    expect(same_array(F.du_chunkptr, G.du_chunkptr, q), tag + " du_chunkptr");
    expect(same_array(F.du_bitmap, G.du_bitmap, nb), tag + " du_bitmap");
    expect(same_array(F.du_col, G.du_col, nb * MX_BLOCK_COLS), tag + " du_col");
    expect(same_array(F.du_valptr, G.du_valptr, nb + 1), tag + " du_valptr");
    expect(same_array(F.du_val, G.du_val, (size_t)F.hot_nnz), tag + " du_val");
    expect(same_array(F.hot_src, G.hot_src, (size_t)F.hot_nnz), tag + " hot_src");
  } else {
    const size_t ns = (size_t)F.se_nslots;
    expect(same_array(F.se_ptr, G.se_ptr, q), tag + " se_ptr");
    expect(same_array(F.se_col, G.se_col, ns), tag + " se_col");
    expect(same_array(F.se_val, G.se_val, ns), tag + " se_val");
    expect(same_array(F.hot_src, G.hot_src, ns), tag + " hot_src");
  }
}

/* count T's of device array p on the host (empty for count 0) */
template <typename T>
static std::vector<T> to_host(const T *p, int count) {
  std::vector<T> h(count > 0 ? (size_t)count : 0);
  if (!h.empty() && cudaMemcpy(h.data(), p, h.size() * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
  return h;
}

template <typename T>
static bool same_plan(const T *a, int na, const T *b, int nb) {
  if (na != nb) return false;
  const std::vector<T> ha = to_host(a, na), hb = to_host(b, nb);
  return ha.size() == (size_t)na && hb.size() == (size_t)nb && same_array(ha.data(), hb.data(), ha.size());
}

/* The plans of Db (made on the GPU) equal Du's (made on the host), for the cold kernel both run. */
static void expect_same_plans(const mx_device *Db, const mx_device *Du, const std::string &tag) {
  expect(Db->cold == Du->cold, tag + " same cold kernel");
  if (Db->cold == MX_COLD_SEGMENT) expect(same_plan(Db->seg_plan, Db->seg_nblocks, Du->seg_plan, Du->seg_nblocks), tag + " segment plan");
  if (Db->cold == MX_COLD_MERGE) {
    expect(same_plan(Db->merge_coord, Db->merge_ntiles + 1, Du->merge_coord, Du->merge_ntiles + 1), tag + " merge plan");
    expect((Db->carry_row != nullptr) == (Du->carry_row != nullptr) && (Db->carry_slot != nullptr) == (Du->carry_slot != nullptr),
           tag + " merge carries");
  }
  expect(Db->hot_nslots == Du->hot_nslots, tag + " hot slots");
  expect(same_plan(Db->hot_work, Db->hot_nwork, Du->hot_work, Du->hot_nwork), tag + " hot work plan");
  expect(same_plan(Db->hot_split, Db->hot_nsplit, Du->hot_split, Du->hot_nsplit), tag + " hot split plan");
}

/* The merge plan and the AUTO rule: built (GPU planner, GPU row statistics) vs uploaded (host). */
static void check_cold_planners(const mx_csr &a, const mx_format &F, mx_crux c, mx_mode_request md, const std::string &tag) {
  for (mx_cold_kernel k : {MX_COLD_MERGE, MX_COLD_AUTO}) {
    const std::string t = tag + (k == MX_COLD_MERGE ? " merge" : " auto");
    mx_format shell;
    mx_device *Db = nullptr, *Du = nullptr;
    if (mx_device_build(&a, c, md, k, 0, &shell, &Db) || mx_device_upload_xhot(&F, k, 0, &Du))
      expect(false, t + " build/upload: " + mx_device_last_error());
    else
      expect_same_plans(Db, Du, t);
    mx_device_free(Db);
    mx_device_free(Du);
  }
}

/* y = D x (+ z on request) on host vectors, through the device staging buffers. */
static std::vector<double> product(mx_device *D, const std::vector<double> &x, const std::vector<double> *z, size_t m) {
  std::vector<double> y(m, NAN);
  if (mx_device_spmv_host(D, x.data(), z ? z->data() : nullptr, y.data(), nullptr))
    expect(false, std::string("spmv_host: ") + mx_device_last_error());
  return y;
}

static bool bitwise_equal(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && (a.empty() || memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

/* Built and uploaded devices (same x-hot request) give bitwise equal products, also after a refresh;
 * the built one matches the CPU kernel of F. */
static void expect_same_products(const Csr &A, mx_format &F, mx_device *Db, mx_device *Du, const std::string &tag,
                                 std::mt19937_64 &rng) {
  const size_t m = A.nrows, n = A.ncols;
  const std::vector<double> x = rand_vec(n, rng), z = rand_vec(m, rng);
  std::vector<double> ref(m);
  mx_spmv(&F, x.data(), ref.data());
  const std::vector<double> yb = product(Db, x, nullptr, m), yu = product(Du, x, nullptr, m);
  expect_close(yb, ref, tag + " built y = A x");
  expect(bitwise_equal(yb, yu), tag + " built == uploaded (bitwise)");
  expect(bitwise_equal(product(Db, x, &z, m), product(Du, x, &z, m)), tag + " y = A x + z built == uploaded");
  std::vector<double> val2 = rand_vec(A.val.size(), rng);
  if (mx_device_refresh_values(Db, val2.data(), nullptr) || mx_device_refresh_values(Du, val2.data(), nullptr)) {
    expect(false, tag + " refresh: " + mx_device_last_error());
    return;
  }
  expect(bitwise_equal(product(Db, x, nullptr, m), product(Du, x, nullptr, m)), tag + " after refresh built == uploaded");
}

/* One (matrix, crux, mode) case: format equality (x-hot off), products, and x-hot AUTO/forced. */
static void check_case(const Csr &A, mx_crux c, mx_mode_request md, const std::string &tag, std::mt19937_64 &rng) {
  const mx_csr a = A.view();
  mx_format F;
  if (mx_format_build_borrow(&a, c, md, &F) != MX_OK) {
    expect(false, tag + " host build failed");
    return;
  }
  for (int xh : {0, MX_XHOT_AUTO, 1 + A.ncols / 8}) {
    if (g_small && xh == MX_XHOT_AUTO) continue; /* compute-sanitizer run: forced x-hot covers the code path */
    const std::string t = tag + " xhot " + std::to_string(xh);
    mx_format shell, G, Gu;
    mx_device *Db = nullptr, *Du = nullptr;
    if (mx_device_build(&a, c, md, MX_COLD_SEGMENT, xh, &shell, &Db)) {
      expect(false, t + " build: " + mx_device_last_error());
      continue;
    }
    if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, xh, &Du)) {
      expect(false, t + " upload: " + mx_device_last_error());
      mx_device_free(Db);
      continue;
    }
    expect(mx_device_xhot_cols(Db) == mx_device_xhot_cols(Du), t + " same x-hot columns");
    expect_same_plans(Db, Du, t);
    expect(mx_device_build_peak_bytes(Db) >= mx_device_bytes(Db), t + " peak >= held");
    if (mx_device_download(Db, &shell, &G) == 0 && mx_device_download(Du, &F, &Gu) == 0) {
      if (xh == 0) expect_same_format(F, G, t + " built");
      expect_same_format(Gu, G, t + " built vs uploaded");
      mx_format_free(&G);
      mx_format_free(&Gu);
    } else {
      expect(false, t + " download: " + mx_device_last_error());
    }
    expect(mx_format_bytes(&shell) == mx_format_bytes(&F), t + " shell bytes");
    expect_same_products(A, F, Db, Du, t, rng);
    mx_device_free(Db);
    mx_device_free(Du);
  }
  check_cold_planners(a, F, c, md, tag);
  mx_format_free(&F);
}

/* Bad input is refused with a message and leaves no device behind. */
static void check_refusals() {
  const int32_t rp[] = {0, 2, 3}, rp_bad[] = {0, 2, 1}, col[] = {0, 1, 1}, col_bad[] = {0, 5, 1};
  const double val[] = {1, 2, 3};
  const mx_csr good = {2, 2, rp, col, val}, bad_col = {2, 2, rp, col_bad, val}, bad_rp = {2, 2, rp_bad, col, val};
  struct {
    const mx_csr *A;
    mx_crux c;
    mx_mode_request md;
    const char *what;
  } cases[] = {{&good, {0.5, 0.7}, MX_MODE_AUTO, "tau_r > tau_c is clamped, not refused"},
               {&good, {1.5, 0}, MX_MODE_AUTO, "tau_c > 1"},
               {&good, {NAN, 0}, MX_MODE_AUTO, "NaN crux"},
               {&bad_col, {1, 1}, MX_MODE_AUTO, "column out of range"},
               {&bad_col, {0, 0}, MX_MODE_AUTO, "column out of range at (0,0)"},
               {&bad_rp, {1, 1}, MX_MODE_AUTO, "decreasing rowptr"},
               {&good, {1, 1}, (mx_mode_request)7, "unknown mode"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    mx_format shell;
    mx_device *D = (mx_device *)&shell; /* must come back NULL on failure */
    const int rc = mx_device_build(cases[i].A, cases[i].c, cases[i].md, MX_COLD_SEGMENT, 0, &shell, &D);
    if (i == 0) {
      expect(rc == 0 && D && shell.crux.tau_r == 0.5, std::string("accepts: ") + cases[i].what);
      mx_device_free(rc == 0 ? D : nullptr);
      continue;
    }
    expect(rc != 0 && D == nullptr && mx_device_last_error()[0] != '\0', std::string("refuses: ") + cases[i].what);
    printf("refused (%s): %s\n", cases[i].what, mx_device_last_error());
  }
}

int main(int argc, char **argv) {
  bool &small = g_small;
  std::string dir;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261123);
  /* the warm-up (mx_warm.cu) runs beside the first builds, which wait for it: every check below
   * (and compute-sanitizer's, in the _memcheck and _racecheck runs) covers it; a second start is
   * a no-op and waiting twice returns */
  mx_device_warm_start();
  mx_device_warm_start();
  static const mx_crux grid[] = {{0, 0}, {1, 1}, {0.7, 0.5}, {1, 0}, {0.3, 0.1}, {0.5, 0.3}, {0.9, 0.8}, {0.6, 0.6}};
  static const mx_mode_request modes[] = {MX_MODE_AUTO, MX_MODE_DU, MX_MODE_SE};
  check_refusals();
  mx_device_warm_wait();
  mx_device_warm_wait();
  const size_t ngrid = small ? 3 : sizeof grid / sizeof grid[0], nmodes = small ? 2 : 3;
  for (const Csr &A : test_zoo(small, dir)) {
    const int fail0 = g_fail;
    int ncase = 0;
    for (size_t gi = 0; gi < ngrid; ++gi)
      for (size_t mi = 0; mi < nmodes; ++mi) {
        const mx_crux &c = grid[gi];
        const mx_mode_request md = modes[small ? mi + 1 : mi];
        char tag[160];
        snprintf(tag, sizeof tag, "%s crux(%g,%g) mode %d", A.name.c_str(), c.tau_c, c.tau_r, (int)md);
        check_case(A, c, md, tag, rng);
        ++ncase;
      }
    printf("%-28s %9d x %-9d nnz %-10d cases %3d  %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), ncase,
           g_fail == fail0 ? "ok" : "FAILED");
    fflush(stdout);
    mx_device_release_pools(); /* the next matrix's builds make the scratch pool again */
  }
  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}

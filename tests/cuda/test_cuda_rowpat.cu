/* test_cuda_rowpat - the row-pattern form of the cold CSR on the GPU (mx_device_compress with
 * MX_FORM_ROWPAT / MX_FORM_AUTO, src/cuda/mx_cold_rowpat.cu) against the host encoder
 * (mx_cold_rowpat_build) and the plain segment kernel.
 *
 * For stencils (5-, 7-, 27-point, a 64-wide band whose rows are summed by lane groups of 4), banded
 * and graph matrices, the zoo, value families (as generated, ones, few values, signed zeros / NaN /
 * inf) and cruxes (0,0) and one with a hot part:
 *   - forced row patterns are refused exactly where the host encoder refuses the cold CSR (D then
 *     holds nothing and its products are unchanged);
 *   - where held, the form built on the GPU, copied back, equals the host's byte for byte, on a
 *     device uploaded from the host format and on one built on the GPU (mx_device_build);
 *   - y = A x, y = A x + z and y = A x + y in place are bitwise equal to the plain segment kernel
 *     (NaN payloads aside: see bitwise_equal) and within 1e-12 of the CPU kernel (finite values);
 *   - mx_device_compress_info reports the form (patterns, entries, id bytes, mx_cold_rowpat_bytes);
 *   - AUTO keeps the form exactly where the host encoder holds the matrix in fewer bytes than
 *     mx_pack_bytes_floor, else packs; its products are bitwise the plain kernel's either way;
 *   - a value refresh to scaled values keeps the form (equal to the host form of the new values), to
 *     unique values loses it (rowpat_lost, a pack or plain takes over): products bitwise equal to a
 *     plain device refreshed alike;
 *   - the merge kernel never takes the form (forced: refused); switching D to merge drops it;
 *     compress {plain, plain} removes it.
 * Usage: test_cuda_rowpat [small|race] [MATRICES_DIR]. Exit: 0 pass, 1 fail, 77 no GPU. */
#include "cuda_test_products.h"


/* D holds the row-pattern form and it equals R byte for byte */
static void expect_device_rowpat(mx_device *D, const mx_cold_rowpat &R, const std::string &tag) {
  mx_cold_rowpat G;
  if (mx_device_download_rowpat(D, &G)) {
    expect(false, tag + " download: " + mx_device_last_error());
    return;
  }
  const bool counts = G.nrows == R.nrows && G.ncols == R.ncols && G.nnz == R.nnz && G.npat == R.npat && G.nent == R.nent &&
                      G.id_bytes == R.id_bytes;
  expect(counts, tag + " form counts (host " + std::to_string(R.npat) + " patterns, gpu " + std::to_string(G.npat) + ")");
  if (counts) {
    expect(R.id_bytes == 1 ? same_array(R.id8, G.id8, (size_t)R.nrows) : same_array(R.id16, G.id16, (size_t)R.nrows), tag + " ids");
    expect(same_array(R.pat_ptr, G.pat_ptr, (size_t)R.npat + 1) && same_array(R.pat_off, G.pat_off, (size_t)R.nent) &&
               same_array(R.pat_val, G.pat_val, (size_t)R.nent),
           tag + " patterns");
  }
  mx_cold_rowpat_free(&G);
}

/* ---- matrices and values ------------------------------------------------------------------------- */

enum Family { KEEP, ONES, FEW, SPECIAL };
static const char *family_name[] = {"as-is", "ones", "few", "special"};

static Csr with_values(const Csr &A0, Family f, uint64_t seed) {
  Csr A = A0;
  A.name = A0.name + " " + family_name[f];
  std::mt19937_64 rng(seed);
  uint64_t nan1 = 0x7ff8000000000001ull, nan2 = 0xfff4000000000abcull;
  double special[7] = {0.0, -0.0, 0, 0, INFINITY, -INFINITY, 1.0};
  memcpy(&special[2], &nan1, 8);
  memcpy(&special[3], &nan2, 8);
  for (size_t p = 0; p < A.val.size(); ++p) {
    if (f == ONES) A.val[p] = 1.0;
    if (f == FEW) A.val[p] = (double)(rng() % 3) - 1.0;
    if (f == SPECIAL) A.val[p] = special[(A.col[p] + 3 * (p > 0 ? A.col[p - 1] : 0)) % 7]; /* repeats along a stencil */
  }
  return A;
}

/* n rows, row i = columns i-w/2 .. i+w/2-1 clipped to [0, n), value 2 on the diagonal, -1 elsewhere:
 * interior rows of w entries (w = 64: lane groups of 4 in the segment kernel), a few dozen patterns */
static Csr band(int32_t n, int32_t w) {
  Csr A;
  A.name = "band-" + std::to_string(w) + " " + std::to_string(n);
  A.nrows = A.ncols = n;
  A.rowptr.push_back(0);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t c = std::max(0, i - w / 2); c < std::min(n, i + w / 2); ++c) {
      A.col.push_back(c);
      A.val.push_back(c == i ? 2.0 : -1.0);
    }
    A.rowptr.push_back((int32_t)A.col.size());
  }
  return A;
}

/* ---- one case ------------------------------------------------------------------------------------ */

static const mx_pack_request forced = {MX_PACK_AUTO, MX_PACK_AUTO, MX_PACK_AUTO, MX_FORM_ROWPAT};

/* the cold CSR of F with values nv (of the whole input) through F's gather map */
static Csr cold_with(const mx_format &F, const std::vector<double> &nv) {
  Csr C;
  C.nrows = F.nrows;
  C.ncols = F.ncols;
  C.rowptr.assign(F.cold_rowptr, F.cold_rowptr + F.nrows + 1);
  C.col.assign(F.cold_col, F.cold_col + F.cold_nnz);
  C.val.resize(F.cold_nnz);
  for (int32_t p = 0; p < F.cold_nnz; ++p) C.val[p] = nv[F.cold_src ? F.cold_src[p] : p];
  return C;
}

/* D (the form, request rq) and its plain twin Dp refreshed to values nv: the form of the new values
 * where the host holds them, else lost; products bitwise equal to the twin's */
static void check_refresh(const Csr &A, const mx_format &F, mx_device *D, const mx_pack_request &rq, const std::vector<double> &nv,
                          const std::string &tag, std::mt19937_64 &rng) {
  mx_device *Dp = nullptr;
  if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 0, &Dp)) {
    expect(false, tag + " plain twin: " + mx_device_last_error());
    return;
  }
  if (mx_device_refresh_values(D, nv.data(), nullptr) || mx_device_refresh_values(Dp, nv.data(), nullptr)) {
    expect(false, tag + " refresh: " + mx_device_last_error());
    mx_device_free(Dp);
    return;
  }
  const Csr C = cold_with(F, nv);
  const mx_csr cv = C.view();
  mx_cold_rowpat R;
  const bool held = mx_cold_rowpat_build(&cv, &R) == MX_OK;
  const bool pays = held && (rq.form == MX_FORM_ROWPAT || mx_rowpat_pays(R.nrows, R.nnz, R.npat, R.nent));
  mx_device_pack_info info;
  mx_device_compress_info(D, &info);
  expect(info.rowpat == (int)pays && info.rowpat_lost == (int)!pays, tag + " form kept exactly where the new values allow");
  if (pays) expect_device_rowpat(D, R, tag);
  if (held) mx_cold_rowpat_free(&R);
  const std::vector<double> x = rand_vec(A.ncols, rng), z = rand_vec(A.nrows, rng);
  expect_same_products(products(D, x, z, A.nrows), products(Dp, x, z, A.nrows), tag);
  mx_device_free(Dp);
}

static void check_matrix(const Csr &A, mx_crux c, bool finite, std::mt19937_64 &rng) {
  char ctag[64];
  snprintf(ctag, sizeof ctag, " crux(%g,%g)", c.tau_c, c.tau_r);
  const std::string tag = A.name + ctag;
  const mx_csr a = A.view();
  mx_format F;
  if (mx_format_build_borrow(&a, c, MX_MODE_AUTO, &F) != MX_OK) {
    expect(false, tag + " host build");
    return;
  }
  const mx_csr cv = {F.nrows, F.ncols, F.cold_rowptr, F.cold_col, F.cold_val};
  mx_cold_rowpat R;
  const bool held = mx_cold_rowpat_build(&cv, &R) == MX_OK;
  const bool pays = held && mx_rowpat_pays(R.nrows, R.nnz, R.npat, R.nent);
  const size_t m = A.nrows;
  const std::vector<double> x = rand_vec(A.ncols, rng), z = rand_vec(m, rng);
  std::vector<double> ref(m);
  mx_spmv(&F, x.data(), ref.data());
  mx_device *D = nullptr;
  if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 0, &D)) {
    expect(false, tag + " upload: " + mx_device_last_error());
    if (held) mx_cold_rowpat_free(&R);
    mx_format_free(&F);
    return;
  }
  const Products plain = products(D, x, z, m);
  const size_t bytes0 = mx_device_bytes(D);
  mx_device_pack_info info;
  /* forced */
  const int rc = mx_device_compress(D, &forced);
  mx_device_compress_info(D, &info);
  if (!held) {
    expect(rc != 0 && !info.rowpat && !info.packed && mx_device_bytes(D) == bytes0, tag + " forced row patterns refused");
  } else {
    expect(rc == 0, tag + " forced row patterns: " + (rc ? mx_device_last_error() : ""));
    expect_device_rowpat(D, R, tag + " uploaded");
    expect(info.rowpat && info.packed && info.in_use && info.npat == R.npat && info.nent == R.nent && info.id_bytes == R.id_bytes &&
               info.bytes == mx_cold_rowpat_bytes(&R) && info.plain_bytes == mx_csr_bytes(F.nrows, F.cold_nnz),
           tag + " info");
    expect(mx_device_bytes(D) > bytes0, tag + " bytes held include the form");
  }
  const Products got = products(D, x, z, m);
  expect_same_products(got, plain, tag + (held ? " forced" : " refused"));
  if (finite && all_finite(ref)) expect_close(got.y, ref, tag + " vs CPU kernel");
  /* AUTO: the form exactly where it pays, else a pack */
  const mx_pack_request autoq = mx_pack_request_of(MX_COMPRESS_AUTO);
  expect(mx_device_compress(D, &autoq) == 0 && mx_device_compress_info(D, &info) == 0, tag + " auto: " + mx_device_last_error());
  expect(info.rowpat == (int)pays, tag + " auto keeps the form exactly where it pays");
  expect_same_products(products(D, x, z, m), plain, tag + " auto");
  /* compress off removes it; leaving the segment kernel drops it */
  const mx_pack_request off = mx_pack_request_of(MX_COMPRESS_OFF);
  if (held) {
    expect(mx_device_compress(D, &forced) == 0 && mx_device_compress(D, &off) == 0 && mx_device_compress_info(D, &info) == 0 &&
               !info.rowpat && mx_device_bytes(D) == bytes0,
           tag + " off removes the form");
    expect(mx_device_compress(D, &forced) == 0 && mx_device_set_cold_kernel(D, MX_COLD_MERGE) == 0 &&
               mx_device_compress_info(D, &info) == 0 && !info.rowpat,
           tag + " the merge kernel drops the form");
    if (finite && all_finite(ref)) expect_close(product(D, x, nullptr, m), ref, tag + " merge after the form");
    expect(mx_device_compress(D, &forced) != 0, tag + " forced row patterns refused under the merge kernel");
    expect(mx_device_set_cold_kernel(D, MX_COLD_SEGMENT) == 0, tag + " back to the segment kernel");
  }
  /* last: the refresh paths change D's values */
  if (held && A.nnz() > 0 && !g_race) {
    std::vector<double> scaled(A.val), unique(A.val);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t p = 0; p < scaled.size(); ++p) scaled[p] *= 0.5, unique[p] = u(rng) + 1e-9 * (double)p;
    expect(mx_device_compress(D, &forced) == 0, tag + " forced again");
    check_refresh(A, F, D, forced, scaled, tag + " refresh scaled", rng);
    check_refresh(A, F, D, forced, unique, tag + " refresh unique", rng);
  }
  mx_device_free(D);
  /* the GPU-built device: the same bytes, the same products */
  if (held) {
    mx_format shell;
    mx_device *Db = nullptr;
    if (mx_device_build(&a, c, MX_MODE_AUTO, MX_COLD_SEGMENT, 0, &shell, &Db) || mx_device_compress(Db, &forced)) {
      expect(false, tag + " GPU build + compress: " + mx_device_last_error());
    } else {
      expect_device_rowpat(Db, R, tag + " built");
      expect_same_products(products(Db, x, z, m), plain, tag + " built");
    }
    mx_device_free(Db);
    mx_cold_rowpat_free(&R);
  }
  mx_format_free(&F);
}

int main(int argc, char **argv) {
  std::string dir;
  bool small = false;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261126);
  std::vector<Csr> mats;
  for (const char *spec : {"lap2d:60", "lap3d:14", "lap3d27:10", "band:3000:2", "rgg:12", "kron:11:8"}) mats.push_back(generated(spec));
  mats.push_back(band(3000, 64));
  mats.push_back(band(2500, 66)); /* interior rows of 66 entries: longer than the form holds */
  if (!small)
    for (const char *spec : {"lap2d:700", "lap3d:60", "lap3d27:40", "rgg:17"}) mats.push_back(generated(spec));
  if (g_race) mats.resize(3);
  for (const Csr &z : test_zoo(true, dir)) mats.push_back(z);
  static const mx_crux cruxes[] = {{0, 0}, {0.5, 0.3}};
  for (const Csr &A0 : mats) {
    for (int f = KEEP; f <= SPECIAL; ++f) {
      if ((small || A0.nnz() > 1000000) && f != KEEP && f != SPECIAL) continue;
      const Csr A = with_values(A0, (Family)f, 91 + f);
      const int fail0 = g_fail;
      for (const mx_crux &c : cruxes) check_matrix(A, c, f != SPECIAL, rng);
      printf("%-40s %9d x %-9d nnz %-10d %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), g_fail == fail0 ? "ok" : "FAILED");
      fflush(stdout);
    }
  }
  printf("%d checks, %d failed; %ld entries of y differed only in their NaN payload\n", g_checks, g_fail, g_nan_payload_diffs);
  return g_fail ? 1 : 0;
}

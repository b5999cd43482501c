/* test_cuda_cold_pack - the packed cold CSR on the GPU (mx_device_compress) against the host encoder
 * and the uncompressed segment kernel.
 *
 * For every matrix (the zoo, stencils, graphs) x value family (as generated, few distinct values,
 * all ones, PageRank transition = column-constant, unique, signed zeros / NaN / inf bit patterns) x
 * crux ((0,0) and one with a hot part) x request (AUTO and every encoding forced, row pointers
 * plain or 16-bit offsets):
 *   - a forced encoding that cannot hold the matrix is refused and leaves D unpacked;
 *   - the pack built on the GPU, copied back, equals mx_cold_pack_build's byte for byte, on a
 *     device uploaded from the host format and on one built on the GPU (mx_device_build);
 *   - y = A x and y = A x + z (and y = A x + y in place) are bitwise equal to the same device before
 *     compression (the plain segment kernel), with every bitwise packed kernel variant (blocks per
 *     SM, vectorized staging), and within 1e-12 of the CPU kernel (finite values);
 *   - mx_device_compress_info reports mx_cold_pack_bytes of the host pack; bytes held grow by it;
 *   - after a value refresh (to unique values: a forced or AUTO dictionary falls back to plain; to
 *     few values) the pack equals the host pack refreshed through the gather map, fell_back agrees,
 *     and products stay bitwise equal to a plain device refreshed alike;
 *   - compress {plain, plain} removes the pack; x-hot coding the cold CSR keeps it off;
 *   - the plain arrays the pack replaces (mx_device_pack_release_plain): freed (bytes held fall by
 *     exactly the packed parts' plain arrays), products still bitwise the plain kernel's, a download
 *     refused; decoded back bit for bit by the restore and by every entry point that reads them (a
 *     cold-kernel switch, the refresh paths above, compress off, the merge kernel's pack).
 * Usage: test_cuda_cold_pack [small|race] [MATRICES_DIR]. Exit: 0 pass, 1 fail, 77 no GPU. */
#include "cuda_test_products.h"

/* the packed segment kernel's variants (src/cuda/mx_cold_pack_dev.h) besides the default 0 that
 * must give the same bits: 1, 2 (blocks per SM), 6, 7 (strided, vectorized staging everywhere) */
extern "C" int mx_cold_pack_set_variant(int v);
extern "C" int mx_cold_pack_set_merge(int on);
static const int bitwise_variants[] = {1, 2, 6, 7};

static bool g_small = false;

/* Every field and array of the GPU pack G equals the host pack P. */
static void expect_same_pack(const mx_cold_pack &P, const mx_cold_pack &G, const std::string &tag) {
  const bool counts = P.nrows == G.nrows && P.ncols == G.ncols && P.nnz == G.nnz && P.val_enc == G.val_enc &&
                      P.idx_enc == G.idx_enc && P.row_enc == G.row_enc && P.ndict == G.ndict && P.nseg == G.nseg &&
                      P.nrchunk == G.nrchunk;
  char buf[200];
  snprintf(buf, sizeof buf, " (host %s/%s/%s ndict %d, gpu %s/%s/%s ndict %d)", mx_val_enc_name(P.val_enc),
           mx_idx_enc_name(P.idx_enc), mx_row_enc_name(P.row_enc), P.ndict, mx_val_enc_name(G.val_enc),
           mx_idx_enc_name(G.idx_enc), mx_row_enc_name(G.row_enc), G.ndict);
  expect(counts, tag + " pack counts" + buf);
  if (!counts) return;
  const size_t n = (size_t)P.nnz;
  if (P.row_enc == MX_ROW_PLAIN) expect(same_array(P.rowptr, G.rowptr, (size_t)P.nrows + 1), tag + " pack rowptr");
  if (P.row_enc == MX_ROW_OFF16)
    expect(same_array(P.row_base, G.row_base, (size_t)P.nrchunk) && same_array(P.row_off, G.row_off, (size_t)P.nrows + 1),
           tag + " pack row chunk bases and offsets");
  expect(same_array(P.dict, G.dict, (size_t)P.ndict), tag + " pack dictionary (bits)");
  if (P.val_enc == MX_VAL_PLAIN) expect(same_array(P.val, G.val, n), tag + " pack plain values (bits)");
  if (P.val_enc == MX_VAL_DICT8) expect(same_array(P.code8, G.code8, n), tag + " pack 1-byte codes");
  if (P.val_enc == MX_VAL_DICT16) expect(same_array(P.code16, G.code16, n), tag + " pack 2-byte codes");
  if (P.idx_enc == MX_IDX_PLAIN) expect(same_array(P.col, G.col, n), tag + " pack plain columns");
  if (P.idx_enc != MX_IDX_PLAIN) expect(same_array(P.seg_base, G.seg_base, (size_t)P.nseg), tag + " pack segment bases");
  if (P.idx_enc == MX_IDX_DELTA8) expect(same_array(P.delta8, G.delta8, n), tag + " pack 1-byte deltas");
  if (P.idx_enc == MX_IDX_DELTA16) expect(same_array(P.delta16, G.delta16, n), tag + " pack 2-byte deltas");
}

static void expect_device_pack(mx_device *D, const mx_cold_pack &P, const std::string &tag) {
  mx_cold_pack G;
  if (mx_device_download_pack(D, &G)) {
    expect(false, tag + " download pack: " + mx_device_last_error());
    return;
  }
  expect_same_pack(P, G, tag);
  mx_cold_pack_free(&G);
}

/* ---- value families ----------------------------------------------------------------------------- */

enum Family { KEEP, FEW, ONES, PAGERANK, UNIQUE, SPECIAL };
static const char *family_name[] = {"as-is", "few", "ones", "pagerank", "unique", "special"};

static Csr with_values(const Csr &A0, Family f, uint64_t seed) {
  Csr A = A0;
  A.name = A0.name + " " + family_name[f];
  std::mt19937_64 rng(seed);
  std::vector<int32_t> cnt((size_t)A.ncols + 1, 0);
  for (int32_t c : A.col) cnt[c]++;
  uint64_t nan1 = 0x7ff8000000000001ull, nan2 = 0xfff4000000000abcull;
  double special[7] = {0.0, -0.0, 0, 0, INFINITY, -INFINITY, 1.0};
  memcpy(&special[2], &nan1, 8);
  memcpy(&special[3], &nan2, 8);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t p = 0; p < A.val.size(); ++p) {
    switch (f) {
      case FEW: A.val[p] = (double)(rng() % 5) - 2.0; break;
      case ONES: A.val[p] = 1.0; break;
      case PAGERANK: A.val[p] = 1.0 / cnt[A.col[p]]; break;
      case UNIQUE: A.val[p] = u(rng) + 1e-9 * (double)p; break;
      case SPECIAL: A.val[p] = special[rng() % 7]; break;
      default: break;
    }
  }
  return A;
}

/* ---- one case ------------------------------------------------------------------------------------ */

/* the first 3 in the small and race sets (AUTO's plain row pointers and forced 16-bit row offsets
 * beside packed parts); refresh paths for the first 5 */
#define A_ MX_PACK_AUTO
static const mx_pack_request requests[] = {{A_, A_, A_},
                                           {A_, A_, MX_ROW_OFF16},
                                           {MX_VAL_DICT0, A_, A_},
                                           {MX_VAL_DICT8, A_, A_},
                                           {MX_VAL_DICT16, A_, MX_ROW_OFF16},
                                           {MX_VAL_COLCONST, A_, A_},
                                           {MX_VAL_PLAIN, MX_IDX_DELTA8, A_},
                                           {A_, MX_IDX_DELTA16, A_},
                                           {MX_VAL_DICT8, MX_IDX_PLAIN, A_},
                                           {MX_VAL_PLAIN, MX_IDX_PLAIN, MX_ROW_OFF16}};
#undef A_

/* Refresh D (packed), its plain twin Dp and the host pack H that mirrors D with new values nv (of
 * the whole input, through F's gather map); then H and D's pack must be equal byte for byte. */
static void check_refresh(const Csr &A, const mx_format &F, mx_device *D, mx_device *Dp, mx_cold_pack &H,
                          const std::vector<double> &nv, const std::string &tag, std::mt19937_64 &rng) {
  if (mx_cold_pack_refresh(&H, nv.data(), F.cold_src) != MX_OK) expect(false, tag + " host refresh");
  if (mx_device_pack_release_plain(D)) expect(false, tag + " release before the refresh: " + mx_device_last_error()); /* the refresh decodes them back */
  if (mx_device_refresh_values(D, nv.data(), nullptr) || mx_device_refresh_values(Dp, nv.data(), nullptr)) {
    expect(false, tag + " device refresh: " + mx_device_last_error());
    return;
  }
  expect_device_pack(D, H, tag);
  mx_device_pack_info info;
  mx_device_compress_info(D, &info);
  expect(info.fell_back == H.fell_back && info.prev_val_enc == H.prev_val_enc, tag + " fell_back / previous encoding");
  const std::vector<double> x = rand_vec(A.ncols, rng), z = rand_vec(A.nrows, rng);
  expect_same_products(products(D, x, z, A.nrows), products(Dp, x, z, A.nrows), tag);
}

/* The plain arrays of D's packed parts released: bytes, products (bitwise plain, every bitwise
 * variant), download refused; restored: the host format's cold CSR bit for bit, bytes as before;
 * released again, then a cold-kernel switch (merge and back) decodes them first. D is left released. */
static void check_release(mx_device *D, const mx_format &F, const mx_cold_pack &P, const Products &plain,
                          const std::vector<double> &x, const std::vector<double> &z, size_t m, const std::string &tag) {
  const size_t n = (size_t)F.cold_nnz;
  const size_t want = n * ((P.idx_enc != MX_IDX_PLAIN ? sizeof(int) : 0) + (P.val_enc != MX_VAL_PLAIN ? sizeof(double) : 0));
  const size_t b0 = mx_device_bytes(D);
  const int rc = mx_device_pack_release_plain(D);
  expect(rc == 0, tag + " release: " + (rc ? mx_device_last_error() : ""));
  expect(mx_device_pack_plain_released(D) == want && mx_device_bytes(D) == b0 - want, tag + " release frees the packed parts' plain arrays");
  expect_same_products(products(D, x, z, m), plain, tag + " released");
  for (int v : bitwise_variants) {
    const int old = mx_cold_pack_set_variant(v);
    expect_same_products(products(D, x, z, m), plain, tag + " released, variant " + std::to_string(v));
    mx_cold_pack_set_variant(old);
  }
  mx_format G;
  if (want) expect(mx_device_download(D, &F, &G) != 0, tag + " download refused while released");
  expect(mx_device_pack_restore_plain(D) == 0 && mx_device_pack_plain_released(D) == 0 && mx_device_bytes(D) == b0, tag + " restore");
  if (mx_device_download(D, &F, &G) == 0) {
    expect(same_array(F.cold_col, G.cold_col, n) && same_array(F.cold_val, G.cold_val, n), tag + " restored plain arrays equal the host format's (bits)");
    mx_format_free(&G);
  } else {
    expect(false, tag + " download after the restore: " + mx_device_last_error());
  }
  expect_same_products(products(D, x, z, m), plain, tag + " restored");
  expect(mx_device_pack_release_plain(D) == 0 && mx_device_pack_plain_released(D) == want, tag + " released again");
  if (mx_device_set_cold_kernel(D, MX_COLD_MERGE) == 0) {
    expect(mx_device_pack_plain_released(D) == 0, tag + " a cold-kernel switch decodes the plain arrays first");
    expect(mx_device_set_cold_kernel(D, MX_COLD_SEGMENT) == 0, tag + " back to the segment kernel");
    expect_same_products(products(D, x, z, m), plain, tag + " after merge and back");
  } else {
    expect(false, tag + " switch to merge from released: " + mx_device_last_error());
  }
  expect(mx_device_pack_release_plain(D) == 0 && mx_device_pack_plain_released(D) == want, tag + " released once more");
}

/* A at crux c: every request on an uploaded device, refresh paths for AUTO, the GPU-built device. */
/* The merge kernel on the pack (the default, mx_cold_pack_set_merge(1)): the plain merge kernel's y
 * bitwise, and the plain arrays again with the switch off. */
static void check_merge(const mx_format &F, const mx_pack_request &rq, const std::vector<double> &x,
                        const std::vector<double> &z, size_t m, const std::string &tag) {
  mx_device *D = nullptr;
  if (mx_device_upload_xhot(&F, MX_COLD_MERGE, 0, &D)) {
    expect(false, tag + " merge upload: " + mx_device_last_error());
    return;
  }
  const Products plain = products(D, x, z, m);
  mx_device_pack_info info;
  if (mx_device_compress(D, &rq) == 0 && mx_device_compress_info(D, &info) == 0) {
    expect(info.in_use == info.packed, tag + " merge: the merge kernel reads the pack by default");
    expect_same_products(products(D, x, z, m), plain, tag + " packed merge");
    expect(mx_device_pack_release_plain(D) == 0, tag + " merge: release");
    expect_same_products(products(D, x, z, m), plain, tag + " packed merge, plain arrays released");
    expect(mx_device_pack_restore_plain(D) == 0, tag + " merge: restore");
    const int old = mx_cold_pack_set_merge(0);
    mx_device_pack_info off;
    mx_device_compress_info(D, &off);
    expect(!off.in_use, tag + " merge: switch off, the plain arrays");
    expect_same_products(products(D, x, z, m), plain, tag + " merge, switch off");
    mx_cold_pack_set_merge(old);
  } else {
    expect(false, tag + " merge compress: " + mx_device_last_error());
  }
  mx_device_free(D);
}

static void check_matrix(const Csr &A, mx_crux c, bool finite, std::mt19937_64 &rng) {
  char ctag[64];
  snprintf(ctag, sizeof ctag, " crux(%g,%g)", c.tau_c, c.tau_r);
  const std::string base = A.name + ctag;
  const mx_csr a = A.view();
  mx_format F;
  if (mx_format_build_borrow(&a, c, MX_MODE_AUTO, &F) != MX_OK) {
    expect(false, base + " host build");
    return;
  }
  const mx_csr cv = {F.nrows, F.ncols, F.cold_rowptr, F.cold_col, F.cold_val};
  mx_cold_pack_stats st;
  mx_cold_pack_stats_of(&cv, &st);
  const size_t m = A.nrows;
  const std::vector<double> x = rand_vec(A.ncols, rng), z = rand_vec(m, rng);
  std::vector<double> ref(m);
  mx_spmv(&F, x.data(), ref.data());
  const size_t nreq = g_small ? 3 : sizeof requests / sizeof requests[0];
  for (size_t q = 0; q < nreq; ++q) {
    const mx_pack_request &rq = requests[q];
    char rtag[64];
    snprintf(rtag, sizeof rtag, " req(%d,%d,%d)", rq.val, rq.idx, rq.row);
    const std::string tag = base + rtag;
    mx_device *D = nullptr;
    if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 0, &D)) {
      expect(false, tag + " upload: " + mx_device_last_error());
      continue;
    }
    const Products plain = products(D, x, z, m);
    const size_t bytes0 = mx_device_bytes(D);
    mx_cold_pack P;
    const bool fits = mx_cold_pack_build(&cv, &rq, &P) == MX_OK;
    const int rc = mx_device_compress(D, &rq);
    mx_device_pack_info info;
    mx_device_compress_info(D, &info);
    if (!fits) {
      expect(rc != 0 && !info.packed && mx_device_bytes(D) == bytes0, tag + " refuses an encoding that cannot hold it");
      expect_same_products(products(D, x, z, m), plain, tag + " (refused)");
      mx_device_free(D);
      continue;
    }
    expect(rc == 0, tag + " compress: " + (rc ? mx_device_last_error() : ""));
    expect_device_pack(D, P, tag + " uploaded");
    /* packed row pointers alone are not read: the device then reports (and moves) the plain CSR's bytes */
    expect(info.packed == (P.val_enc != MX_VAL_PLAIN || P.idx_enc != MX_IDX_PLAIN) && info.in_use == info.packed,
           tag + " info packed/in use");
    expect(info.bytes == (info.packed ? mx_cold_pack_bytes(&P) : mx_csr_bytes(F.nrows, F.cold_nnz)) &&
               info.plain_bytes == mx_csr_bytes(F.nrows, F.cold_nnz) && info.row_enc == (info.packed ? P.row_enc : MX_ROW_PLAIN),
           tag + " info bytes and row encoding");
    expect(mx_device_bytes(D) >= bytes0, tag + " bytes held include the pack");
    const Products packed = products(D, x, z, m);
    expect_same_products(packed, plain, tag);
    for (int v : bitwise_variants) {
      const int old = mx_cold_pack_set_variant(v);
      expect_same_products(products(D, x, z, m), plain, tag + " variant " + std::to_string(v));
      mx_cold_pack_set_variant(old);
    }
    if (finite && all_finite(ref)) expect_close(packed.y, ref, tag + " vs CPU kernel");
    check_release(D, F, P, plain, x, z, m, tag);
    check_merge(F, rq, x, z, m, tag);
    /* the GPU-built device packs to the same bytes */
    if (q == 0) {
      mx_format shell;
      mx_device *Db = nullptr;
      if (mx_device_build(&a, c, MX_MODE_AUTO, MX_COLD_SEGMENT, 0, &shell, &Db) || mx_device_compress(Db, &rq)) {
        expect(false, tag + " GPU build + compress: " + mx_device_last_error());
      } else {
        expect_device_pack(Db, P, tag + " built");
        expect_same_products(products(Db, x, z, m), plain, tag + " built");
      }
      mx_device_free(Db);
    }
    /* refresh paths: to unique values, to few values (AUTO and forced dictionaries) */
    if (q < 5 && A.nnz() > 0) {
      mx_device *Dp = nullptr;
      if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 0, &Dp)) {
        expect(false, tag + " plain twin: " + mx_device_last_error());
      } else {
        std::vector<double> uniq(A.val.size()), few(A.val.size());
        for (size_t p = 0; p < uniq.size(); ++p) uniq[p] = 0.5 + 1e-7 * (double)p, few[p] = (double)(p % 3) - 1.0;
        mx_cold_pack H;
        if (mx_cold_pack_build(&cv, &rq, &H) == MX_OK) {
          check_refresh(A, F, D, Dp, H, uniq, tag + " refresh unique", rng);
          const int64_t cn = F.cold_nnz; /* distinct cold values now */
          if ((rq.val == MX_VAL_DICT0 && cn > 1) || (rq.val == MX_VAL_DICT8 && cn > 256) || (rq.val == MX_VAL_DICT16 && cn > 65536))
            expect(H.fell_back && H.val_enc == MX_VAL_PLAIN, tag + " a forced dictionary falls back on unique values");
          check_refresh(A, F, D, Dp, H, few, tag + " refresh few", rng);
          mx_cold_pack_free(&H);
        }
        mx_device_free(Dp);
      }
    }
    /* off removes the pack (from released plain arrays: decoded back first) */
    const mx_pack_request off = mx_pack_request_of(MX_COMPRESS_OFF);
    expect(mx_device_pack_release_plain(D) == 0, tag + " release before off");
    expect(mx_device_compress(D, &off) == 0 && mx_device_compress_info(D, &info) == 0 && !info.packed, tag + " off");
    expect(mx_device_pack_plain_released(D) == 0, tag + " off: the plain arrays back");
    mx_cold_pack_free(&P);
    mx_device_free(D);
  }
  /* x-hot coding the cold CSR: compression stays off */
  if (A.ncols > 8 && A.nnz() > 0) {
    mx_device *Dx = nullptr;
    const mx_pack_request autoq = {MX_PACK_AUTO, MX_PACK_AUTO, MX_PACK_AUTO};
    mx_device_pack_info info;
    if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, 1 + A.ncols / 8, &Dx) == 0) {
      const Products before = products(Dx, x, z, m);
      expect(mx_device_compress(Dx, &autoq) == 0 && mx_device_compress_info(Dx, &info) == 0 &&
                 (mx_device_xhot_cols(Dx) == 0 || !info.packed),
             base + " x-hot in the cold CSR keeps compression off");
      expect_same_products(products(Dx, x, z, m), before, base + " x-hot");
      mx_device_free(Dx);
    }
  }
  mx_format_free(&F);
}

int main(int argc, char **argv) {
  std::string dir;
  if (!test_args(argc, argv, &g_small, &dir)) return 77;
  std::mt19937_64 rng(20261124);
  std::vector<Csr> mats = test_zoo(g_small, dir);
  static const char *const specs[] = {"lap2d:60", "kron:11:8", "lap3d:14", "lap3d27:10", "rgg:12", "band:3000:2"};
  const size_t nspecs = g_race ? 2 : sizeof specs / sizeof specs[0]; /* racecheck: a stencil, a power-law graph */
  for (size_t i = 0; i < nspecs; ++i) mats.push_back(generated(specs[i]));
  if (!g_small)
    for (const char *spec : {"lap3d:60", "lap3d27:40", "kron:15:16", "rgg:17"}) mats.push_back(generated(spec));
  /* rows 3 and 100 of 70000 nonzeros: their chunks span more than 16 bits, a forced OFF16 is refused */
  if (!g_race) mats.push_back(make_random("long-rows 120x70000", 120, 70000, 5, DENSE_ROWS, 12));
  static const mx_crux cruxes[] = {{0, 0}, {0.5, 0.3}};
  for (const Csr &A0 : mats) {
    const bool big = A0.nnz() > 1000000;
    for (int f = KEEP; f <= SPECIAL; ++f) {
      if ((big || g_small) && f != KEEP && f != PAGERANK && f != FEW) continue;
      if (g_race && f == PAGERANK) continue; /* racecheck: the kernels' shared memory does not depend on values */
      const Csr A = with_values(A0, (Family)f, 77 + f);
      const int fail0 = g_fail;
      for (const mx_crux &c : cruxes) check_matrix(A, c, f != SPECIAL, rng);
      printf("%-40s %9d x %-9d nnz %-10d %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), g_fail == fail0 ? "ok" : "FAILED");
      fflush(stdout);
    }
  }
  printf("%d checks, %d failed; %ld entries of y differed only in their NaN payload\n", g_checks, g_fail, g_nan_payload_diffs);
  return g_fail ? 1 : 0;
}

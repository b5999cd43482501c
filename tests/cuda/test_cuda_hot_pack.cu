/* test_cuda_hot_pack - the SE hot region's packed values (mx_device_compress with val AUTO,
 * src/cuda/mx_hot_pack.cu) against the same device with plain values.
 *
 * For power-law graphs, stencils, a random geometric graph, the zoo and real matrices x values (as
 * generated, all ones, PageRank transition = column-constant, few values, signed zeros / NaN / inf)
 * x cruxes with an SE hot region ((1,1): all of it, (0.6,0.4): part) x x-hot (off, the most used
 * 64 columns):
 *   - the encoding is DICT0 exactly where every hot slot holds one bit pattern, else COLCONST
 *     exactly where each column's hot slots do and 24 bytes per column move less than 8 per slot,
 *     else plain (an independent count on the host from the format's SE arrays);
 *   - y = A x, y = A x + z and y = A x + y in place are bitwise equal to the device before
 *     compression (NaN payloads aside) and within 1e-12 of the CPU kernel (finite values);
 *   - mx_device_compress_info reports it and its bytes (4 per slot + the values');
 *   - a refresh to unique values falls back to plain (hot_fell_back), to ones packs again; products
 *     bitwise equal to a plain twin refreshed alike; compress off removes it.
 * Usage: test_cuda_hot_pack [small|race] [MATRICES_DIR]. Exit: 0 pass, 1 fail, 77 no GPU. */
#include "cuda_test_products.h"


enum Family { KEEP, ONES, PAGERANK, FEW, SPECIAL };
static const char *family_name[] = {"as-is", "ones", "pagerank", "few", "special"};

static Csr with_values(const Csr &A0, Family f, uint64_t seed) {
  Csr A = A0;
  A.name = A0.name + " " + family_name[f];
  std::mt19937_64 rng(seed);
  std::vector<int32_t> cnt((size_t)A.ncols + 1, 0);
  for (int32_t c : A.col) cnt[c]++;
  uint64_t nan1 = 0x7ff8000000000001ull, nan2 = 0xfff4000000000abcull;
  double special[6] = {0.0, -0.0, 0, 0, INFINITY, -INFINITY};
  memcpy(&special[2], &nan1, 8);
  memcpy(&special[3], &nan2, 8);
  for (size_t p = 0; p < A.val.size(); ++p) {
    if (f == ONES) A.val[p] = 1.0;
    if (f == PAGERANK) A.val[p] = 1.0 / cnt[A.col[p]];
    if (f == FEW) A.val[p] = (double)(rng() % 3) - 1.0;
    if (f == SPECIAL) A.val[p] = special[A.col[p] % 6]; /* column-constant bit patterns */
  }
  return A;
}

/* The encoding the SE values of F must get (host count over the slots F holds; xhot_cold: x-hot
 * codes the cold CSR, which rules column constants out) */
static mx_val_enc expected_encoding(const mx_format &F, bool xhot_cold) {
  if (F.mode != MX_HOT_SE || F.se_nslots == 0 || F.ncols == 0) return MX_VAL_PLAIN;
  std::vector<uint64_t> s((size_t)F.ncols);
  std::vector<char> seen((size_t)F.ncols, 0);
  bool one = true, colconst = true, any = false;
  uint64_t first = 0;
  /* F's se_col holds original columns (x-hot codes are the device's) and -1 for padding */
  for (int32_t k = 0; k < F.se_nslots; ++k) {
    const int32_t c = F.se_col[k];
    if (c < 0) continue;
    uint64_t b;
    memcpy(&b, &F.se_val[k], 8);
    if (!any) first = b, any = true;
    one = one && b == first;
    if (seen[c] && s[c] != b) colconst = false;
    seen[c] = 1, s[c] = b;
  }
  if (!any) return MX_VAL_PLAIN;
  if (one) return MX_VAL_DICT0;
  if (colconst && !xhot_cold && 24.0 * F.ncols < 8.0 * F.se_nslots) return MX_VAL_COLCONST;
  return MX_VAL_PLAIN;
}

static void check_case(const Csr &A, mx_crux c, int xhot, bool finite, std::mt19937_64 &rng) {
  char ctag[96];
  snprintf(ctag, sizeof ctag, " crux(%g,%g) xhot %d", c.tau_c, c.tau_r, xhot);
  const std::string tag = A.name + ctag;
  const mx_csr a = A.view();
  mx_format F;
  if (mx_format_build_borrow(&a, c, MX_MODE_SE, &F) != MX_OK) {
    expect(false, tag + " host build");
    return;
  }
  const size_t m = A.nrows;
  const std::vector<double> x = rand_vec(A.ncols, rng), z = rand_vec(m, rng);
  std::vector<double> ref(m);
  mx_spmv(&F, x.data(), ref.data());
  mx_device *D = nullptr, *Dp = nullptr;
  if (mx_device_upload_xhot(&F, MX_COLD_SEGMENT, xhot, &D) || mx_device_upload_xhot(&F, MX_COLD_SEGMENT, xhot, &Dp)) {
    expect(false, tag + " upload: " + mx_device_last_error());
    mx_device_free(D);
    mx_format_free(&F);
    return;
  }
  const Products plain = products(D, x, z, m);
  const mx_pack_request autoq = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_device_pack_info info;
  expect(mx_device_compress(D, &autoq) == 0 && mx_device_compress_info(D, &info) == 0, tag + " compress: " + mx_device_last_error());
  const bool xhot_cold = xhot > 0 && mx_device_xhot_cols(D) > 0; /* an explicit x-hot request codes the cold CSR too */
  const mx_val_enc want = expected_encoding(F, xhot_cold);
  expect(info.hot_val_enc == want, tag + " hot encoding " + mx_val_enc_name(info.hot_val_enc) + ", expected " + mx_val_enc_name(want));
  const size_t slots = F.mode == MX_HOT_SE ? (size_t)F.se_nslots : 0;
  const size_t want_bytes = want == MX_VAL_PLAIN ? 12 * slots : 4 * slots + (want == MX_VAL_DICT0 ? 8 : 24 * (size_t)F.ncols);
  expect(info.hot_plain_bytes == 12 * slots && info.hot_bytes == want_bytes, tag + " hot bytes");
  const Products got = products(D, x, z, m);
  expect_same_products(got, plain, tag);
  if (finite && all_finite(ref)) expect_close(got.y, ref, tag + " vs CPU kernel");
  if (A.nnz() > 0 && !g_race) { /* refresh: unique values (plain), then ones (one value) */
    std::vector<double> unique(A.val), ones(A.val.size(), 1.0);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t p = 0; p < unique.size(); ++p) unique[p] = u(rng) + 1e-9 * (double)p;
    for (const std::vector<double> *nv : {&unique, &ones}) {
      const std::string rtag = tag + (nv == &ones ? " refresh ones" : " refresh unique");
      const mx_val_enc before = info.hot_val_enc;
      if (mx_device_refresh_values(D, nv->data(), nullptr) || mx_device_refresh_values(Dp, nv->data(), nullptr)) {
        expect(false, rtag + ": " + mx_device_last_error());
        break;
      }
      /* the encoding of the new values: F's SE slots through its gather map */
      mx_format G = F;
      std::vector<double> se_new(slots);
      for (size_t k = 0; k < slots; ++k) se_new[k] = F.hot_src[k] >= 0 ? (*nv)[F.hot_src[k]] : 0.0;
      G.se_val = se_new.data();
      const mx_val_enc now = expected_encoding(G, xhot_cold);
      mx_device_compress_info(D, &info);
      expect(info.hot_val_enc == now && info.hot_fell_back == (before != MX_VAL_PLAIN && now == MX_VAL_PLAIN),
             rtag + " encoding chosen again (" + mx_val_enc_name(info.hot_val_enc) + ", expected " + mx_val_enc_name(now) + ")");
      const std::vector<double> x2 = rand_vec(A.ncols, rng), z2 = rand_vec(m, rng);
      expect_same_products(products(D, x2, z2, m), products(Dp, x2, z2, m), rtag);
    }
  }
  const mx_pack_request off = mx_pack_request_of(MX_COMPRESS_OFF);
  expect(mx_device_compress(D, &off) == 0 && mx_device_compress_info(D, &info) == 0 && info.hot_val_enc == MX_VAL_PLAIN,
         tag + " off removes the hot pack");
  mx_device_free(D);
  mx_device_free(Dp);
  mx_format_free(&F);
}

int main(int argc, char **argv) {
  std::string dir;
  bool small = false;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261127);
  std::vector<Csr> mats;
  for (const char *spec : {"kron:11:8", "chunglu:5000:8:2.1", "lap2d:40", "rgg:11"}) mats.push_back(generated(spec));
  if (!small)
    for (const char *spec : {"kron:15:16", "chunglu-dir:100000:4:2.1"}) mats.push_back(generated(spec));
  if (g_race) mats.resize(2);
  for (const Csr &z : test_zoo(true, dir)) mats.push_back(z);
  static const mx_crux cruxes[] = {{1, 1}, {0.6, 0.4}};
  for (const Csr &A0 : mats) {
    for (int f = KEEP; f <= SPECIAL; ++f) {
      if (small && f != ONES && f != PAGERANK) continue;
      const Csr A = with_values(A0, (Family)f, 31 + f);
      const int fail0 = g_fail;
      for (const mx_crux &c : cruxes)
        for (int xhot : {0, 64}) check_case(A, c, xhot, f != SPECIAL, rng);
      printf("%-40s %9d x %-9d nnz %-10d %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), g_fail == fail0 ? "ok" : "FAILED");
      fflush(stdout);
    }
  }
  printf("%d checks, %d failed; %ld entries of y differed only in their NaN payload\n", g_checks, g_fail, g_nan_payload_diffs);
  return g_fail ? 1 : 0;
}

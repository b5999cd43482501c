/* test_cuda_hub - the hub split on the GPU (src/cuda/mx_cold_hub.cu) against the CPU kernel
 * mx_cold_hub_spmv_add: for every matrix, value family (as generated, ones, column constants) and K
 * (0, 1, 64, 4096, MX_HUB_MAX_COLS), y0 + hub x on the GPU is bitwise the CPU's (fresh random x and
 * y0 each time), a second product gives the same bits, and rest x (a plain loop) + hub x is within
 * 1e-12 of the whole matrix's product. Matrices: generated power-law graphs (kron, chunglu; their hub
 * rows exceed the pseudo-row length: split rows and the fixup), a stencil and a geometric graph, rows
 * of exactly 64 / 65 / 128 / 129 / 257 hub nonzeros, and the zoo (random shapes, real matrices). The device format's
 * split (mx_device_hub, built on the GPU): its statistics (mx_device_hub_stats) equal to the host's
 * (mx_cold_hub_stats), its product bitwise equal to the host builder's split
 * (its rest on a device, then the CPU hub kernel); y = D x, D x + z and in place within 1e-12 of the CPU product; a value
 * refresh drops it (products of the new values), made again it survives a cold-kernel switch, K = 0
 * drops it; a device with a hot part, another CSR and K out of range are refused. Two splits alive,
 * the larger uploaded first: both products right.
 * Usage: test_cuda_hub [small|race] [MATRICES_DIR]. Exit: 0 pass, 1 fail, 77 no GPU. */
#include "cuda_test_products.h"
extern "C" {
#include "core/mx_cold_hub.h"
#include "cuda/mx_cold_hub_dev.h"
}

enum Family { KEEP, ONES, COLCONST };

static Csr with_values(const Csr &A0, Family f) {
  Csr A = A0;
  for (size_t p = 0; p < A.val.size() && f != KEEP; ++p) A.val[p] = f == ONES ? 1.0 : 1.0 / (A.col[p] + 1.0);
  A.name += f == KEEP ? "" : (f == ONES ? "@ones" : "@colconst");
  return A;
}

/* rows 0..7 with 64, 65, 128, 129, 257, 1 and 0 nonzeros in columns 0.. (every column a hub column for
 * K >= 257): at and past both pseudo-row lengths (MX_HUB_ROW_MAX with values, MX_HUB_ROW_MAX_FOLDED
 * with the ONES and COLCONST families) */
static Csr edge_rows() {
  Csr A;
  A.name = "rows of 64/65/128/129/257/1/0";
  A.nrows = 7, A.ncols = 300;
  A.rowptr.assign(1, 0);
  for (int32_t len : {64, 65, 128, 129, 257, 1, 0}) {
    for (int32_t k = 0; k < len; ++k) A.col.push_back(k), A.val.push_back(0.25 * (k % 7) - 0.5);
    A.rowptr.push_back((int32_t)A.col.size());
  }
  return A;
}

static void check_case(const Csr &A, int32_t K, std::mt19937_64 &rng) {
  const std::string tag = A.name + " K=" + std::to_string(K);
  mx_cold_hub H;
  const mx_csr v = A.view();
  if (mx_cold_hub_build(&v, K, &H) != MX_OK) {
    expect(false, tag + ": host build failed");
    return;
  }
  mx_hub_dev *d = nullptr;
  if (mx_hub_dev_upload(&H, &d)) {
    expect(false, tag + ": upload: " + mx_device_last_error());
    mx_cold_hub_free(&H);
    return;
  }
  const std::vector<double> x = rand_vec((size_t)A.ncols, rng), y0 = rand_vec((size_t)A.nrows, rng);
  std::vector<double> y_cpu = y0;
  expect(mx_cold_hub_spmv_add(&H, x.data(), y_cpu.data()) == MX_OK, tag + ": CPU kernel");
  DevVec dx(x.size()), dy(y0.size());
  dx.put(x);
  std::vector<double> y_gpu[2];
  for (int round = 0; round < 2; ++round) {
    dy.put(y0);
    expect(mx_hub_dev_spmv_add(d, dx.p, dy.p, nullptr) == 0, tag + ": GPU product");
    CK(cudaDeviceSynchronize());
    y_gpu[round] = dy.get();
  }
  const size_t bytes = sizeof(double) * y0.size();
  expect(y0.empty() || memcmp(y_gpu[0].data(), y_cpu.data(), bytes) == 0, tag + ": GPU y not bitwise the CPU kernel's");
  expect(y0.empty() || memcmp(y_gpu[0].data(), y_gpu[1].data(), bytes) == 0, tag + ": two GPU products differ");
  /* rest (plain loop) + hub against the whole matrix */
  std::vector<double> y = y_cpu, ref((size_t)A.nrows);
  for (int32_t i = 0; i < A.nrows; ++i) {
    double r = 0.0, w = 0.0;
    for (int32_t p = H.rest_rowptr[i]; p < H.rest_rowptr[i + 1]; ++p) r += H.rest_val[p] * x[H.rest_col[p]];
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) w += A.val[p] * x[A.col[p]];
    y[i] = y_gpu[0][i] - y0[i] + r, ref[i] = w;
  }
  expect_close(y, ref, tag + ": rest + hub vs the whole matrix");
  mx_hub_dev_free(d);
  mx_cold_hub_free(&H);
}

/* y = D x, y = D x + z and y = D x + y in place, against the CPU product of A (within 1e-12) */
static void expect_products(mx_device *D, const Csr &A, std::mt19937_64 &rng, const std::string &tag) {
  const std::vector<double> x = rand_vec((size_t)A.ncols, rng), z = rand_vec((size_t)A.nrows, rng);
  std::vector<double> ref((size_t)A.nrows), refz((size_t)A.nrows);
  for (int32_t i = 0; i < A.nrows; ++i) {
    double s = 0.0;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) s += A.val[p] * x[A.col[p]];
    ref[i] = s, refz[i] = s + z[i];
  }
  DevVec dx(x.size()), dz(z.size()), dy(z.size());
  dx.put(x);
  dz.put(z);
  dy.poison();
  expect(mx_device_spmv(D, dx.p, nullptr, dy.p, nullptr) == 0, tag + ": y = D x");
  CK(cudaDeviceSynchronize());
  expect_close(dy.get(), ref, tag + ": y = D x");
  expect(mx_device_spmv(D, dx.p, dz.p, dy.p, nullptr) == 0, tag + ": y = D x + z");
  CK(cudaDeviceSynchronize());
  expect_close(dy.get(), refz, tag + ": y = D x + z");
  expect(mx_device_spmv(D, dx.p, dz.p, dz.p, nullptr) == 0, tag + ": z = D x + z");
  CK(cudaDeviceSynchronize());
  expect_close(dz.get(), refz, tag + ": z = D x + z in place");
}

/* The split built on the GPU gives the host builder's: D x (rest device, then hub) bitwise equal to a
 * device of the host split's rest (merge, packed as mx_device_hub packs it) plus the CPU hub kernel. */
static void expect_host_split_bits(mx_device *D, const mx_cold_hub &H, std::mt19937_64 &rng, const std::string &tag) {
  const mx_csr rest = mx_cold_hub_rest(&H);
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_format F;
  mx_device *R = nullptr;
  if (mx_format_build_borrow(&rest, mx_crux{0.0, 0.0}, MX_MODE_AUTO, &F) != MX_OK || mx_device_upload(&F, MX_COLD_MERGE, &R) ||
      mx_device_compress(R, &rq)) {
    expect(false, tag + ": host split's rest on the device: " + mx_device_last_error());
    mx_device_free(R);
    mx_format_free(&F);
    return;
  }
  const std::vector<double> x = rand_vec((size_t)H.ncols, rng);
  DevVec dx(x.size()), dy((size_t)H.nrows), dr((size_t)H.nrows);
  dx.put(x);
  expect(mx_device_spmv(D, dx.p, nullptr, dy.p, nullptr) == 0 && mx_device_spmv(R, dx.p, nullptr, dr.p, nullptr) == 0, tag + ": products");
  CK(cudaDeviceSynchronize());
  std::vector<double> y = dy.get(), yr = dr.get();
  expect(mx_cold_hub_spmv_add(&H, x.data(), yr.data()) == MX_OK, tag + ": CPU hub kernel");
  expect(y.empty() || memcmp(y.data(), yr.data(), sizeof(double) * y.size()) == 0, tag + ": GPU-built split not bitwise the host-built one");
  mx_device_free(R);
  mx_format_free(&F);
}

/* mx_device_hub on an all-cold device: products, the info, a value refresh (drops the split), the
 * split again, a cold-kernel switch (kept, the rest switched), K = 0 (dropped) */
static void check_device(const Csr &A, int32_t K, std::mt19937_64 &rng) {
  const std::string tag = A.name + " device K=" + std::to_string(K);
  const mx_csr v = A.view();
  mx_format F;
  mx_device *D = nullptr;
  if (mx_format_build(&v, mx_crux{0.0, 0.0}, MX_MODE_AUTO, &F) != MX_OK || mx_device_upload(&F, MX_COLD_MERGE, &D)) {
    expect(false, tag + ": upload: " + mx_device_last_error());
    mx_format_free(&F);
    return;
  }
  mx_cold_hub H;
  expect(mx_cold_hub_build(&v, K, &H) == MX_OK, tag + ": host split");
  int k = -1;
  int64_t hnnz = -1, hrows = -1, want_nnz = -2, want_rows = -2;
  expect(mx_cold_hub_stats(&v, K, &want_nnz, &want_rows) == MX_OK && want_nnz == H.nnz, tag + ": host statistics");
  expect(mx_device_hub_stats(D, K, &hnnz, &hrows) == 0 && hnnz == want_nnz && hrows == want_rows,
         tag + ": GPU statistics " + std::to_string(hnnz) + "/" + std::to_string(hrows) + ", host " + std::to_string(want_nnz) + "/" +
             std::to_string(want_rows));
  expect(mx_device_hub_stats(D, MX_HUB_MAX_COLS + 1, &hnnz, &hrows) == 1 && hnnz == 0 && hrows == 0, tag + ": statistics refuse K");
  expect(mx_device_hub(D, &v, K) == 0, tag + ": mx_device_hub: " + mx_device_last_error());
  mx_device_hub_info(D, &k, &hnnz);
  expect(k == H.K && hnnz == H.nnz, tag + ": info");
  expect_products(D, A, rng, tag);
  expect_host_split_bits(D, H, rng, tag);
  Csr B = A; /* the same pattern, values times -2 */
  for (double &e : B.val) e *= -2.0;
  expect(mx_device_refresh_values(D, B.val.data(), nullptr) == 0, tag + ": refresh");
  mx_device_hub_info(D, &k, &hnnz);
  expect(k == 0 && hnnz == 0, tag + ": the refresh dropped the split");
  expect_products(D, B, rng, tag + " refreshed");
  const mx_csr vb = B.view();
  expect(mx_device_hub(D, &vb, K) == 0, tag + ": split again");
  expect(mx_device_set_cold_kernel(D, MX_COLD_SEGMENT) == 0, tag + ": switch to segment");
  mx_device_hub_info(D, &k, &hnnz);
  expect(k == H.K, tag + ": the switch kept the split");
  expect_products(D, B, rng, tag + " split again, segment");
  expect(mx_device_hub(D, &vb, 0) == 0, tag + ": K = 0");
  mx_device_hub_info(D, &k, &hnnz);
  expect(k == 0, tag + ": K = 0 dropped the split");
  expect_products(D, B, rng, tag + " no split");
  mx_cold_hub_free(&H);
  mx_device_free(D);
  mx_format_free(&F);
}

/* two splits alive (as an MPI rank's diagonal and off-diagonal blocks): the one of more hub columns
 * uploaded first, then one of fewer; both products right (the kernels' shared-memory limit is shared) */
static void check_two_alive(const Csr &A, std::mt19937_64 &rng) {
  const mx_csr v = A.view();
  mx_cold_hub Hbig, Hsmall;
  mx_hub_dev *big = nullptr, *small = nullptr;
  memset(&Hbig, 0, sizeof Hbig);
  memset(&Hsmall, 0, sizeof Hsmall);
  if (mx_cold_hub_build(&v, 4096, &Hbig) != MX_OK || mx_cold_hub_build(&v, 64, &Hsmall) != MX_OK || mx_hub_dev_upload(&Hbig, &big) ||
      mx_hub_dev_upload(&Hsmall, &small)) {
    expect(false, A.name + " two alive: build or upload: " + mx_device_last_error());
  } else {
    const std::vector<double> x = rand_vec((size_t)A.ncols, rng), y0 = rand_vec((size_t)A.nrows, rng);
    DevVec dx(x.size()), dy(y0.size());
    dx.put(x);
    for (int b = 0; b < 2; ++b) {
      const mx_cold_hub &H = b ? Hsmall : Hbig;
      std::vector<double> y = y0;
      expect(mx_cold_hub_spmv_add(&H, x.data(), y.data()) == MX_OK, A.name + " two alive: CPU");
      dy.put(y0);
      expect(mx_hub_dev_spmv_add(b ? small : big, dx.p, dy.p, nullptr) == 0 && cudaDeviceSynchronize() == cudaSuccess,
             A.name + " two alive: GPU product " + std::to_string(b) + ": " + mx_device_last_error());
      expect(memcmp(dy.get().data(), y.data(), sizeof(double) * y.size()) == 0, A.name + " two alive: bitwise " + std::to_string(b));
    }
  }
  mx_hub_dev_free(big);
  mx_hub_dev_free(small);
  mx_cold_hub_free(&Hbig);
  mx_cold_hub_free(&Hsmall);
}

/* refused: a device with a hot part, a CSR that is not D's, K out of range; D unchanged */
static void check_refusals(const Csr &A) {
  const mx_csr v = A.view();
  mx_format F;
  mx_device *D = nullptr;
  if (mx_format_build(&v, mx_crux{1.0, 1.0}, MX_MODE_AUTO, &F) != MX_OK || mx_device_upload(&F, MX_COLD_MERGE, &D)) {
    expect(false, A.name + " refusals: upload");
    mx_format_free(&F);
    return;
  }
  Csr B = A;
  B.nrows = A.nrows - 1, B.rowptr.pop_back();
  const mx_csr vb = B.view();
  int k = -1;
  expect(mx_device_hub(D, &v, 64) == 1, A.name + ": a hot part is refused");
  expect(mx_device_hub(D, &vb, 64) == 1, A.name + ": another CSR is refused");
  expect(mx_device_hub(D, &v, MX_HUB_MAX_COLS + 1) == 1 && mx_device_hub(D, &v, -1) == 1, A.name + ": K out of range is refused");
  mx_device_hub_info(D, &k, nullptr);
  expect(k == 0, A.name + ": refusals leave no split");
  mx_device_free(D);
  mx_format_free(&F);
}

int main(int argc, char **argv) {
  std::string dir;
  bool small = false;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261126);
  std::vector<Csr> mats;
  for (const char *spec : {"kron:11:16", "chunglu:20000:8:2.1", "lap2d:40", "rgg:11"}) mats.push_back(generated(spec));
  if (!small) mats.push_back(generated("kron:16:16"));
  if (g_race) mats.resize(1);
  mats.push_back(edge_rows());
  if (!g_race)
    for (const Csr &z : test_zoo(true, dir)) mats.push_back(z);
  for (const Csr &A0 : mats) {
    for (int f = KEEP; f <= COLCONST; ++f) {
      if (g_race && f == KEEP) continue;
      const Csr A = with_values(A0, (Family)f);
      const int fail0 = g_fail;
      for (int32_t K : {0, 1, 64, 4096, MX_HUB_MAX_COLS}) check_case(A, K, rng);
      printf("%-40s %9d x %-9d nnz %-10d %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), g_fail == fail0 ? "ok" : "FAILED");
      fflush(stdout);
    }
  }
  for (const Csr &A0 : {generated("kron:11:16"), generated("chunglu:20000:8:2.1"), edge_rows()})
    for (Family f : {KEEP, COLCONST}) {
      const Csr A = with_values(A0, f);
      const int fail0 = g_fail;
      for (int32_t K : {1, 4096}) check_device(A, K, rng);
      printf("%-40s device split %s\n", A.name.c_str(), g_fail == fail0 ? "ok" : "FAILED");
    }
  check_refusals(generated("kron:11:16"));
  check_two_alive(generated("kron:11:16"), rng);
  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}

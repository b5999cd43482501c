/* test_cuda_features: (1) mx_device_features equals mx_features_compute bit for bit on every zoo
 * matrix, also with its values from a set of three (the value features), and refuses a device
 * format that does not hold the plain matrix; also in two steps with a product running meanwhile, a
 * job restarted, or dropped by mx_device_free while pending; (2) mx_device_set_cold_kernel switches
 * between every pair of cold kernels with products bitwise equal to a format uploaded with that
 * kernel from the start, and close to the CPU oracle.
 * Usage: test_cuda_features [small|race] [MATRICES_DIR]; exits 77 (skipped) without a GPU. */
#include "cuda_test_util.h"

extern "C" {
#include "core/mx_features.h"
}

static const mx_cold_kernel kernels[] = {MX_COLD_SEGMENT, MX_COLD_MERGE, MX_COLD_CUSPARSE, MX_COLD_AUTO};
static const char *const kernel_names[] = {"auto", "segment", "merge", "cusparse", "timed"};

/* Every feature of the GPU's fg bitwise equal to the CPU's fc (memcmp: a NaN would fail too, none is
 * expected); the first that differs is named. */
static void expect_same_features(const mx_features &fg, const mx_features &fc, const std::string &tag) {
  int differ = 0, first = -1;
  for (int i = 0; i < MX_NFEATURES; ++i)
    if (memcmp(&fg.v[i], &fc.v[i], sizeof(double)) != 0) differ++, first = first < 0 ? i : first;
  char what[256] = "";
  if (first >= 0) snprintf(what, sizeof what, " (first: %s GPU %.17g CPU %.17g)", mx_feature_name(first), fg.v[first], fc.v[first]);
  expect(differ == 0, tag + ": " + std::to_string(differ) + " features differ from the CPU's" + what);
}

/* A's features on the CPU (*fc) and A uploaded as the plain matrix ((0,0): *D) with cold kernel
 * request cold (AUTO measures the longest row, which the row sort's key bits then come from; an
 * explicit kernel does not: the bits of nnz); false (a failure recorded) when the build fails. */
static bool cpu_features_and_plain_device(const Csr &A, mx_features *fc, mx_device **D, mx_cold_kernel cold = MX_COLD_AUTO) {
  const mx_csr a = A.view();
  mx_format shell;
  *D = nullptr;
  expect(mx_features_compute(&a, fc) == MX_OK, A.name + ": CPU features");
  if (!mx_device_build(&a, mx_crux{0, 0}, MX_MODE_AUTO, cold, 0, &shell, D)) return true;
  expect(false, A.name + ": build at (0,0): " + mx_device_last_error());
  return false;
}

static void check_features_of(const Csr &A) {
  mx_features fc, fg;
  mx_device *D;
  if (!cpu_features_and_plain_device(A, &fc, &D)) return;
  const int rc = mx_device_features(D, &fg);
  expect(rc == 0, A.name + ": GPU features: " + (rc ? mx_device_last_error() : ""));
  if (rc == 0) expect_same_features(fg, fc, A.name);
  mx_device_free(D);
}

/* A as it is, and with values p % 3 at position p: the value features then depend on which entry is
 * a row's or a column's first (with distinct values only the firsts equal themselves). */
static void check_features(const Csr &A) {
  check_features_of(A);
  Csr B = A;
  B.name = A.name + " (3 values)";
  for (size_t p = 0; p < B.val.size(); ++p) B.val[p] = (double)(p % 3);
  check_features_of(B);
}

static std::vector<double> device_product(mx_device *D, const std::vector<double> &x, int nrows);

/* The two-step features: started, a product on D while the passes are queued (bitwise the product
 * of a D with no job), polled until ready, finished: equal to the CPU's; started twice (the first
 * job dropped), finished: equal; started and left to mx_device_free; finish and ready without a
 * job refused. */
static void check_two_steps(const Csr &A, std::mt19937_64 &rng) {
  mx_features fc, fg;
  mx_device *D;
  if (!cpu_features_and_plain_device(A, &fc, &D)) return;
  const std::vector<double> x = rand_vec((size_t)A.ncols, rng), y0 = device_product(D, x, A.nrows);
  int ready = 1;
  expect(mx_device_features_ready(D, &ready) != 0 && ready == 0, A.name + ": ready without a job refused");
  expect(mx_device_features_finish(D, &fg) != 0, A.name + ": finish without a job refused");
  expect(mx_device_features_start(D) == 0, A.name + ": start: " + mx_device_last_error());
  const std::vector<double> y1 = device_product(D, x, A.nrows);
  expect(y1.size() == y0.size() && (y0.empty() || memcmp(y0.data(), y1.data(), y0.size() * sizeof(double)) == 0),
         A.name + ": a product while the passes run is bitwise the same");
  long polls = 0;
  while (mx_device_features_ready(D, &ready) == 0 && !ready && polls < 100000000L) ++polls;
  expect(ready == 1, A.name + ": the passes finish (ready): " + mx_device_last_error());
  expect(mx_device_features_finish(D, &fg) == 0, A.name + ": finish: " + mx_device_last_error());
  expect_same_features(fg, fc, A.name + " (two steps)");
  expect(mx_device_features_finish(D, &fg) != 0, A.name + ": a second finish refused (no job)");
  expect(mx_device_features_start(D) == 0 && mx_device_features_start(D) == 0, A.name + ": started twice");
  expect(mx_device_features_finish(D, &fg) == 0, A.name + ": finish after a restart: " + mx_device_last_error());
  expect_same_features(fg, fc, A.name + " (restarted)");
  mx_device *E; /* a second matrix's job pending beside D's: each has a workspace of its own */
  if (cpu_features_and_plain_device(A, &fc, &E, MX_COLD_SEGMENT)) {
    mx_features fe;
    expect(mx_device_features_start(D) == 0 && mx_device_features_start(E) == 0, A.name + ": two jobs started: " + mx_device_last_error());
    expect(mx_device_features_finish(E, &fe) == 0 && mx_device_features_finish(D, &fg) == 0,
           A.name + ": two jobs finished: " + mx_device_last_error());
    expect_same_features(fe, fc, A.name + " (second job, segment kernel: key bits of nnz)");
    expect_same_features(fg, fc, A.name + " (first job)");
    mx_device_free(E);
  }
  expect(mx_device_features_start(D) == 0, A.name + ": start, left pending");
  mx_device_free(D); /* drops the pending job (compute-sanitizer: nothing leaked or read after free) */
}

/* A format with a hot part, or x-hot codes in its cold CSR, is refused (no wrong features). */
static void check_refusals(const Csr &A) {
  const mx_csr a = A.view();
  mx_features f;
  mx_format shell;
  mx_device *D = nullptr;
  if (A.nnz() == 0) return;
  if (!mx_device_build(&a, mx_crux{1, 1}, MX_MODE_AUTO, MX_COLD_AUTO, 0, &shell, &D)) {
    expect(mx_device_features(D, &f) != 0, A.name + ": features of a (1,1) format refused");
    mx_device_free(D);
  }
  if (!mx_device_build(&a, mx_crux{0, 0}, MX_MODE_AUTO, MX_COLD_AUTO, 8, &shell, &D)) { /* forced x-hot codes the cold CSR */
    expect(mx_device_features(D, &f) != 0 || mx_device_xhot_cols(D) == 0, A.name + ": features of x-hot coded columns refused");
    mx_device_free(D);
  }
}

static std::vector<double> device_product(mx_device *D, const std::vector<double> &x, int nrows) {
  DevVec dx(x.size()), dy((size_t)nrows);
  dx.put(x);
  dy.poison();
  CK(mx_device_spmv(D, dx.p, nullptr, dy.p, nullptr) == 0 ? cudaSuccess : cudaErrorUnknown);
  CK(cudaDeviceSynchronize());
  return dy.get();
}

/* Switch from every kernel to every other at crux c; compare with a format built with the target
 * kernel (bitwise) and with the CPU oracle (close). */
static void check_switches(const Csr &A, mx_crux c, std::mt19937_64 &rng) {
  const mx_csr a = A.view();
  mx_format F = {};
  if (mx_format_build_borrow(&a, c, MX_MODE_AUTO, &F) != MX_OK) {
    expect(false, A.name + ": host build");
    return;
  }
  const std::vector<double> x = rand_vec((size_t)A.ncols, rng);
  std::vector<double> ref((size_t)A.nrows);
  mx_spmv(&F, x.data(), ref.data());
  for (mx_cold_kernel from : kernels)
    for (mx_cold_kernel to : kernels) {
      char tag[256];
      snprintf(tag, sizeof tag, "%s crux (%g,%g): cold %s -> %s", A.name.c_str(), c.tau_c, c.tau_r, kernel_names[from],
               kernel_names[to]);
      mx_device *D = nullptr, *R = nullptr;
      if (mx_device_upload_xhot(&F, from, 0, &D) || mx_device_upload_xhot(&F, to, 0, &R)) {
        expect(false, std::string(tag) + ": upload: " + mx_device_last_error());
        mx_device_free(D);
        continue;
      }
      const mx_cold_kernel before = mx_device_cold_kernel(D);
      if (mx_device_set_cold_kernel(D, to) == 0) {
        expect(mx_device_cold_kernel(D) == mx_device_cold_kernel(R), std::string(tag) + ": same kernel as uploaded with it");
        const std::vector<double> y = device_product(D, x, A.nrows), yr = device_product(R, x, A.nrows);
        expect(y.size() == yr.size() && (y.empty() || memcmp(y.data(), yr.data(), y.size() * sizeof(double)) == 0),
               std::string(tag) + ": bitwise equal to the upload with that kernel");
        expect_close(y, ref, std::string(tag) + ": vs CPU");
      } else { /* only cuSPARSE may refuse (as the upload did), leaving D as it was */
        expect(to == MX_COLD_CUSPARSE && mx_device_cold_kernel(R) != MX_COLD_CUSPARSE && mx_device_cold_kernel(D) == before,
               std::string(tag) + ": switch failed: " + mx_device_last_error());
        expect_close(device_product(D, x, A.nrows), ref, std::string(tag) + ": after a refused switch, vs CPU");
      }
      mx_device_free(D);
      mx_device_free(R);
    }
  mx_format_free(&F);
}

int main(int argc, char **argv) {
  bool small = false;
  std::string dir;
  if (!test_args(argc, argv, &small, &dir)) return 77;
  std::mt19937_64 rng(20261123);
  mx_device *D = nullptr;
  expect(mx_device_features(nullptr, nullptr) != 0, "NULL arguments refused");
  expect(mx_device_set_cold_kernel(D, MX_COLD_SEGMENT) != 0, "NULL device refused");
  for (const Csr &A : test_zoo(small, dir)) {
    const int fail0 = g_fail;
    check_features(A);
    check_two_steps(A, rng);
    check_refusals(A);
    check_switches(A, mx_crux{0, 0}, rng);
    if (!small) check_switches(A, mx_crux{0.7, 0.5}, rng);
    printf("%-28s %9d x %-9d nnz %-10d %s\n", A.name.c_str(), A.nrows, A.ncols, A.nnz(), g_fail == fail0 ? "ok" : "FAILED");
    fflush(stdout);
    if (A.nnz() % 2) mx_device_release_pools(); /* the kept feature workspaces destroyed: the next job makes one again */
  }
  mx_device_release_pools();
  printf("%d checks, %d failed\n", g_checks, g_fail);
  return g_fail ? 1 : 0;
}

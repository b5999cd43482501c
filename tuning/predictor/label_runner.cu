/* matxtract-label-runner - measures the SpMV time of execution plans of one matrix for labels.py.
 *
 *   matxtract-label-runner (-gen SPEC [-seed N] | -f FILE) [-warmup W] [-calls N] [-repeats R] [-compress auto|off]
 *
 * Loads the matrix (generator spec, or .mtx / PETSc binary file), computes x (seeded uniform in
 * [-1,1)) and the CPU double reference y = A x, prints
 *   features {JSON: mx_features_compute, names in mx_feature_name order}
 *   matrix {JSON: rows, cols, nnz, load_ms, gpu, l2_bytes, rotated_copies, timing method}
 *   ready
 * then serves one request per stdin line, "TAU_C TAU_R MODE COLD" (MODE auto|du|se, COLD
 * segment|merge|cusparse|auto), answering one JSON line per request:
 *   ok, the plan, the hot mode built, hot nnz share, build_ms (host format build), upload_ms,
 *   rel_err (2-norm vs the CPU reference; a plan above 1e-12 is answered ok 0), and the time:
 *   t_us = median of the R per-repeat medians (each of N calls, CUDA events around each call on
 *   one stream, after W warm-up calls), rep_min_us / rep_max_us (the spread of the repeats: the
 *   run-to-run noise labels.py uses), q1_us / q3_us / min_us / max_us over all R*N calls.
 * -compress auto (default off) does what the PETSc type does by default on the GPU: the plan is
 * compressed (mx_device_compress, MX_COMPRESS_AUTO: the cold region's row patterns or pack where its
 * cold kernel reads them, the SE hot values) and, where anything is packed, timed like the plain plan;
 * on the segment and merge kernels the faster of the two is the plan's time, as the PETSc pack guard
 * keeps the faster, on cuSPARSE the packed time ("packed": 1 when the packed time is the plan's;
 * t_plain_us: the plain plan's median; the packed product is checked against the reference too).
 * "quit" or the end of input ends it. Consecutive requests with the same crux and mode reuse the
 * built format (only the upload, which fixes the cold kernel, is redone). Matrices whose CSR bytes
 * are under 2x L2 rotate 8 x/y copies, as matxtract-bench does (docs/BENCHMARKING.md, point 3). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include "../common/rel_err.h"
#include <random>
#include <string>
#include <vector>
#include "cuda_check.h"

extern "C" {
#include "core/mx_cold_pack.h"
#include "core/mx_features.h"
#include "core/mx_format.h"
#include "core/mx_plan.h"
#include "cuda/mx_device.h"
#include "pred_matrix.h"
}

static_assert((int)MX_PLAN_COLD_AUTO == (int)MX_COLD_AUTO && (int)MX_PLAN_COLD_SEGMENT == (int)MX_COLD_SEGMENT &&
                  (int)MX_PLAN_COLD_MERGE == (int)MX_COLD_MERGE && (int)MX_PLAN_COLD_CUSPARSE == (int)MX_COLD_CUSPARSE,
              "a plan's cold kernel converts to mx_cold_kernel by a cast");

static double now_ms() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

struct Opts {
  const char *spec = nullptr, *path = nullptr;
  unsigned long long seed = 0;
  int warmup = 20, calls = 100, repeats = 5;
  bool compress = false; /* -compress auto */
};

/* The plan's format on the GPU (mx_device_build: one CSR upload + the build on the device, as the
 * PETSc type does), its cold kernel forced; *shell gets the counts. 0 or nonzero (last_error set). */
static int build_plan(const mx_csr *A, const mx_plan &p, mx_format *shell, mx_device **D) {
  return mx_device_build(A, p.crux, p.mode, (mx_cold_kernel)p.cold, MX_XHOT_AUTO, shell, D);
}

struct Vectors {
  int ncopy = 1;
  std::vector<double *> x, y;
};

struct Timing {
  double med = 0, rep_min = 0, rep_max = 0, q1 = 0, q3 = 0, mn = 0, mx = 0;
};

static double sorted_quantile(const std::vector<double> &s, double q) { /* nearest rank on sorted s */
  size_t k = (size_t)ceil(q * s.size());
  return s[k > 0 ? k - 1 : 0];
}

static double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* R repeats of N calls of D's SpMV, each call between two events; W warm-up calls first. */
static Timing time_plan(mx_device *D, const Vectors &V, cudaStream_t s, const Opts &o) {
  int call = 0;
  auto spmv = [&]() {
    const int c = call++ % V.ncopy;
    if (mx_device_spmv(D, V.x[c], nullptr, V.y[c], (void *)s)) {
      fprintf(stderr, "spmv: %s\n", mx_device_last_error());
      exit(2);
    }
  };
  for (int i = 0; i < o.warmup; ++i) spmv();
  CK(cudaStreamSynchronize(s));
  std::vector<cudaEvent_t> ev(2 * o.calls);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  std::vector<double> all, rep_med;
  for (int r = 0; r < o.repeats; ++r) {
    for (int i = 0; i < o.calls; ++i) {
      CK(cudaEventRecord(ev[2 * i], s));
      spmv();
      CK(cudaEventRecord(ev[2 * i + 1], s));
    }
    CK(cudaStreamSynchronize(s));
    std::vector<double> t(o.calls);
    for (int i = 0; i < o.calls; ++i) {
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
      t[i] = 1e3 * ms;
    }
    rep_med.push_back(median_of(t));
    all.insert(all.end(), t.begin(), t.end());
  }
  for (auto &e : ev) CK(cudaEventDestroy(e));
  std::sort(all.begin(), all.end());
  Timing T;
  T.med = median_of(rep_med);
  T.rep_min = *std::min_element(rep_med.begin(), rep_med.end());
  T.rep_max = *std::max_element(rep_med.begin(), rep_med.end());
  T.q1 = sorted_quantile(all, 0.25);
  T.q3 = sorted_quantile(all, 0.75);
  T.mn = all.front();
  T.mx = all.back();
  return T;
}

/* 2-norm of (y - ref) / 2-norm of ref for the first copy's y. */
static double rel_err(const double *dy, const std::vector<double> &ref) {
  std::vector<double> y(ref.size());
  CK(cudaMemcpy(y.data(), dy, 8.0 * y.size(), cudaMemcpyDeviceToHost));
  return mx_rel_err(y, ref);
}

struct Request {
  mx_plan plan;
  std::string error;
};

static Request parse_request(const char *line) {
  Request q;
  char mode[32], cold[32], extra[8];
  if (sscanf(line, "%lf %lf %31s %31s %7s", &q.plan.crux.tau_c, &q.plan.crux.tau_r, mode, cold, extra) != 4)
    q.error = "request must be: TAU_C TAU_R MODE COLD";
  else if (mx_plan_mode_parse(mode, &q.plan.mode) || mx_plan_cold_parse(cold, &q.plan.cold))
    q.error = "unknown mode or cold kernel";
  else if (mx_plan_check(&q.plan) != MX_OK)
    q.error = "crux outside 0 <= tau_r <= tau_c <= 1";
  return q;
}

static void answer_error(const mx_plan &p, const std::string &msg) {
  printf("{\"ok\": 0, \"tc\": %.17g, \"tr\": %.17g, \"mode_req\": \"%s\", \"cold\": \"%s\", \"error\": \"%s\"}\n",
         p.crux.tau_c, p.crux.tau_r, mx_plan_mode_name(p.mode), mx_plan_cold_name(p.cold), msg.c_str());
}

/* Under -compress auto, as MatXtractCompress does: compress D (the cold region's row patterns or pack,
 * the SE hot values) and time it when anything it reads is packed; *T becomes the packed time (*packed
 * 1) when faster on a cold kernel that reads packs (the PETSc guard keeps the faster), and always on
 * cuSPARSE (no guard there: only the SE hot values can be packed). 0, or 1 with *why set (D then
 * unusable). */
static int time_packed(mx_device *D, const Vectors &V, const std::vector<double> &ref, cudaStream_t s, const Opts &o,
                       Timing *T, int *packed, std::string *why) {
  *packed = 0;
  const mx_cold_kernel k = mx_device_cold_kernel(D);
  if (!o.compress) return 0;
  const mx_pack_request rq = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_device_pack_info pi;
  if (mx_device_compress(D, &rq) || mx_device_compress_info(D, &pi)) {
    *why = std::string("packing failed: ") + mx_device_last_error();
    return 1;
  }
  if (!((pi.packed && pi.in_use) || pi.hot_val_enc != MX_VAL_PLAIN)) return 0;
  if (mx_device_spmv(D, V.x[0], nullptr, V.y[0], (void *)s)) {
    *why = std::string("packed spmv failed: ") + mx_device_last_error();
    return 1;
  }
  CK(cudaStreamSynchronize(s));
  const double err = rel_err(V.y[0], ref);
  if (!(err < 1e-12)) {
    *why = "packed relative error " + std::to_string(err) + " >= 1e-12";
    return 1;
  }
  const Timing P = time_plan(D, V, s, o);
  const bool guarded = k == MX_COLD_SEGMENT || k == MX_COLD_MERGE;
  if (P.med < T->med || !guarded) {
    *T = P;
    *packed = 1;
  }
  return 0;
}

static void serve(const pred_matrix &P, const Vectors &V, const std::vector<double> &ref, cudaStream_t s, const Opts &o) {
  char line[512];
  while (fgets(line, sizeof line, stdin)) {
    if (!strncmp(line, "quit", 4)) break;
    if (line[strspn(line, " \t\r\n")] == 0) continue;
    Request q = parse_request(line);
    if (!q.error.empty()) {
      answer_error(q.plan, q.error);
      fflush(stdout);
      continue;
    }
    mx_device *D = nullptr;
    mx_format F;
    CK(cudaDeviceSynchronize());
    const double t0 = now_ms();
    if (build_plan(&P.A, q.plan, &F, &D)) {
      answer_error(q.plan, std::string("GPU build failed: ") + mx_device_last_error());
      fflush(stdout);
      continue;
    }
    CK(cudaDeviceSynchronize());
    const double build_ms = now_ms() - t0, upload_ms = 0.0; /* the build includes the CSR upload */
    if (mx_device_spmv(D, V.x[0], nullptr, V.y[0], (void *)s)) {
      answer_error(q.plan, std::string("spmv failed: ") + mx_device_last_error());
      mx_device_free(D);
      fflush(stdout);
      continue;
    }
    CK(cudaStreamSynchronize(s));
    const double err = rel_err(V.y[0], ref);
    if (!(err < 1e-12)) {
      answer_error(q.plan, "relative error " + std::to_string(err) + " >= 1e-12");
      mx_device_free(D);
      fflush(stdout);
      continue;
    }
    Timing T = time_plan(D, V, s, o);
    const double t_plain = T.med;
    int packed;
    std::string why;
    if (time_packed(D, V, ref, s, o, &T, &packed, &why)) {
      answer_error(q.plan, why);
      mx_device_free(D);
      fflush(stdout);
      continue;
    }
    const char *built = F.mode == MX_HOT_DU ? "du" : F.mode == MX_HOT_SE ? "se" : "none";
    printf("{\"ok\": 1, \"tc\": %.17g, \"tr\": %.17g, \"mode_req\": \"%s\", \"cold\": \"%s\", \"cold_run\": \"%s\", "
           "\"mode\": \"%s\", \"hot_nnz\": %d, \"hot_share\": %.6g, \"build_ms\": %.4f, \"upload_ms\": %.4f, "
           "\"rel_err\": %.3g, \"t_us\": %.4f, \"rep_min_us\": %.4f, \"rep_max_us\": %.4f, \"q1_us\": %.4f, "
           "\"q3_us\": %.4f, \"min_us\": %.4f, \"max_us\": %.4f, \"packed\": %d, \"t_plain_us\": %.4f}\n",
           q.plan.crux.tau_c, q.plan.crux.tau_r, mx_plan_mode_name(q.plan.mode), mx_plan_cold_name(q.plan.cold),
           mx_plan_cold_name((mx_plan_cold)mx_device_cold_kernel(D)), built, (int)F.hot_nnz,
           F.nnz ? (double)F.hot_nnz / F.nnz : 0.0, build_ms, upload_ms, err, T.med, T.rep_min, T.rep_max, T.q1,
           T.q3, T.mn, T.mx, packed, t_plain);
    fflush(stdout);
    mx_device_free(D);
  }
}

static int usage() {
  fprintf(stderr, "usage: matxtract-label-runner (-gen SPEC [-seed N] | -f FILE) [-warmup W>=20] [-calls N>=100] [-repeats R>=2] [-compress auto|off]\n");
  return 2;
}

static bool parse_args(int argc, char **argv, Opts &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char *v = argv[++i];
    if (a == "-gen") o.spec = v;
    else if (a == "-f") o.path = v;
    else if (a == "-seed") o.seed = strtoull(v, nullptr, 10);
    else if (a == "-warmup") o.warmup = atoi(v);
    else if (a == "-calls") o.calls = atoi(v);
    else if (a == "-repeats") o.repeats = atoi(v);
    else if (a == "-compress" && (!strcmp(v, "auto") || !strcmp(v, "off"))) o.compress = !strcmp(v, "auto");
    else return false;
  }
  return (!o.spec) != (!o.path) && o.warmup >= 20 && o.calls >= 100 && o.repeats >= 2;
}

int main(int argc, char **argv) {
  Opts o;
  if (!parse_args(argc, argv, o)) return usage();
  if (mx_device_count() == 0) {
    fprintf(stderr, "matxtract-label-runner: no CUDA device\n");
    return 77;
  }
  pred_matrix P;
  char err[512];
  const double t0 = now_ms();
  if (pred_matrix_load(o.spec, o.path, o.seed, &P, err, sizeof err)) {
    fprintf(stderr, "matxtract-label-runner: %s\n", err);
    return 1;
  }
  const double load_ms = now_ms() - t0;
  mx_features f;
  if (mx_features_compute(&P.A, &f) != MX_OK) {
    fprintf(stderr, "matxtract-label-runner: features failed\n");
    return 1;
  }
  printf("features ");
  pred_print_features_json(stdout, &f);

  const int32_t m = P.A.nrows, n = P.A.ncols, nnz = P.A.rowptr[m];
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(n), ref(m, 0.0);
  for (auto &e : x) e = u(rng);
  for (int32_t i = 0; i < m; ++i)
    for (int32_t k = P.A.rowptr[i]; k < P.A.rowptr[i + 1]; ++k) ref[i] += P.A.val[k] * x[P.A.colidx[k]];

  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Vectors V;
  const double mbytes = (double)mx_csr_bytes(m, nnz) + 8.0 * (m + n);
  V.ncopy = mbytes < 2.0 * prop.l2CacheSize ? 8 : 1;
  for (int c = 0; c < V.ncopy; ++c) {
    double *dx, *dy;
    CK(cudaMalloc(&dx, 8.0 * std::max(n, 1)));
    CK(cudaMalloc(&dy, 8.0 * std::max(m, 1)));
    CK(cudaMemcpy(dx, x.data(), 8.0 * n, cudaMemcpyHostToDevice));
    V.x.push_back(dx);
    V.y.push_back(dy);
  }
  printf("matrix {\"nrows\": %d, \"ncols\": %d, \"nnz\": %d, \"load_ms\": %.1f, \"gpu\": \"%s\", \"l2_bytes\": %d, "
         "\"rotated_copies\": %d, \"warmup\": %d, \"calls\": %d, \"repeats\": %d}\nready\n",
         m, n, nnz, load_ms, prop.name, prop.l2CacheSize, V.ncopy, o.warmup, o.calls, o.repeats);
  fflush(stdout);
  serve(P, V, ref, s, o);
  for (int c = 0; c < V.ncopy; ++c) {
    CK(cudaFree(V.x[c]));
    CK(cudaFree(V.y[c]));
  }
  CK(cudaStreamDestroy(s));
  pred_matrix_free(&P);
  return 0;
}

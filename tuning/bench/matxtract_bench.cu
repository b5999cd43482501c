/* matxtract-bench - FP64 SpMV kernel benchmark: our format (all-cold (0,0) with each cold kernel,
 * and a list of cruxes) against cuSPARSE CSR ALG1/ALG2, following docs/BENCHMARKING.md:
 * same process and GPU, correctness vs a CPU double reference first (rel err < 1e-12), CUDA events,
 * >= 20 warm-up calls, median/min/max of >= 100 timed calls, x/y copies rotated when the matrix
 * bytes are under 2x L2, effective bandwidth as a fraction of the measured D2D copy bandwidth.
 *
 * matxtract-bench [-quick] [-corpus FILE] [-cache DIR] [-gen SPEC]... [-f FILE]... [-crux "tc,tr tc,tr ..."]
 *                 [-reps N] [-warmup N] [-jobs N] [-colperm] [-o DIR]
 * Writes DIR/spmv_kernels.csv (one row per matrix), DIR/spmv_cruxes.csv (one row per variant),
 * DIR/spmv_kernels_env.txt (GPU, driver, CUDA, date, command, model) and DIR/spmv_summary.md; prints
 * a compact table.
 *
 * Variants per matrix: (a) the predicted plan: the embedded model (mx_model_default, the one
 * -mat_type matxtract uses at default options) evaluated on the matrix's features over its candidate
 * plans (mx_predict_plan: what MatXtractPredict does when no option fixes a part of the plan); the
 * plan (crux, hot mode, cold kernel) is built, checked and timed like (b): columns t_pred_us,
 * crux_pred_tc/tr, pred_hot_mode, pred_cold_kernel, speedup_pred_vs_cusparse, features_ms (host
 * mx_features_compute) and predictor_ms (the model over every candidate), setup_pred_ms = features
 * + predictor + the plan's GPU build (mx_device_build, what the library runs on the GPU);
 * features_gpu_ms: the same features on the GPU (mx_device_features of the uploaded (0,0) matrix,
 * checked bitwise against the host's: features_gpu_same); (b) every
 * -crux (hot mode AUTO, cold kernel MX_COLD_TIMED: the fastest of ours and cuSPARSE, timed at
 * upload); (c) (0,0) with the segment and the merge cold kernel, and the kernel MX_COLD_AUTO's
 * row-length rule picks (t_default: the plan -mat_type matxtract starts on).
 * t_ours is the fastest of (b) and (c): an oracle over the tried cruxes, which the predicted plan is
 * not part of (t_pred_us / t_ours_us < 1: the prediction beat every tried crux); cuSPARSE CSR ALG1
 * and ALG2, each after cusparseSpMV_preprocess.
 *
 * Host time (the corpus must run in minutes): the next matrix is read (DIR/NAME.petsc from -cache,
 * written by tuning/bench/run_corpus.sh, else generated) and its CPU reference computed on a second
 * thread while the GPU times the current one; the -crux formats are built on -jobs threads at once
 * while the (0,0) variants and cuSPARSE are timed (the predicted plan's host format with them).
 * Features, the prediction and the (0,0) build are timed alone; the -crux build times are taken with
 * up to -jobs builds running at once (column setup_jobs).
 * -colperm (an experiment for x locality): every code runs on the matrix with its columns renumbered
 * by count, longest first; the gather of x into that order is timed apart and printed. */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <nvtx3/nvToolsExt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <algorithm>
#include <functional>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include "cuda_check.h"
#include "../common/rel_err.h"
#include "../common/event_timing.cuh"
#include "../common/csr32.h"
#include "../common/cusparse_check.h"

extern "C" {
#include "core/mx_features.h"
#include "core/mx_format.h"
#include "core/mx_plan.h"
#include "core/mx_predictor.h"
#include "cuda/mx_device.h"
#include "io/mx_io.h"
}

#ifndef MX_SOURCE_DIR
#define MX_SOURCE_DIR "."
#endif

static double now_ms() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

struct MatSrc {
  std::string name, src, family; /* src: "gen:SPEC" | "file:PATH" */
  std::string cache;             /* cached PETSc binary of the spec ("" = none) */
};

struct Opts {
  bool quick = false;
  std::string corpus = std::string(MX_SOURCE_DIR) + "/tuning/gen/corpus.txt";
  std::string cache;
  std::vector<MatSrc> mats;
  std::vector<mx_crux> cruxes = {{0.6, 0.2}, {0.7, 0.5}, {0.9, 0.8}, {1.0, 1.0}};
  int reps = 100, warmup = 20, jobs = 0;
  std::string out = ".";
};

struct Csr {
  int32_t nrows = 0, ncols = 0;
  std::vector<int32_t> rowptr, col;
  std::vector<double> val;
  int32_t nnz() const { return rowptr[nrows]; }
};


/* ---- environment ---------------------------------------------------------------------------------- */

static cudaStream_t g_stream;
static size_t g_l2 = 0;
static int g_wrong = 0;

/* Median/min/max over reps calls of f(i), each bracketed by events on g_stream. */
static Timing time_calls(const std::function<void(int)> &f, int warmup, int reps) { return mx_time_calls(g_stream, f, warmup, reps); }

/* The warm-up and timed calls of one variant inside the NVTX range `range`, so a profiler can select
 * exactly them (tuning/profile/ncu_cold.sh: ncu --nvtx --nvtx-include "merge00/"). */
static Timing time_calls(const char *range, const std::function<void(int)> &f, int warmup, int reps) {
  nvtxRangePushA(range);
  const Timing t = time_calls(f, warmup, reps);
  nvtxRangePop();
  return t;
}

/* Run-to-run reproducibility: how many of REPRO_RUNS further calls of f (each into an output
 * poisoned first) give a y that differs bitwise from the first call's. cuSPARSE promises identical
 * results for CSR ALG2 only; our kernels have no floating-point atomics and must always give 0. */
#define REPRO_RUNS 20
static int differing_runs(const std::function<void()> &f, double *dy, int m) {
  std::vector<double> first(m), again(m);
  f();
  CK(cudaStreamSynchronize(g_stream));
  CK(cudaMemcpy(first.data(), dy, 8.0 * m, cudaMemcpyDeviceToHost));
  int differ = 0;
  for (int k = 0; k < REPRO_RUNS; ++k) {
    CK(cudaMemsetAsync(dy, 0xff, 8.0 * m, g_stream));
    f();
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpy(again.data(), dy, 8.0 * m, cudaMemcpyDeviceToHost));
    differ += memcmp(first.data(), again.data(), 8.0 * m) != 0;
  }
  return differ;
}

/* Device-to-device copy bandwidth (bytes read + written per second), median of 20 copies of 1 GiB. */
static double copy_bandwidth() { return mx_copy_bandwidth(g_stream); }

/* ---- matrices --------------------------------------------------------------------------------------- */

static bool ends_with(const std::string &s, const char *suf) {
  size_t n = strlen(suf);
  return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
}

/* The cache entry is used only when its .spec sidecar holds exactly this spec. */
static bool cache_matches(const std::string &path, const std::string &spec) {
  FILE *f = fopen((path.substr(0, path.size() - 6) + ".spec").c_str(), "r");
  if (!f) return false;
  char buf[512] = "";
  bool ok = fgets(buf, sizeof buf, f) != nullptr;
  fclose(f);
  std::string s = ok ? buf : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  struct stat st;
  return s == spec && stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

static bool load(const MatSrc &ms, Csr *A, std::string *how) {
  mx_io_csr B;
  memset(&B, 0, sizeof B);
  char err[512];
  int rc;
  const std::string &src = ms.src;
  if (src.rfind("gen:", 0) == 0 && !ms.cache.empty() && cache_matches(ms.cache, src.substr(4))) {
    rc = mx_petsc_read(ms.cache.c_str(), &B, err, sizeof err);
    *how = "cache";
  } else if (src.rfind("gen:", 0) == 0) {
    rc = mx_gen(src.c_str() + 4, 0, &B, err, sizeof err);
    *how = "gen";
  } else if (ends_with(src, ".mtx")) {
    rc = mx_mtx_read(src.c_str() + 5, &B, err, sizeof err);
    *how = "mtx";
  } else {
    rc = mx_petsc_read(src.c_str() + 5, &B, err, sizeof err);
    *how = "petsc";
  }
  if (rc) {
    fprintf(stderr, "skip %s: %s\n", ms.name.c_str(), err);
    return false;
  }
  return mx_csr32_take(&B, A, ms.name.c_str());
}

static std::string family_of(const std::string &spec) { return spec.substr(0, spec.find(':')); }

/* Corpus lines: NAME SPEC [quick] ... ('#' comments). The spec is the first token with a ':'. */
static void read_corpus(Opts &o) {
  FILE *f = fopen(o.corpus.c_str(), "r");
  if (!f) {
    fprintf(stderr, "no corpus %s: using the built-in quick list\n", o.corpus.c_str());
    const char *q[] = {"kron:18:16", "lap2d:1000", "lap3d:100", "band:2000000:5", "chunglu:1000000:16:2.1"};
    for (const char *s : q) o.mats.push_back({s, std::string("gen:") + s, family_of(s), ""});
    return;
  }
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char *h = strchr(line, '#');
    if (h) *h = 0;
    std::vector<std::string> tok;
    for (char *t = strtok(line, " \t\r\n,"); t; t = strtok(nullptr, " \t\r\n,")) tok.push_back(t);
    if (tok.empty()) continue;
    std::string spec, name = tok[0];
    bool quick = false;
    for (auto &t : tok) {
      if (spec.empty() && t.find(':') != std::string::npos) spec = t;
      if (t == "quick") quick = true;
    }
    if (spec.empty()) continue;
    if (o.quick && !quick) continue;
    o.mats.push_back({name, "gen:" + spec, family_of(spec), o.cache.empty() ? "" : o.cache + "/" + name + ".petsc"});
  }
  fclose(f);
}

/* A matrix with its x and CPU double reference y = A x, made on the prefetch thread. */
struct Loaded {
  bool ok = false;
  Csr A;
  std::vector<double> x, ref;
  std::vector<int32_t> old_of; /* -colperm only */
  double load_ms = 0, ref_ms = 0;
  std::string how;
};

/* -colperm: columns renumbered by count, the longest first (ties by index), rows re-sorted; old_of[j]
 * is the original index of new column j, what a product gathers x through */
static bool g_colperm = false;
static void renumber_columns_by_count(Csr *A, std::vector<int32_t> *old_of) {
  std::vector<int64_t> cnt(A->ncols, 0);
  for (int32_t c : A->col) cnt[c]++;
  old_of->resize(A->ncols);
  for (int32_t j = 0; j < A->ncols; ++j) (*old_of)[j] = j;
  std::stable_sort(old_of->begin(), old_of->end(), [&](int32_t a, int32_t b) { return cnt[a] > cnt[b]; });
  std::vector<int32_t> new_of(A->ncols);
  for (int32_t j = 0; j < A->ncols; ++j) new_of[(*old_of)[j]] = j;
  std::vector<std::pair<int32_t, double>> row;
  for (int32_t i = 0; i < A->nrows; ++i) {
    row.clear();
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; ++p) row.push_back({new_of[A->col[p]], A->val[p]});
    std::sort(row.begin(), row.end(), [](const std::pair<int32_t, double> &a, const std::pair<int32_t, double> &b) { return a.first < b.first; });
    for (size_t k = 0; k < row.size(); ++k) {
      A->col[A->rowptr[i] + k] = row[k].first;
      A->val[A->rowptr[i] + k] = row[k].second;
    }
  }
}

__global__ static void gather_kernel(int32_t n, const int32_t *old_of, const double *x, double *xp) {
  const int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) xp[j] = x[old_of[j]];
}

static Loaded load_full(const MatSrc &ms, uint64_t seed) {
  Loaded L;
  double t0 = now_ms();
  if (!load(ms, &L.A, &L.how)) return L;
  if (g_colperm) renumber_columns_by_count(&L.A, &L.old_of);
  L.load_ms = now_ms() - t0;
  const Csr &A = L.A;
  if (A.nrows == 0 || A.ncols == 0) return L;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  L.x.resize(A.ncols);
  for (auto &e : L.x) e = u(rng);
  t0 = now_ms();
  L.ref.assign(A.nrows, 0.0);
  for (int32_t i = 0; i < A.nrows; ++i) {
    double s = 0;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; ++p) s += A.val[p] * L.x[A.col[p]];
    L.ref[i] = s;
  }
  L.ref_ms = now_ms() - t0;
  L.ok = true;
  return L;
}

/* -colperm: what one product's gather of x into the renumbered order costs (median us) */
static void print_gather_time(const std::string &name, const std::vector<int32_t> &old_of) {
  const int32_t n = (int32_t)old_of.size();
  int32_t *d_old_of;
  double *d_x, *d_xp;
  CK(cudaMalloc(&d_old_of, 4.0 * std::max(n, 1)));
  CK(cudaMalloc(&d_x, 8.0 * std::max(n, 1)));
  CK(cudaMalloc(&d_xp, 8.0 * std::max(n, 1)));
  CK(cudaMemcpy(d_old_of, old_of.data(), 4.0 * n, cudaMemcpyHostToDevice));
  CK(cudaMemset(d_x, 0, 8.0 * n));
  const Timing t = time_calls([&](int) { gather_kernel<<<(n + 255) / 256, 256, 0, g_stream>>>(n, d_old_of, d_x, d_xp); }, 20, 100);
  CK(cudaGetLastError());
  printf("# %s: gather of x into the column order by count: %.1f us\n", name.c_str(), t.med);
  CK(cudaFree(d_old_of));
  CK(cudaFree(d_x));
  CK(cudaFree(d_xp));
}

/* ---- one matrix -------------------------------------------------------------------------------------- */

struct DevCsr {
  int32_t *rowptr = nullptr, *col = nullptr;
  double *val = nullptr;
};


struct Variant {
  std::string label;
  mx_crux crux;
  std::string mode, cold;
  double hot_share = 0, setup_ms = 0, upload_ms = 0, err = 0;
  double gpu_build_ms = 0, gpu_build_peak_mb = 0; /* mx_device_build of the same crux and kernel */
  int setup_jobs = 1, differ = 0, gpu_build_same = 0; /* 1: its y equals the uploaded format's bitwise */
  size_t fbytes = 0;
  Timing t;
};

/* A host format build, possibly on a worker thread. */
struct Built {
  mx_format F;
  mx_status st = MX_ERR_ARG;
  double ms = 0;
};

static const char *mode_name(mx_hot_mode m) { return m == MX_HOT_DU ? "du" : m == MX_HOT_SE ? "se" : "none"; }
static const char *cold_name(mx_cold_kernel k) {
  return k == MX_COLD_MERGE ? "merge" : k == MX_COLD_CUSPARSE ? "cusparse" : "segment";
}

static std::string csv_quote(const std::string &s) {
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

int main(int argc, char **argv) {
  Opts o;
  bool explicit_mats = false;
  std::string cmdline;
  for (int i = 0; i < argc; ++i) cmdline += std::string(i ? " " : "") + argv[i];
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s needs an argument\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "-quick") o.quick = true;
    else if (a == "-corpus") o.corpus = next();
    else if (a == "-cache") o.cache = next();
    else if (a == "-gen") {
      std::string s = next();
      o.mats.push_back({s, "gen:" + s, family_of(s), ""});
      explicit_mats = true;
    } else if (a == "-f") {
      std::string s = next();
      o.mats.push_back({s.substr(s.rfind('/') + 1), "file:" + s, "file", ""});
      explicit_mats = true;
    } else if (a == "-o") o.out = next();
    else if (a == "-reps") o.reps = std::max(100, atoi(next().c_str()));
    else if (a == "-warmup") o.warmup = std::max(20, atoi(next().c_str()));
    else if (a == "-colperm") g_colperm = true;
    else if (a == "-jobs") o.jobs = std::max(1, atoi(next().c_str()));
    else if (a == "-crux") {
      o.cruxes.clear();
      std::string s = next();
      for (char *t = strtok(&s[0], " ;"); t; t = strtok(nullptr, " ;")) {
        mx_crux c;
        if (sscanf(t, "%lf,%lf", &c.tau_c, &c.tau_r) == 2) o.cruxes.push_back(c);
      }
    } else {
      fprintf(stderr, "usage: matxtract-bench [-quick] [-corpus F] [-cache DIR] [-gen SPEC]... [-f F.mtx|F.petsc]... "
                      "[-crux \"tc,tr ...\"] [-reps N] [-warmup N] [-jobs N] [-colperm] [-o DIR]\n");
      return 2;
    }
  }
  if (!explicit_mats) read_corpus(o);
  if (o.jobs == 0) o.jobs = std::max(1, std::min<int>((int)o.cruxes.size(), (int)std::thread::hardware_concurrency() - 2));
  if (mx_device_count() == 0) {
    fprintf(stderr, "no CUDA device\n");
    return 77;
  }
  mkdir(o.out.c_str(), 0755);
  const mx_model *model = mx_model_default(); /* what -mat_type matxtract predicts with at default options */

  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_l2 = prop.l2CacheSize;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  cusparseHandle_t hs;
  SP(cusparseCreate(&hs));
  SP(cusparseSetStream(hs, g_stream));
  int csv = 0;
  cusparseGetVersion(hs, &csv);
  const double bw = copy_bandwidth();
  char date[64];
  {
    time_t tt = time(nullptr);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
  }
  printf("# %s, %d SMs, L2 %.0f MB, CUDA driver %d runtime %d, cuSPARSE %d, D2D copy %.0f GB/s (read+write), %s\n",
         prop.name, prop.multiProcessorCount, g_l2 / 1e6, drv, rt, csv, bw / 1e9, date);
  printf("# %s\n", cmdline.c_str());
  printf("# predictor: embedded model, %d candidate plans, %d trees; trained on: %s\n", (int)model->ncandidates,
         (int)model->ntrees, model->trained_on);
  {
    FILE *fe = fopen((o.out + "/spmv_kernels_env.txt").c_str(), "w");
    if (fe) {
      fprintf(fe, "gpu_name=%s\nsms=%d\nl2_bytes=%zu\ncuda_driver=%d\ncuda_runtime=%d\ncusparse=%d\nd2d_copy_GBps=%.1f\n"
                  "date=%s\ncommand=%s\nreps=%d\nwarmup=%d\njobs=%d\nmodel_candidates=%d\nmodel_trees=%d\n"
                  "model_trained_on=%s\n",
              prop.name, prop.multiProcessorCount, g_l2, drv, rt, csv, bw / 1e9, date, cmdline.c_str(), o.reps, o.warmup,
              o.jobs, (int)model->ncandidates, (int)model->ntrees, model->trained_on);
      fclose(fe);
    }
  }

  FILE *fk = fopen((o.out + "/spmv_kernels.csv").c_str(), "w");
  FILE *fc = fopen((o.out + "/spmv_cruxes.csv").c_str(), "w");
  FILE *fm = fopen((o.out + "/spmv_summary.md").c_str(), "w");
  if (!fk || !fc || !fm) {
    fprintf(stderr, "cannot write to %s\n", o.out.c_str());
    return 2;
  }
  fprintf(fk, "matrix,family,spec,rows,cols,nnz,crux_tc,crux_tr,crux_choice,hot_nnz_share,hot_mode,format_bytes,csr_bytes,"
              "t_ours_us,t_ours_min_us,t_ours_max_us,t_cold_only_us,t_default_us,t_pred_us,crux_pred_tc,crux_pred_tr,"
              "t_cusparse_alg1_us,t_cusparse_alg1_min_us,t_cusparse_alg1_max_us,t_cusparse_alg2_us,"
              "t_cusparse_alg2_min_us,t_cusparse_alg2_max_us,gflops,gflops_cusparse,bw_frac_ours,bw_frac_cold,"
              "bw_frac_cusparse,features_ms,predictor_ms,setup_host_ms,upload_ms,setup_jobs,setup_ours_ms,"
              "setup_default_ms,cusparse_upload_ms,cusparse_setup_ms,setup_cusparse_ms,breakeven_its_cusparse,"
              "t_segment_us,t_merge_us,auto_kernel,cold_row_max,cold_row_cv,rotated_copies,matrix_bytes_over_l2,"
              "load_ms,load_how,ref_ms,d2d_copy_GBps,differing_runs_alg1,differing_runs_alg2,differing_runs_default,"
              "pred_hot_mode,pred_cold_kernel,speedup_pred_vs_cusparse,t_pred_min_us,t_pred_max_us,pred_hot_mode_requested,"
              "pred_cold_requested,pred_candidate,pred_model_ratio,pred_measured_ratio,pred_hot_nnz_share,pred_format_bytes,"
              "pred_gpu_build_ms,setup_pred_ms,differing_runs_pred,pred_vs_ours,pred_vs_default,breakeven_its_pred_cusparse,"
              "features_gpu_ms,features_gpu_same\n");
  fprintf(fc, "matrix,crux_tc,crux_tr,hot_mode,cold_kernel,hot_nnz_share,format_bytes,t_med_us,t_min_us,t_max_us,"
              "setup_host_ms,upload_ms,rel_err,setup_jobs,differing_runs,gpu_build_ms,gpu_build_peak_mb,gpu_build_same,variant\n");
  fprintf(fm, "# matxtract-bench\n\nGPU: %s (%d SMs, L2 %.0f MB), CUDA driver %d, runtime %d; D2D copy %.0f GB/s; %s.\n"
              "Command: `%s`\n\n"
              "Times: median of %d calls after %d warm-up (us). Speedup = best cuSPARSE / ours. 'pred' is the plan the "
              "embedded model predicts from the matrix's features (crux, hot mode requested/resolved, cold kernel; what "
              "-mat_type matxtract runs at default options once it predicts), 'ours' the fastest tried crux (an oracle "
              "over (0,0) and the -crux list, the prediction not included), (0,0) the plan -mat_type matxtract starts on.\n"
              "Model: %d candidate plans, %d trees; trained on: %s.\n\n"
              "| matrix | rows | nnz | crux | mode | hot%% | ours | (0,0) seg | (0,0) merge | cuSP ALG1 | cuSP ALG2 | speedup | cold/cuSP | bw ours "
              "| pred plan | pred | pred speedup | pred/ours |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          prop.name, prop.multiProcessorCount, g_l2 / 1e6, drv, rt, bw / 1e9, date, cmdline.c_str(), o.reps, o.warmup,
          (int)model->ncandidates, (int)model->ntrees, model->trained_on);
  printf("# ours = the fastest tried crux (oracle); pred = the embedded model's plan (crux hot-mode/cold-kernel); "
         "speedups = best cuSPARSE / time\n");
  printf("%-24s %9s %10s %9s %4s %5s %9s %9s %9s %9s %9s %7s %7s %-22s %9s %7s %8s\n", "matrix", "rows", "nnz", "crux", "mode", "hot%",
         "ours_us", "seg00_us", "mrg00_us", "cusp1_us", "cusp2_us", "speedup", "cold/cs", "pred", "pred_us", "spd_pr", "host_s");

  const double t_start = now_ms();
  std::string alg1_differs; /* matrices on which ALG1 was not bitwise reproducible */
  std::future<Loaded> pending;
  if (!o.mats.empty()) pending = std::async(std::launch::async, load_full, o.mats[0], 12345);
  for (size_t mi = 0; mi < o.mats.size(); ++mi) {
    const MatSrc &mat = o.mats[mi];
    const double t_mat = now_ms();
    Loaded L = pending.get();
    if (mi + 1 < o.mats.size()) pending = std::async(std::launch::async, load_full, o.mats[mi + 1], 12345 + mi + 1);
    if (!L.ok) continue;
    const Csr &A = L.A;
    const int32_t m = A.nrows, n = A.ncols, nnz = A.nnz();
    const std::vector<double> &x = L.x, &ref = L.ref;
    std::vector<double> yh(m), yh2(m);


    mx_csr a = {m, n, A.rowptr.data(), A.col.data(), A.val.data()};
    /* features and the prediction (each timed alone), then the (0,0) build (timed alone) */
    mx_features feat;
    double t0 = now_ms();
    const mx_status fst = mx_features_compute(&a, &feat);
    const double features_ms = now_ms() - t0;
    /* the predicted plan: the embedded model over its candidates (timed alone), as MatXtractPredict
     * at default options (nothing fixed by an option) */
    mx_prediction pred;
    t0 = now_ms();
    const bool have_pred = fst == MX_OK && mx_predict_plan(model, &feat, &pred) == MX_OK;
    const double predictor_ms = now_ms() - t0;
    if (!have_pred) fprintf(stderr, "%s: no prediction (features status %d)\n", mat.name.c_str(), (int)fst);
    Built b00;
    t0 = now_ms();
    b00.st = mx_format_build_borrow(&a, mx_crux{0, 0}, MX_MODE_AUTO, &b00.F); /* as -mat_type matxtract: no copy */
    b00.ms = now_ms() - t0;
    if (b00.st != MX_OK) {
      fprintf(stderr, "%s: build failed at (0,0)\n", mat.name.c_str());
      continue;
    }

    /* x copies: rotate when the matrix would sit in L2 */
    const size_t mbytes = mx_csr_bytes(m, nnz) + 8.0 * (m + n);
    const int ncopy = mbytes < 2 * g_l2 ? 8 : 1;
    std::vector<double *> dx(ncopy), dy(ncopy);
    for (int c = 0; c < ncopy; ++c) {
      CK(cudaMalloc(&dx[c], 8.0 * n));
      CK(cudaMalloc(&dy[c], 8.0 * m));
      CK(cudaMemcpy(dx[c], x.data(), 8.0 * n, cudaMemcpyHostToDevice));
    }
    auto check_y = [&](double *d) {
      CK(cudaStreamSynchronize(g_stream));
      CK(cudaMemcpy(yh.data(), d, 8.0 * m, cudaMemcpyDeviceToHost));
      return mx_rel_err(yh, ref);
    };
    /* the -crux formats and the predicted plan's (last), built on worker threads while the GPU
     * times (0,0) and cuSPARSE; the predicted one as the library builds a plan (borrowing the input
     * where the crux selects no hot nonzero) */
    const size_t ncx = o.cruxes.size(), nbuild = ncx + (have_pred ? 1 : 0);
    std::vector<Built> bc(nbuild);
    std::vector<std::thread> workers;
    {
      const int jobs = o.jobs;
      auto work = [&, jobs](int w) { /* jobs by value: the threads outlive this block */
        for (size_t k = w; k < nbuild; k += jobs) {
          double s = now_ms();
          if (k < ncx) bc[k].st = mx_format_build(&a, o.cruxes[k], MX_MODE_AUTO, &bc[k].F);
          else bc[k].st = mx_format_build_borrow(&a, pred.plan.crux, pred.plan.mode, &bc[k].F);
          bc[k].ms = now_ms() - s;
        }
      };
      for (int w = 0; w < jobs && (size_t)w < nbuild; ++w) workers.emplace_back(work, w);
    }
    const int setup_jobs = (int)std::min<size_t>(o.jobs, ncx);
    const int pred_jobs = (int)std::min<size_t>(o.jobs, nbuild);

    /* --- ours: upload a built format, check, time --- */
    std::vector<Variant> vs;
    auto run_ours = [&](const mx_format &F, double build_ms, int jobs, mx_cold_kernel ck, const char *label,
                        mx_cold_kernel *resolved, mx_mode_request mode_req) -> bool {
      Variant v;
      v.label = label;
      v.crux = F.crux;
      v.setup_ms = build_ms;
      v.setup_jobs = jobs;
      mx_device *D;
      double s = now_ms();
      if (mx_device_upload(&F, ck, &D)) {
        fprintf(stderr, "%s: upload failed: %s\n", mat.name.c_str(), mx_device_last_error());
        return false;
      }
      CK(cudaDeviceSynchronize());
      v.upload_ms = now_ms() - s;
      if (resolved) *resolved = mx_device_cold_kernel(D);
      v.mode = mode_name(F.mode);
      v.cold = cold_name(mx_device_cold_kernel(D));
      v.hot_share = nnz ? (double)F.hot_nnz / nnz : 0;
      v.fbytes = mx_format_bytes(&F);
      CK(cudaMemsetAsync(dy[0], 0xff, 8.0 * m, g_stream));
      if (mx_device_spmv(D, dx[0], nullptr, dy[0], g_stream)) {
        fprintf(stderr, "%s: spmv failed: %s\n", mat.name.c_str(), mx_device_last_error());
        exit(2);
      }
      v.err = check_y(dy[0]);
      if (!(v.err < 1e-12)) {
        fprintf(stderr, "%s: WRONG result at (%g,%g) %s %s: rel err %g (variant skipped)\n", mat.name.c_str(),
                F.crux.tau_c, F.crux.tau_r, v.mode.c_str(), v.cold.c_str(), v.err);
        g_wrong = 1;
        mx_device_free(D);
        return false;
      }
      v.t = time_calls(label, [&](int i) { mx_device_spmv(D, dx[i % ncopy], nullptr, dy[i % ncopy], g_stream); }, o.warmup,
                       o.reps);
      v.differ = differing_runs([&]() { mx_device_spmv(D, dx[0], nullptr, dy[0], g_stream); }, dy[0], m);
      if (v.differ) {
        fprintf(stderr, "%s: NOT REPRODUCIBLE at (%g,%g) %s %s: %d of %d runs differ bitwise\n", mat.name.c_str(),
                F.crux.tau_c, F.crux.tau_r, v.mode.c_str(), v.cold.c_str(), v.differ, REPRO_RUNS);
        g_wrong = 1;
      }
      const mx_cold_kernel kernel = mx_device_cold_kernel(D);
      mx_device_free(D);
      /* the same crux and hot mode request built on the GPU (mx_device_build: one CSR upload + the
       * build), its cold kernel forced to the one the upload resolved to, so that y must be bitwise
       * the same */
      yh2.assign(m, 0.0);
      CK(cudaMemcpy(yh2.data(), dy[0], 8.0 * m, cudaMemcpyDeviceToHost));
      mx_format shell;
      CK(cudaDeviceSynchronize());
      s = now_ms();
      if (mx_device_build(&a, F.crux, mode_req, kernel, MX_XHOT_AUTO, &shell, &D)) {
        fprintf(stderr, "%s: GPU build failed at (%g,%g): %s\n", mat.name.c_str(), F.crux.tau_c, F.crux.tau_r, mx_device_last_error());
        g_wrong = 1;
      } else {
        CK(cudaDeviceSynchronize());
        v.gpu_build_ms = now_ms() - s;
        v.gpu_build_peak_mb = mx_device_build_peak_bytes(D) / 1e6;
        CK(cudaMemsetAsync(dy[0], 0xff, 8.0 * m, g_stream));
        if (mx_device_spmv(D, dx[0], nullptr, dy[0], g_stream)) exit(2);
        CK(cudaStreamSynchronize(g_stream));
        CK(cudaMemcpy(yh.data(), dy[0], 8.0 * m, cudaMemcpyDeviceToHost));
        v.gpu_build_same = m == 0 || memcmp(yh.data(), yh2.data(), 8.0 * m) == 0;
        if (!v.gpu_build_same) {
          fprintf(stderr, "%s: GPU-built format differs from the uploaded one at (%g,%g)\n", mat.name.c_str(), F.crux.tau_c, F.crux.tau_r);
          g_wrong = 1;
        }
        mx_device_free(D);
      }
      vs.push_back(v);
      return true;
    };
    bool ok00 = run_ours(b00.F, b00.ms, 1, MX_COLD_SEGMENT, "seg00", nullptr, MX_MODE_AUTO);
    ok00 = run_ours(b00.F, b00.ms, 1, MX_COLD_MERGE, "merge00", nullptr, MX_MODE_AUTO) && ok00;
    /* AUTO: the kernel -mat_type matxtract starts on at (0,0) */
    ok00 = run_ours(b00.F, b00.ms, 1, MX_COLD_AUTO, "auto00", nullptr, MX_MODE_AUTO) && ok00;
    const std::string autok = ok00 ? vs[2].cold : "";
    const double auto_upload_ms = ok00 ? vs[2].upload_ms : 0;
    /* the same features on the GPU (mx_device_features, what the library computes when the device
     * holds the plain (0,0) matrix): timed, and checked bitwise against the host's */
    double features_gpu_ms = -1;
    int features_gpu_same = -1;
    {
      mx_device *D;
      if (fst == MX_OK && !mx_device_upload_xhot(&b00.F, MX_COLD_AUTO, 0, &D)) {
        mx_features fg;
        CK(cudaDeviceSynchronize());
        const double s = now_ms();
        const int rc = mx_device_features(D, &fg);
        features_gpu_ms = now_ms() - s;
        if (rc) {
          fprintf(stderr, "%s: features on the GPU failed: %s\n", mat.name.c_str(), mx_device_last_error());
          features_gpu_ms = -1;
        } else {
          features_gpu_same = memcmp(&fg, &feat, sizeof fg) == 0;
          if (!features_gpu_same) {
            fprintf(stderr, "%s: features on the GPU differ from the host's\n", mat.name.c_str());
            g_wrong = 1;
          }
        }
        mx_device_free(D);
      }
    }
    mx_format_free(&b00.F);

    int64_t rmax = 0;
    double mean = (double)nnz / m, s2 = 0;
    for (int32_t i = 0; i < m; ++i) {
      int64_t l = A.rowptr[i + 1] - A.rowptr[i];
      rmax = std::max(rmax, l);
      s2 += (l - mean) * (l - mean);
    }
    const double cv = mean > 0 ? sqrt(s2 / m) / mean : 0;

    /* --- cuSPARSE (timed while the crux formats build on the host) --- */
    DevCsr dc;
    t0 = now_ms();
    CK(cudaMalloc(&dc.rowptr, 4.0 * (m + 1)));
    CK(cudaMalloc(&dc.col, 4.0 * std::max(nnz, 1)));
    CK(cudaMalloc(&dc.val, 8.0 * std::max(nnz, 1)));
    CK(cudaMemcpy(dc.rowptr, A.rowptr.data(), 4.0 * (m + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc.col, A.col.data(), 4.0 * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc.val, A.val.data(), 8.0 * nnz, cudaMemcpyHostToDevice));
    const double cs_upload_ms = now_ms() - t0;
    Timing tcs[2];
    double cs_setup[2];
    int cs_differ[2];
    const double alpha = 1.0, beta = 0.0;
    const cusparseSpMVAlg_t algs[2] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};
    for (int k = 0; k < 2; ++k) {
      t0 = now_ms();
      cusparseSpMatDescr_t mA;
      std::vector<cusparseDnVecDescr_t> vx(ncopy), vy(ncopy);
      SP(cusparseCreateCsr(&mA, m, n, nnz, dc.rowptr, dc.col, dc.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      for (int c = 0; c < ncopy; ++c) {
        SP(cusparseCreateDnVec(&vx[c], n, dx[c], CUDA_R_64F));
        SP(cusparseCreateDnVec(&vy[c], m, dy[c], CUDA_R_64F));
      }
      size_t bsz = 0;
      void *buf = nullptr;
      SP(cusparseSpMV_bufferSize(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F,
                                  algs[k], &bsz));
      CK(cudaMalloc(&buf, std::max<size_t>(bsz, 16)));
      SP(cusparseSpMV_preprocess(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F,
                                  algs[k], buf));
      CK(cudaStreamSynchronize(g_stream));
      cs_setup[k] = now_ms() - t0;
      CK(cudaMemsetAsync(dy[0], 0xff, 8.0 * m, g_stream));
      SP(cusparseSpMV(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F, algs[k], buf));
      const double e = check_y(dy[0]);
      if (!(e < 1e-12)) {
        fprintf(stderr, "%s: cuSPARSE ALG%d rel err %g\n", mat.name.c_str(), k + 1, e);
        exit(3);
      }
      tcs[k] = time_calls(k == 0 ? "cusparse_alg1" : "cusparse_alg2", [&](int i) {
        cusparseSpMV(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[i % ncopy], &beta, vy[i % ncopy], CUDA_R_64F,
                     algs[k], buf);
      }, o.warmup, o.reps);
      cs_differ[k] = differing_runs([&]() {
        cusparseSpMV(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mA, vx[0], &beta, vy[0], CUDA_R_64F, algs[k], buf);
      }, dy[0], m);
      fprintf(fc, "%s,cusparse,alg%d,,,,%zu,%.2f,%.2f,%.2f,%.3f,%.3f,%.3g,,%d,,,,cusparse_alg%d\n", mat.name.c_str(), k + 1,
              mx_csr_bytes(m, nnz), tcs[k].med, tcs[k].mn, tcs[k].mx, cs_setup[k], cs_upload_ms, e, cs_differ[k], k + 1);
      CK(cudaFree(buf));
      for (int c = 0; c < ncopy; ++c) {
        cusparseDestroyDnVec(vx[c]);
        cusparseDestroyDnVec(vy[c]);
      }
      cusparseDestroySpMat(mA);
    }
    if (cs_differ[0]) alg1_differs += " " + mat.name + " (" + std::to_string(cs_differ[0]) + "/" + std::to_string(REPRO_RUNS) + ")";
    CK(cudaFree(dc.rowptr));
    CK(cudaFree(dc.col));
    CK(cudaFree(dc.val));
    if (g_colperm) print_gather_time(mat.name, L.old_of);

    /* --- the -crux variants, with the cold kernel that won at (0,0) --- */
    for (auto &w : workers) w.join();
    if (ok00 && vs.size() >= 3) {
      /* per crux, the fastest of our kernels and cuSPARSE, timed at upload: the oracle (the library's
       * default AUTO applies a row-length rule and leaves the rest to the predictor) */
      const mx_cold_kernel best_cold = MX_COLD_TIMED;
      for (size_t k = 0; k < ncx; ++k) {
        if (bc[k].st != MX_OK)
          fprintf(stderr, "%s: build failed at (%g,%g): %s\n", mat.name.c_str(), o.cruxes[k].tau_c, o.cruxes[k].tau_r, mx_status_name(bc[k].st));
        else run_ours(bc[k].F, bc[k].ms, setup_jobs, best_cold, "crux", nullptr, MX_MODE_AUTO);
        mx_format_free(&bc[k].F);
      }
      /* --- the predicted plan: its hot mode request and cold kernel as predicted (label "pred") --- */
      if (have_pred) {
        Built &bp = bc[ncx];
        int jobs_pred = pred_jobs;
        if (bp.st != MX_OK) {
          /* built beside the -crux formats; once more alone, so a failure of the plan (a bug: the
           * library would fail the same upgrade) is told from one of the concurrent builds (memory) */
          fprintf(stderr, "%s: build failed at the predicted plan (%g,%g) %s %s with %d builds at once: %s\n", mat.name.c_str(),
                  pred.plan.crux.tau_c, pred.plan.crux.tau_r, mx_plan_mode_name(pred.plan.mode), mx_plan_cold_name(pred.plan.cold),
                  pred_jobs, mx_status_name(bp.st));
          const double s = now_ms();
          bp.st = mx_format_build_borrow(&a, pred.plan.crux, pred.plan.mode, &bp.F);
          bp.ms = now_ms() - s;
          fprintf(stderr, "%s: the predicted plan built alone: %s\n", mat.name.c_str(), mx_status_name(bp.st));
          if (bp.st != MX_OK) g_wrong = 1;
          jobs_pred = 1;
        }
        if (bp.st == MX_OK) run_ours(bp.F, bp.ms, jobs_pred, (mx_cold_kernel)pred.plan.cold, "pred", nullptr, pred.plan.mode);
        mx_format_free(&bp.F);
      }
    } else {
      for (auto &b : bc) mx_format_free(&b.F);
    }
    for (int c = 0; c < ncopy; ++c) {
      CK(cudaFree(dx[c]));
      CK(cudaFree(dy[c]));
    }
    if (!ok00 || vs.size() < 3) continue;

    /* --- rows --- */
    for (auto &v : vs)
      fprintf(fc, "%s,%g,%g,%s,%s,%.4f,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.3g,%d,%d,%.2f,%.1f,%d,%s\n", mat.name.c_str(), v.crux.tau_c,
              v.crux.tau_r, v.mode.c_str(), v.cold.c_str(), v.hot_share, v.fbytes, v.t.med, v.t.mn, v.t.mx,
              v.setup_ms, v.upload_ms, v.err, v.setup_jobs, v.differ, v.gpu_build_ms, v.gpu_build_peak_mb, v.gpu_build_same,
              v.label.c_str());
    const Variant &seg00 = vs[0], &mrg00 = vs[1];
    const Variant *best = &vs[0], *vp = nullptr; /* best: over the tried cruxes, not the prediction */
    for (auto &v : vs) {
      if (v.label == "pred") vp = &v;
      else if (v.t.med < best->t.med) best = &v;
    }
    const Variant &cold = seg00.t.med <= mrg00.t.med ? seg00 : mrg00;
    const Variant &dflt = vs[2];
    const double tcold = cold.t.med;
    const int kbest = tcs[0].med <= tcs[1].med ? 0 : 1;
    const double tcs_best = tcs[kbest].med;
    const double bytes = 12.0 * nnz + 4.0 * (m + 1) + 8.0 * m + 8.0 * n;
    const double gflops = 2.0 * nnz / (best->t.med * 1e3);
    const double setup_ours = features_ms + predictor_ms + best->setup_ms + best->upload_ms;
    const double setup_dflt = b00.ms + auto_upload_ms;
    const double setup_cs = cs_upload_ms + cs_setup[kbest];
    std::string be;
    if (best->t.med < tcs_best) {
      char b[32];
      snprintf(b, sizeof b, "%.0f", std::max(0.0, (setup_ours - setup_cs) / ((tcs_best - best->t.med) * 1e-3)));
      be = b;
    }
    /* the predicted plan's columns (empty when there is none or it failed) */
    std::string p_t, p_tc, p_tr, p_rest(17, ','); /* 18 empty fields */
    if (vp) {
      char b[64];
      snprintf(b, sizeof b, "%.2f", vp->t.med), p_t = b;
      snprintf(b, sizeof b, "%g", vp->crux.tau_c), p_tc = b;
      snprintf(b, sizeof b, "%g", vp->crux.tau_r), p_tr = b;
      const double setup_pred = features_ms + predictor_ms + vp->gpu_build_ms;
      std::string be_pred;
      if (vp->t.med < tcs_best) {
        snprintf(b, sizeof b, "%.0f", std::max(0.0, (setup_pred - setup_cs) / ((tcs_best - vp->t.med) * 1e-3)));
        be_pred = b;
      }
      char r[512];
      snprintf(r, sizeof r, "%s,%s,%.3f,%.2f,%.2f,%s,%s,%d,%.4f,%.4f,%.4f,%zu,%.2f,%.2f,%d,%.4f,%.4f,%s", vp->mode.c_str(), vp->cold.c_str(),
               tcs_best / vp->t.med, vp->t.mn, vp->t.mx, mx_plan_mode_name(pred.plan.mode), mx_plan_cold_name(pred.plan.cold),
               (int)pred.index, pred.ratio, vp->t.med / tcold, vp->hot_share, vp->fbytes, vp->gpu_build_ms, setup_pred,
               vp->differ, vp->t.med / best->t.med, vp->t.med / dflt.t.med, be_pred.c_str());
      p_rest = r;
    }
    fprintf(fk, "%s,%s,%s,%d,%d,%d,%g,%g,%s,%.4f,%s,%zu,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%s,%s,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,"
                "%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%d,%.1f,%.1f,%.1f,%.2f,%.1f,%s,%.2f,%.2f,%s,%lld,%.3f,%d,"
                "%.2f,%.1f,%s,%.1f,%.1f,%d,%d,%d,%s,%s,%s\n",
            mat.name.c_str(), mat.family.c_str(), csv_quote(mat.src.substr(mat.src.find(':') + 1)).c_str(), m, n, nnz,
            best->crux.tau_c, best->crux.tau_r, "oracle-best-tried", best->hot_share, best->mode.c_str(), best->fbytes,
            mx_csr_bytes(m, nnz), best->t.med, best->t.mn, best->t.mx, tcold, dflt.t.med, p_t.c_str(), p_tc.c_str(),
            p_tr.c_str(), tcs[0].med, tcs[0].mn,
            tcs[0].mx, tcs[1].med, tcs[1].mn, tcs[1].mx, gflops, 2.0 * nnz / (tcs_best * 1e3),
            bytes / (best->t.med * 1e-6) / bw, bytes / (tcold * 1e-6) / bw, bytes / (tcs_best * 1e-6) / bw, features_ms,
            predictor_ms, best->setup_ms, best->upload_ms, best->setup_jobs, setup_ours, setup_dflt, cs_upload_ms,
            cs_setup[kbest], setup_cs, be.c_str(), seg00.t.med, mrg00.t.med, autok.c_str(), (long long)rmax, cv, ncopy,
            (double)mbytes / g_l2, L.load_ms, L.how.c_str(), L.ref_ms, bw / 1e9, cs_differ[0], cs_differ[1], dflt.differ,
            p_rest.c_str(), features_gpu_ms < 0 ? "" : std::to_string(features_gpu_ms).c_str(),
            features_gpu_same < 0 ? "" : std::to_string(features_gpu_same).c_str());
    char cx[32], px[64] = "-", pt[32] = "-", ps[32] = "-", pr[32] = "-";
    snprintf(cx, sizeof cx, "%g,%g", best->crux.tau_c, best->crux.tau_r);
    if (vp) {
      snprintf(px, sizeof px, "%g,%g %s/%s", vp->crux.tau_c, vp->crux.tau_r, vp->mode.c_str(), vp->cold.c_str());
      snprintf(pt, sizeof pt, "%.1f", vp->t.med);
      snprintf(ps, sizeof ps, "%.2f", tcs_best / vp->t.med);
      snprintf(pr, sizeof pr, "%.3f", vp->t.med / best->t.med);
    }
    printf("%-24s %9d %10d %9s %4s %5.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f %-22s %9s %7s %8.1f\n", mat.name.c_str(), m,
           nnz, cx, best->mode.c_str(), 100 * best->hot_share, best->t.med, seg00.t.med, mrg00.t.med, tcs[0].med, tcs[1].med,
           tcs_best / best->t.med, tcs_best / tcold, px, pt, ps, (now_ms() - t_mat) * 1e-3);
    fprintf(fm, "| %s | %d | %d | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2f | %s | %s | %s%s | %s |\n",
            mat.name.c_str(), m, nnz, cx, best->mode.c_str(), 100 * best->hot_share, best->t.med, seg00.t.med,
            mrg00.t.med, tcs[0].med, tcs[1].med, tcs_best / best->t.med, tcs_best / tcold,
            bytes / (best->t.med * 1e-6) / bw, px, pt, ps, vp ? "x" : "", pr);
    fflush(stdout);
    fflush(fk);
    fflush(fc);
    fflush(fm);
  }
  fprintf(fm, "\nbw ours = (12 nnz + 4 (rows+1) + 8 rows + 8 cols) / t as a fraction of the copy bandwidth. "
              "Matrices under 2x L2 rotate 8 x/y copies (the matrix itself may still sit in L2).\n");
  fprintf(fm, "\nRun-to-run reproducibility (%d repeated calls on the same x, bitwise): cuSPARSE ALG1 differed on%s.\n",
          REPRO_RUNS, alg1_differs.empty() ? " none" : alg1_differs.c_str());
  printf("# cuSPARSE ALG1 not bitwise reproducible on:%s\n", alg1_differs.empty() ? " none" : alg1_differs.c_str());
  printf("# total %.1f s\n", (now_ms() - t_start) * 1e-3);
  fclose(fk);
  fclose(fc);
  fclose(fm);
  cusparseDestroy(hs);
  return g_wrong ? 3 : 0;
}

/* matxtract-petsc-bench - SpMV through the PETSc Mat interface: MatMult of MATAIJCUSPARSE and of
 * matxtract (MatConvert from the same assembled SeqAIJ), both with VECCUDA vectors, so that the
 * plugin's overheads (state checks, VecGetArray*AndMemType, logging) show next to the kernel times
 * of matxtract-bench. Follows docs/BENCHMARKING.md: one process and GPU, correctness of every
 * variant vs a CPU double reference before timing (rel 2-norm err < 1e-12), >= 20 warm-up calls,
 * median/min/max of >= 100 timed calls, 8 rotated x/y copies when the matrix bytes are < 2x L2.
 *
 *   matxtract-petsc-bench [-quick] [-corpus FILE] [-cache DIR] [-gen SPEC[,SPEC...]] [-f FILE]
 *                         [-crux tc,tr[,tc,tr...]] [-reps N] [-warmup N] [-setup_reps N] [-settle_max N] [-o DIR]
 *
 * Timing on the GPU: CUDA events recorded on PETSc's current CUDA stream (the stream matxtract
 * launches on) around each MatMult (t_med/min/max), and, as a cross-check that also shows host
 * overhead when it exceeds the kernel time, the wall time of reps back-to-back MatMults bracketed
 * by cudaDeviceSynchronize, divided by reps (t_loop). Without CUDA in PETSc (or with no GPU) the
 * program times aij vs matxtract on the CPU with MPI_Wtime per call (synchronous there), so the
 * logic can be tested on any machine.
 *
 * Setup, from the same assembled host SeqAIJ: MatConvert(MAT_INITIAL_MATRIX) + the first MatMult
 * (aijcusparse copies to the GPU and sets up cuSPARSE at the first product; matxtract builds on
 * the GPU at its first product), minus one steady-state MatMult, bracketed by device syncs; the
 * median of -setup_reps conversions (default 3), interleaved: each repetition converts every
 * variant once, in order (the matrices of earlier repetitions are destroyed; the last ones are
 * kept for the timing), so that the host allocator's and the GPU's state fall on every type alike.
 *
 * Settling (matxtract without a fixed crux: the predictor and the online upgrade are on): after the
 * setup, MatMults run until MatXtractGetInfo says the plan is settled (at most -settle_max, default
 * 5000); their count and wall time are reported (settle_mults, settle_ms: the prediction, a cold
 * kernel switch and an upgrade happen inside them), and the steady-state timing is of the plan it
 * settled on.
 *
 * predict_ms: the features + prediction time of the host (MatXtractGetInfo), the median over the
 * setups that predicted in them (-mat_matxtract_expected_mults large: every one; GPU feature passes
 * queued by the first MatMult are collected by a second one, outside the setup's time), else the one
 * made while settling.
 *
 * Writes DIR/spmv_petsc.csv (one row per matrix and variant) and DIR/spmv_petsc_env.txt. */
#include <petscmat.h>
#include <petscversion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "matxtract.h"

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

#if defined(PETSC_HAVE_CUDA) && defined(MX_BENCH_HAVE_CUDART)
  #include <cuda_runtime.h>
  #include <petscdevice.h>
  #define BENCH_CUDA 1
  #if PETSC_VERSION_GE(3, 20, 0)
    #include <petscdevice_cuda.h>
    #define BENCH_PETSC_STREAM 1
  #endif
#endif

#ifndef MX_SOURCE_DIR
  #define MX_SOURCE_DIR "."
#endif

#define MAXMATS 256
#define MAXCRUX 16
#define MAXSETUP 9

typedef struct {
  char name[128], spec[256], family[64], file[PETSC_MAX_PATH_LEN];
} Entry;

typedef struct {
  double med, mn, mx, loop;
} Timing;

static PetscBool g_gpu = PETSC_FALSE;

#if defined(BENCH_CUDA)
/* The stream matxtract launches on (PETSc's current CUDA stream); the legacy stream before 3.20. */
static void *bench_stream(void)
{
  #if defined(BENCH_PETSC_STREAM)
  cudaStream_t s = NULL;
  if (PetscGetCurrentCUDAStream(&s)) s = NULL;
  return (void *)s;
  #else
  return NULL;
  #endif
}
#endif

static PetscErrorCode device_sync(void)
{
  PetscFunctionBegin;
#if defined(BENCH_CUDA)
  if (g_gpu) PetscCheck(cudaDeviceSynchronize() == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaDeviceSynchronize failed");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* *ms = the features + prediction time of B's setup (conversion and first MatMult), or NAN when B is
 * not a matxtract matrix or did not predict in them (then it predicts while settling, once). A
 * prediction whose GPU passes the first MatMult queued is collected by one more MatMult (y), outside
 * the setup's time. */
static PetscErrorCode setup_predict_ms(Mat B, Vec x, Vec y, double *ms)
{
  PetscBool     isx;
  MatXtractInfo xi;

  PetscFunctionBeginUser;
  *ms = NAN;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJMATXTRACT, &isx));
  if (!isx) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractGetInfo(B, &xi));
  if (xi.predict_pending) {
    PetscCall(device_sync());
    PetscCall(MatMult(B, x, y));
    PetscCall(MatXtractGetInfo(B, &xi));
  }
  if (xi.predicted) *ms = 1e3 * xi.predict_seconds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the median of the setups' prediction times t[0..reps) that are not NAN (sorted in place), else
 * fallback (the prediction made while settling) */
static double median_predict_ms(double *t, PetscInt reps, double fallback)
{
  size_t k = 0;

  for (PetscInt r = 0; r < reps; r++)
    if (!isnan(t[r])) t[k++] = t[r];
  if (k == 0) return fallback;
  qsort(t, k, sizeof(double), cmp_double);
  return t[k / 2];
}

/* MatMult(A, x[i % nc], y[i % nc]): warmup calls, then reps timed calls (events on the GPU, wall
 * time per call on the CPU), then reps back-to-back calls timed as a whole. Times in us. */
/* "%g" of v into buf */
static const char *ctc_pred(PetscReal v, char *buf)
{
  snprintf(buf, 32, "%g", (double)v);
  return buf;
}

static PetscErrorCode time_matmult(Mat A, Vec *x, Vec *y, PetscInt nc, PetscInt warmup, PetscInt reps, Timing *T)
{
  double *t;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(reps, &t));
  for (PetscInt i = 0; i < warmup; i++) PetscCall(MatMult(A, x[i % nc], y[i % nc]));
  PetscCall(device_sync());
#if defined(BENCH_CUDA)
  if (g_gpu) {
    cudaStream_t s  = (cudaStream_t)bench_stream();
    cudaEvent_t *ev;
    PetscCall(PetscMalloc1(2 * reps, &ev));
    for (PetscInt i = 0; i < 2 * reps; i++) PetscCheck(cudaEventCreate(&ev[i]) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventCreate");
    for (PetscInt i = 0; i < reps; i++) {
      cudaEventRecord(ev[2 * i], s);
      PetscCall(MatMult(A, x[i % nc], y[i % nc]));
      cudaEventRecord(ev[2 * i + 1], s);
    }
    PetscCall(device_sync());
    for (PetscInt i = 0; i < reps; i++) {
      float ms = 0;
      PetscCheck(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaEventElapsedTime");
      t[i] = 1e3 * ms;
    }
    for (PetscInt i = 0; i < 2 * reps; i++) cudaEventDestroy(ev[i]);
    PetscCall(PetscFree(ev));
  } else
#endif
  {
    for (PetscInt i = 0; i < reps; i++) {
      double t0 = MPI_Wtime();
      PetscCall(MatMult(A, x[i % nc], y[i % nc]));
      t[i] = 1e6 * (MPI_Wtime() - t0);
    }
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  T->med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  T->mn  = t[0];
  T->mx  = t[reps - 1];
  {
    double t0;
    PetscCall(device_sync());
    t0 = MPI_Wtime();
    for (PetscInt i = 0; i < reps; i++) PetscCall(MatMult(A, x[i % nc], y[i % nc]));
    PetscCall(device_sync());
    T->loop = 1e6 * (MPI_Wtime() - t0) / (double)reps;
  }
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode rel_err(Vec y, const double *ref, PetscInt m, double *err)
{
  const PetscScalar *ya;
  double             d = 0, r = 0;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt i = 0; i < m; i++) {
    double e = (double)ya[i] - ref[i];
    if (ya[i] != ya[i]) d = INFINITY;
    d += e * e;
    r += ref[i] * ref[i];
  }
  PetscCall(VecRestoreArrayRead(y, &ya));
  *err = r > 0 ? sqrt(d / r) : (d > 0 ? INFINITY : 0.0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Corpus lines NAME SPEC [quick]; the spec is the first token with a ':'. */
static PetscErrorCode read_corpus(const char *path, PetscBool quick, const char *cache, Entry *e, PetscInt *n)
{
  FILE *f;
  char  line[1024];

  PetscFunctionBegin;
  f = fopen(path, "r");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open corpus %s", path);
  while (fgets(line, sizeof line, f) && *n < MAXMATS) {
    char     *h = strchr(line, '#'), *tok[16], *t;
    int       nt = 0, q = 0;
    const char *spec = NULL;
    if (h) *h = 0;
    for (t = strtok(line, " \t\r\n,"); t && nt < 16; t = strtok(NULL, " \t\r\n,")) tok[nt++] = t;
    if (!nt) continue;
    for (int k = 0; k < nt; k++) {
      if (!spec && strchr(tok[k], ':')) spec = tok[k];
      if (!strcmp(tok[k], "quick")) q = 1;
    }
    if (!spec || (quick && !q)) continue;
    Entry *E = &e[(*n)++];
    memset(E, 0, sizeof *E);
    snprintf(E->name, sizeof E->name, "%s", tok[0]);
    snprintf(E->spec, sizeof E->spec, "%s", spec);
    snprintf(E->family, sizeof E->family, "%.*s", (int)(strchr(spec, ':') - spec), spec);
    if (cache && cache[0]) {
      char  sp[PETSC_MAX_PATH_LEN], buf[512] = "";
      FILE *g;
      snprintf(sp, sizeof sp, "%s/%s.spec", cache, E->name);
      g = fopen(sp, "r");
      if (g) {
        if (fgets(buf, sizeof buf, g)) buf[strcspn(buf, "\r\n ")] = 0;
        fclose(g);
        if (!strcmp(buf, spec)) snprintf(E->file, sizeof E->file, "%s/%s.petsc", cache, E->name);
      }
    }
  }
  fclose(f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  const char *label, *mat_type;
  PetscBool   set_crux;
  double      tc, tr;
} Variant;

/* The options database as variant v's conversion reads it (-mat_matxtract_crux set or cleared). */
static PetscErrorCode set_variant_options(const Variant *v)
{
  PetscFunctionBegin;
  if (v->set_crux) {
    char val[64];
    snprintf(val, sizeof val, "%.17g,%.17g", v->tc, v->tr);
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_crux", val));
  } else PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_crux"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char usage[] = "usage: matxtract-petsc-bench [-quick] [-corpus FILE] [-cache DIR] [-gen SPEC[,SPEC...]] [-f FILE]\n"
                            "                            [-crux tc,tr[,tc,tr...]] [-reps N] [-warmup N] [-setup_reps N] [-settle_max N]\n"
                            "                            [-cpu] [-o DIR] [matxtract options, e.g. -mat_matxtract_expected_mults N]\n"
                            "Without -gen or -f: the whole corpus (-corpus, default tuning/gen/corpus.txt; -quick: its quick subset).\n"
                            "Writes DIR/spmv_petsc.csv and DIR/spmv_petsc_env.txt.\n";

int main(int argc, char **argv)
{
  char        corpus[PETSC_MAX_PATH_LEN] = MX_SOURCE_DIR "/tuning/gen/corpus.txt", cache[PETSC_MAX_PATH_LEN] = "", out[PETSC_MAX_PATH_LEN] = ".", file[PETSC_MAX_PATH_LEN] = "", date[64], cmd[4096] = "";
  char       *gens[MAXMATS];
  PetscInt    ngen = MAXMATS, nmat = 0, reps = 100, warmup = 20, ncrux = 2 * MAXCRUX, setup_reps = 3, settle_max = 5000;
  PetscReal   crux[2 * MAXCRUX];
  PetscBool   quick = PETSC_FALSE, has_gen, has_file, has_crux, cpu_only = PETSC_FALSE, help;
  Entry      *E;
  FILE       *fo, *fe;
  double      bw = 0;
  size_t      l2 = 0;
  int         wrong = 0;
  char        gpu_name[256] = "none";
  int         drv = 0, rt = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, "matxtract-petsc-bench: MatMult aijcusparse vs matxtract through the Mat interface"));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (help) { /* the usage, not a run over the whole corpus */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s", usage));
    PetscCall(PetscFinalize());
    return 0;
  }
  for (int i = 0; i < argc; i++) {
    size_t l = strlen(cmd);
    snprintf(cmd + l, sizeof cmd - l, "%s%s", i ? " " : "", argv[i]);
  }
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-quick", &quick, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cpu", &cpu_only, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-corpus", corpus, sizeof corpus, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-cache", cache, sizeof cache, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", out, sizeof out, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof file, &has_file));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-gen", gens, &ngen, &has_gen));
  PetscCall(PetscOptionsGetRealArray(NULL, NULL, "-crux", crux, &ncrux, &has_crux));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-setup_reps", &setup_reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-settle_max", &settle_max, NULL));
  PetscCheck(setup_reps >= 1 && setup_reps <= MAXSETUP, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-setup_reps must be in 1..%d", MAXSETUP);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-warmup", &warmup, NULL));
  reps   = PetscMax(reps, 100);
  warmup = PetscMax(warmup, 20);
  if (!has_crux) ncrux = 0;
  PetscCheck(ncrux % 2 == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-crux takes pairs tc,tr[,tc,tr...]");
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "matxtract-petsc-bench runs on one rank");
  }

  PetscCall(PetscCalloc1(MAXMATS, &E));
  if (has_file) {
    const char *b = strrchr(file, '/');
    snprintf(E[0].name, sizeof E[0].name, "%s", b ? b + 1 : file);
    snprintf(E[0].file, sizeof E[0].file, "%s", file);
    snprintf(E[0].family, sizeof E[0].family, "file");
    nmat = 1;
  } else if (has_gen) {
    for (PetscInt k = 0; k < ngen && nmat < MAXMATS; k++, nmat++) {
      snprintf(E[nmat].name, sizeof E[nmat].name, "%s", gens[k]);
      snprintf(E[nmat].spec, sizeof E[nmat].spec, "%s", gens[k]);
      snprintf(E[nmat].family, sizeof E[nmat].family, "%.*s", (int)strcspn(gens[k], ":"), gens[k]);
      PetscCall(PetscFree(gens[k]));
    }
  } else PetscCall(read_corpus(corpus, quick, cache, E, &nmat));

#if defined(BENCH_CUDA)
  {
    int ndev = 0;
    if (!cpu_only && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
      struct cudaDeviceProp prop;
      const size_t          nb = (size_t)1 << 30;
      void                 *a, *b;
      cudaEvent_t           e0, e1;
      double                tt[20];
      g_gpu = PETSC_TRUE;
      PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
      cudaGetDeviceProperties(&prop, 0);
      snprintf(gpu_name, sizeof gpu_name, "%s", prop.name);
      l2 = (size_t)prop.l2CacheSize;
      cudaDriverGetVersion(&drv);
      cudaRuntimeGetVersion(&rt);
      /* D2D copy bandwidth of this run (read + write), median of 20 copies of 1 GiB */
      PetscCheck(cudaMalloc(&a, nb) == cudaSuccess && cudaMalloc(&b, nb) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc");
      cudaMemset(a, 1, nb);
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      for (int i = 0; i < 23; i++) {
        float ms;
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(b, a, nb, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 3) tt[i - 3] = ms;
      }
      qsort(tt, 20, sizeof(double), cmp_double);
      bw = 2.0 * nb / (0.5 * (tt[9] + tt[10]) * 1e-3);
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
      cudaFree(a);
      cudaFree(b);
    }
  }
#endif
  if (!g_gpu) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# matxtract-petsc-bench: %s: timing aij vs matxtract on the CPU (MPI_Wtime per call)\n",
#if defined(PETSC_HAVE_CUDA)
                          cpu_only ? "-cpu given" : "no usable CUDA device (or the bench was built without CUDA)"
#else
                          "this PETSc has no CUDA"
#endif
                          ));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "cpu"));
  }
  {
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
  }
  mkdir(out, 0755);
  {
    char p[PETSC_MAX_PATH_LEN + 32];
    snprintf(p, sizeof p, "%s/spmv_petsc_env.txt", out);
    fe = fopen(p, "w");
    PetscCheck(fe, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", p);
    fprintf(fe, "petsc_version=%d.%d.%d\npetsc_cuda=%d\nmode=%s\ngpu_name=%s\ncuda_driver=%d\ncuda_runtime=%d\nd2d_copy_GBps=%.1f\ndate=%s\ncommand=%s\nreps=%d\nwarmup=%d\n",
            PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR,
#if defined(PETSC_HAVE_CUDA)
            1,
#else
            0,
#endif
            g_gpu ? "gpu" : "cpu", gpu_name, drv, rt, bw / 1e9, date, cmd, (int)reps, (int)warmup);
    fclose(fe);
    snprintf(p, sizeof p, "%s/spmv_petsc.csv", out);
    fo = fopen(p, "w");
    PetscCheck(fo, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", p);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# PETSc %d.%d.%d, %s, GPU %s, CUDA driver %d runtime %d, D2D copy %.0f GB/s, %s\n# %s\n", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, g_gpu ? "GPU (VECCUDA)" : "CPU", gpu_name, drv, rt, bw / 1e9, date, cmd));
  fprintf(fo, "matrix,family,rows,cols,nnz,variant,mat_type,vec_type,crux_tc,crux_tr,crux_source,hot_mode,hot_nnz_share,on_device,t_med_us,t_min_us,t_max_us,t_loop_us,setup_ms,convert_ms,first_mult_ms,rel_err,rotated_copies,load_ms,petsc_mode,setup_reps,setup_min_ms,setup_max_ms,settle_mults,settle_ms,cold_kernel,predicted,pred_crux_tc,pred_crux_tr,pred_cold_kernel,features_gpu,predict_ms,upgrade_tried,plan_settled\n");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-24s %-22s %10s %9s %9s %9s %9s %9s\n", "matrix", "variant", "nnz", "med_us", "min_us", "loop_us", "setup_ms", "rel_err"));

  for (PetscInt k = 0; k < nmat; k++) {
    Mat                A;
    PetscInt           m, n, nnz, nc, nrow_ij;
    double            *ref, *xh, t0, load_ms;
    const PetscInt    *ia, *ja;
    const PetscScalar *aa;
    PetscBool          done;
    Vec                x[8], y[8];
    Variant            vars[2 + MAXCRUX];
    Mat                Bs[2 + MAXCRUX];
    Vec                ys[2 + MAXCRUX]; /* each variant's first product */
    double             convs[2 + MAXCRUX][MAXSETUP], firsts[2 + MAXCRUX][MAXSETUP], preds[2 + MAXCRUX][MAXSETUP];
    PetscInt           nv = 0;
    MatInfo            info;

    /* the host SeqAIJ every variant converts from */
    t0 = MPI_Wtime();
    if (E[k].file[0]) PetscCall(MatXtractLoad(PETSC_COMM_SELF, E[k].file, "mxbench_", &A));
    else PetscCall(MatXtractGenerate(PETSC_COMM_SELF, E[k].spec, "mxbench_", &A));
    load_ms = 1e3 * (MPI_Wtime() - t0);
    {
      PetscBool isaij;
      PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
      if (!isaij) PetscCall(MatConvert(A, MATSEQAIJ, MAT_INPLACE_MATRIX, &A));
    }
    PetscCall(MatGetSize(A, &m, &n));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    nnz = (PetscInt)info.nz_used;

    /* CPU double reference y = A x from the CSR arrays */
    PetscCall(PetscMalloc2(m, &ref, n, &xh));
    {
      uint64_t s = 88172645463325252ull + (uint64_t)k;
      for (PetscInt j = 0; j < n; j++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        xh[j] = 2.0 * ((double)(s >> 11) / 9007199254740992.0) - 1.0;
      }
    }
    PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrow_ij, &ia, &ja, &done));
    PetscCheck(done && nrow_ij == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ failed");
    PetscCall(MatSeqAIJGetArrayRead(A, &aa));
    for (PetscInt i = 0; i < m; i++) {
      double s = 0;
      for (PetscInt p = ia[i]; p < ia[i + 1]; p++) s += (double)aa[p] * xh[ja[p]];
      ref[i] = s;
    }
    PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrow_ij, &ia, &ja, &done));

    /* vectors: VECCUDA on the GPU (made device-resident before any timing), rotated when small */
    {
      double mbytes = 12.0 * nnz + 4.0 * (m + 1) + 8.0 * (m + n);
      nc            = (g_gpu && mbytes < 2.0 * (double)l2) ? 8 : 1;
    }
    for (PetscInt c = 0; c < nc; c++) {
      PetscScalar       *xa;
      const PetscScalar *da;
      PetscMemType       mt;
      PetscCall(VecCreate(PETSC_COMM_SELF, &x[c]));
      PetscCall(VecSetSizes(x[c], n, n));
      PetscCall(VecSetType(x[c], g_gpu ? VECCUDA : VECSEQ));
      PetscCall(VecCreate(PETSC_COMM_SELF, &y[c]));
      PetscCall(VecSetSizes(y[c], m, m));
      PetscCall(VecSetType(y[c], g_gpu ? VECCUDA : VECSEQ));
      PetscCall(VecGetArrayWrite(x[c], &xa));
      for (PetscInt j = 0; j < n; j++) xa[j] = xh[j];
      PetscCall(VecRestoreArrayWrite(x[c], &xa));
      PetscCall(VecGetArrayReadAndMemType(x[c], &da, &mt));
      PetscCall(VecRestoreArrayReadAndMemType(x[c], &da));
      PetscCall(VecSet(y[c], 0.0));
    }

    vars[nv++] = (Variant){"base", g_gpu ? MATAIJCUSPARSE : MATSEQAIJ, PETSC_FALSE, 0, 0};
    vars[nv++] = (Variant){"matxtract", MATMATXTRACT, PETSC_FALSE, 0, 0};
    for (PetscInt c = 0; c + 1 < ncrux && nv < 2 + MAXCRUX; c += 2) vars[nv++] = (Variant){"matxtract_crux", MATMATXTRACT, PETSC_TRUE, crux[c], crux[c + 1]};

    /* setup, interleaved: repetition r converts every variant once (so that the state of the host
     * allocator and of the GPU falls on every type alike); the last repetition's matrices are kept */
    for (PetscInt v = 0; v < nv; v++) PetscCall(VecDuplicate(y[0], &ys[v]));
    for (PetscInt r = 0; r < setup_reps; r++)
      for (PetscInt v = 0; v < nv; v++) {
        if (r > 0) PetscCall(MatDestroy(&Bs[v]));
        PetscCall(set_variant_options(&vars[v]));
        PetscCall(device_sync());
        t0 = MPI_Wtime();
        if (!strcmp(vars[v].mat_type, MATSEQAIJ)) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Bs[v]));
        else PetscCall(MatConvert(A, vars[v].mat_type, MAT_INITIAL_MATRIX, &Bs[v]));
        PetscCall(device_sync());
        convs[v][r] = 1e3 * (MPI_Wtime() - t0);
        t0          = MPI_Wtime();
        PetscCall(MatMult(Bs[v], x[0], ys[v]));
        PetscCall(device_sync());
        firsts[v][r] = 1e3 * (MPI_Wtime() - t0);
        PetscCall(setup_predict_ms(Bs[v], x[0], ys[v], &preds[v][r]));
      }

    for (PetscInt v = 0; v < nv; v++) {
      Mat           B = Bs[v];
      double       *conv = convs[v], *first = firsts[v], err = INFINITY, settle_ms = 0;
      PetscInt      settle_mults = 0;
      char          plan[256] = ",,,,,,,,", pbuf[2][32];
      Timing        T = {0, 0, 0, 0};
      MatXtractInfo xi;
      PetscBool     isx;
      char          label[64], ctc[32] = "", ctr[32] = "", src[32] = "", hm[16] = "", share[32] = "", ondev[8] = "";

      if (vars[v].set_crux) snprintf(label, sizeof label, "matxtract_%g_%g", vars[v].tc, vars[v].tr);
      else snprintf(label, sizeof label, "%s", !strcmp(vars[v].label, "base") ? (g_gpu ? "aijcusparse" : "aij") : "matxtract");
      PetscCall(rel_err(ys[v], ref, m, &err));
      PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJMATXTRACT, &isx));
      if (isx) { /* run until the plan settles (prediction, cold switch, upgrade), then describe it */
        PetscCall(MatXtractGetInfo(B, &xi));
        PetscCall(device_sync());
        t0 = MPI_Wtime();
        for (settle_mults = 0; !xi.plan_settled && settle_mults < settle_max; settle_mults++) {
          PetscCall(MatMult(B, x[0], y[0]));
          PetscCall(MatXtractGetInfo(B, &xi));
        }
        PetscCall(device_sync());
        settle_ms = 1e3 * (MPI_Wtime() - t0);
        if (settle_mults > 0) PetscCall(rel_err(y[0], ref, m, &err));
        snprintf(ctc, sizeof ctc, "%g", (double)xi.tau_c);
        snprintf(ctr, sizeof ctr, "%g", (double)xi.tau_r);
        snprintf(src, sizeof src, "%s", MatXtractCruxSourceName(xi.crux_source));
        snprintf(hm, sizeof hm, "%s", xi.hot_mode);
        snprintf(share, sizeof share, "%.4f", nnz ? (double)xi.hot_nnz / (double)nnz : 0.0);
        snprintf(ondev, sizeof ondev, "%d", (int)xi.on_device);
        snprintf(plan, sizeof plan, "%s,%d,%s,%s,%s,%d,%.3f,%d,%d", xi.cold_kernel, (int)xi.predicted, xi.predicted ? ctc_pred(xi.pred_tau_c, pbuf[0]) : "", xi.predicted ? ctc_pred(xi.pred_tau_r, pbuf[1]) : "", xi.predicted ? xi.pred_cold_kernel : "", (int)xi.features_on_gpu, median_predict_ms(preds[v], setup_reps, 1e3 * xi.predict_seconds), (int)xi.upgrade_tried, (int)xi.plan_settled);
      }
      if (!(err < 1e-12)) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: WRONG result for %s: rel err %g (variant not timed)\n", E[k].name, label, err));
        wrong = 1;
      } else PetscCall(time_matmult(B, x, y, nc, warmup, reps, &T));
      {
        double setup[MAXSETUP];
        for (PetscInt r = 0; r < setup_reps; r++) setup[r] = conv[r] + first[r] - T.med * 1e-3;
        qsort(setup, (size_t)setup_reps, sizeof(double), cmp_double);
        qsort(conv, (size_t)setup_reps, sizeof(double), cmp_double);
        qsort(first, (size_t)setup_reps, sizeof(double), cmp_double);
        fprintf(fo, "%s,%s,%d,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,", E[k].name, E[k].family, (int)m, (int)n, (int)nnz, label, vars[v].mat_type, g_gpu ? VECCUDA : VECSEQ, ctc, ctr, src, hm, share, ondev);
        if (err < 1e-12) fprintf(fo, "%.2f,%.2f,%.2f,%.2f,%.2f,", T.med, T.mn, T.mx, T.loop, setup[setup_reps / 2]);
        else fprintf(fo, ",,,,,");
        fprintf(fo, "%.2f,%.2f,%.3g,%d,%.1f,%s,", conv[setup_reps / 2], first[setup_reps / 2], err, (int)nc, load_ms, g_gpu ? "gpu" : "cpu");
        fprintf(fo, "%d,%.2f,%.2f,%d,%.2f,%s\n", (int)setup_reps, setup[0], setup[setup_reps - 1], (int)settle_mults, settle_ms, plan);
        fflush(fo);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-24s %-22s %10d %9.1f %9.1f %9.1f %9.1f %9.2g\n", E[k].name, label, (int)nnz, T.med, T.mn, T.loop, setup[setup_reps / 2], err));
      }
      PetscCall(MatDestroy(&B));
      Bs[v] = NULL;
      PetscCall(VecDestroy(&ys[v]));
    }
    PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_crux"));
    for (PetscInt c = 0; c < nc; c++) {
      PetscCall(VecDestroy(&x[c]));
      PetscCall(VecDestroy(&y[c]));
    }
    PetscCall(PetscFree2(ref, xh));
    PetscCall(MatDestroy(&A));
  }
  fclose(fo);
  PetscCall(PetscFree(E));
  PetscCall(PetscFinalize());
  return wrong ? 3 : 0;
}

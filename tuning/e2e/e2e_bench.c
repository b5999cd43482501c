/* matxtract-e2e - what a user feels, end to end through PETSc (docs/BENCHMARKING.md section 9): one
 * matrix, one Mat type, one process, so that every first-use cost of the type counts.
 *
 *   matxtract-e2e (-gen SPEC [-seed S] | -f FILE) -type aijcusparse|matxtract|aij [-its N] [-batch B]
 *                 [-o FILE.csv] [-name NAME] [-source TEXT] [-values LABEL] [-cpu] [matxtract options]
 *
 * 1. The AIJ matrix A is built on the host (SeqAIJ) from a generator spec or a file, untimed, and the
 *    host reference y_ref = A x (CPU AIJ MatMult, double) of a fixed pseudo-random x in [-1,1).
 * 2. Device free bytes (cudaMemGetInfo) are read, then setup = MatConvert(A, type, MAT_INITIAL_MATRIX)
 *    + the first MatMult, each timed by the wall clock (PetscTime) between two device syncs
 *    (cudaDeviceSynchronize; nothing on the CPU). Between the two, untimed: the vectors of the
 *    converted type (MatCreateVecs: VECCUDA for aijcusparse and for matxtract on the GPU) and x's
 *    upload. Nothing runs on the GPU before the setup but the CUDA context's creation
 *    (PetscDeviceInitialize, what -device_enable eager does inside PetscInitialize; the driver
 *    tuning/e2e/protocol.sh passes -device_enable eager for both types, as tuning/e2e/run.sh does).
 * 3. Then -its products (default 3000) in batches of -batch (default 100): each batch is that many
 *    MatMult(B, x, y) with the same x and y (a Krylov loop reuses its vectors), followed by one VecNorm(y)
 *    that the host waits for, the way a Krylov loop runs: no per-call events, no extra syncs. The wall
 *    time of each batch (its products and its VecNorm) is recorded.
 * 4. Reported: setup_s (and its two parts), the first batch's and the steady state's time per MatMult
 *    (steady: the median batch after the 10th, or of the last third when there are fewer than 13 full
 *    batches), total_K_s = setup_s + the batches up to K products (K = 100, 1000, 3000 and -its; the
 *    first MatMult is the setup's), device bytes = free before the conversion - free after the run with
 *    B and the vectors still alive (and per nonzero of A), the relative 2-norm error of y = B x
 *    against y_ref after the setup's first product and after the run (the larger; > 1e-12 fails the
 *    run: exit status 2), and for matxtract the plan it ended on (MatXtractGetInfo, read after the run).
 * One CSV row per run is appended to -o (the header written when the file is new; an existing file with
 * another header is an error). Without a usable GPU (no CUDA in PETSc or in this build, no device, or
 * -cpu) the program runs on the CPU: aij or matxtract (-mat_matxtract_device cpu), host vectors, no
 * device bytes, gpu column "cpu" (a dry run of the protocol's logic). */
#include <petscmat.h>
#include <petsctime.h>
#include <petscversion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matxtract.h"

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

#if defined(PETSC_HAVE_CUDA) && defined(MX_E2E_HAVE_CUDART)
  #include <cuda_runtime.h>
  #include <petscdevice.h>
  #define E2E_CUDA 1
#endif

#define E2E_TOL        1e-12
#define E2E_SKIP       10 /* batches left out of the steady state (prediction, upgrade, clocks) */
#define E2E_NTOTALS    3
#define E2E_NPLANCOLS  29

static const PetscInt e2e_totals[E2E_NTOTALS] = {100, 1000, 3000};

typedef struct {
  char      gen[256], file[PETSC_MAX_PATH_LEN], name[PETSC_MAX_PATH_LEN], source[PETSC_MAX_PATH_LEN], values[64], type[32], out[PETSC_MAX_PATH_LEN];
  PetscInt  its, batch, seed;
  PetscBool has_gen, has_file, cpu, fault;
} Options;

typedef struct {
  PetscInt   rows, cols, nb;
  PetscInt64 nnz;
  double     convert_s, first_mult_s, setup_s, first_batch_s, steady_s, totals[E2E_NTOTALS], total_its_s;
  double     free_before, free_after, rel_err;
  double    *batch_s; /* wall seconds of each batch */
  char       vec_type[32], gpu[256];
} Run;

static PetscBool g_gpu = PETSC_FALSE; /* the run uses the GPU (device syncs, cudaMemGetInfo) */

static const char usage[] =
  "usage: matxtract-e2e (-gen SPEC [-seed S] | -f FILE) -type aijcusparse|matxtract|aij [-its N] [-batch B]\n"
  "                     [-o FILE.csv] [-name NAME] [-source TEXT] [-values LABEL] [-cpu] [matxtract options]\n"
  "End-to-end protocol of docs/BENCHMARKING.md section 9, one (matrix, type) per process:\n"
  "  setup = MatConvert from the host AIJ matrix + the first MatMult; then -its MatMults (default 3000) in\n"
  "  batches of -batch (default 100), each ended by a VecNorm; steady state, totals after 100/1000/3000,\n"
  "  device bytes per nonzero (cudaMemGetInfo before the conversion and after the run), rel. error vs the\n"
  "  host AIJ product (> 1e-12: exit status 2). Pass -device_enable eager so that the CUDA context is made\n"
  "  at PetscInitialize (it is made before the setup anyway).\n"
  "  -type       aijcusparse (GPU), matxtract (GPU when usable, else CPU), aij (CPU, host vectors)\n"
  "  -o FILE     append one CSV row (header written when FILE is new); default e2e.csv\n"
  "  -name       matrix name for the CSV (default: the spec or the file's base name)\n"
  "  -source     what the CSV's source column says (default: the spec or the file)\n"
  "  -values     values label (default: the spec's @VALUES suffix, 'own' for files, else 'default')\n"
  "  -cpu        run on the CPU even when a GPU is usable (matxtract gets -mat_matxtract_device cpu)\n"
  "  -e2e_fault  perturb the checked product (tests: the check must fail)\n";

/* sync the GPU (when used) */
static PetscErrorCode device_sync(void)
{
  PetscFunctionBegin;
#if defined(E2E_CUDA)
  if (g_gpu) PetscCheck(cudaDeviceSynchronize() == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaDeviceSynchronize failed");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *t = the wall clock after the device and the ranks are in step */
static PetscErrorCode wall_time(PetscLogDouble *t)
{
  PetscFunctionBegin;
  PetscCall(device_sync());
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *bytes = the GPU's free memory (NAN without a GPU) */
static PetscErrorCode device_free_bytes(double *bytes)
{
  PetscFunctionBegin;
  *bytes = NAN;
#if defined(E2E_CUDA)
  if (g_gpu) {
    size_t f = 0, t = 0;
    PetscCall(device_sync());
    PetscCheck(cudaMemGetInfo(&f, &t) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaMemGetInfo failed");
    *bytes = (double)f;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* g_gpu and the GPU's name ("cpu" without one); with a GPU, its CUDA context is created now (what
 * -device_enable eager does at PetscInitialize), outside every timed region */
static PetscErrorCode detect_device(PetscBool cpu, char *gpu, size_t len)
{
  PetscFunctionBegin;
  snprintf(gpu, len, "cpu");
#if defined(E2E_CUDA)
  {
    int ndev = 0, dev = 0;
    if (!cpu && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
      struct cudaDeviceProp prop;
      PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
      PetscCheck(cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaGetDeviceProperties failed");
      snprintf(gpu, len, "%s", prop.name);
      for (char *c = gpu; *c; c++)
        if (*c == ',') *c = ' ';
      g_gpu = PETSC_TRUE;
    }
  }
#endif
  (void)cpu;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s without its directories */
static const char *base_name(const char *s)
{
  const char *b = strrchr(s, '/');
  return b ? b + 1 : s;
}

/* the options; defaults for the labels */
static PetscErrorCode get_options(Options *o)
{
  PetscFunctionBegin;
  memset(o, 0, sizeof *o);
  o->its   = 3000;
  o->batch = 100;
  snprintf(o->out, sizeof o->out, "e2e.csv");
  PetscCall(PetscOptionsGetString(NULL, NULL, "-gen", o->gen, sizeof o->gen, &o->has_gen));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", o->file, sizeof o->file, &o->has_file));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-seed", &o->seed, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", o->type, sizeof o->type, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-its", &o->its, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-batch", &o->batch, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", o->out, sizeof o->out, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-name", o->name, sizeof o->name, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-source", o->source, sizeof o->source, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-values", o->values, sizeof o->values, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cpu", &o->cpu, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-e2e_fault", &o->fault, NULL));
  PetscCheck(o->has_gen != o->has_file, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "give one of -gen SPEC or -f FILE (-help)");
  PetscCheck(!strcmp(o->type, "aijcusparse") || !strcmp(o->type, "matxtract") || !strcmp(o->type, "aij"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-type aijcusparse|matxtract|aij, not '%s'", o->type);
  PetscCheck(o->its >= 1 && o->batch >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-its and -batch must be >= 1");
  if (!o->source[0]) snprintf(o->source, sizeof o->source, "%s", o->has_gen ? o->gen : o->file);
  if (!o->name[0]) snprintf(o->name, sizeof o->name, "%s", o->has_gen ? o->gen : base_name(o->file));
  if (!o->values[0]) {
    const char *at = strchr(o->source, '@');
    snprintf(o->values, sizeof o->values, "%.63s", at ? at + 1 : (o->has_file ? "own" : "default"));
  }
  for (char *c = o->name; *c; c++)
    if (*c == ',') *c = ';';
  for (char *c = o->source; *c; c++)
    if (*c == ',') *c = ';';
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A = the matrix as host SeqAIJ (its type never comes from -mat_type: prefix e2e_) */
static PetscErrorCode load_host_aij(const Options *o, Mat *A)
{
  PetscBool isaij;

  PetscFunctionBegin;
  if (o->has_file) PetscCall(MatXtractLoad(PETSC_COMM_WORLD, o->file, "e2e_", A));
  else PetscCall(MatXtractGenerateSeeded(PETSC_COMM_WORLD, o->gen, o->seed, "e2e_", A));
  PetscCall(PetscObjectTypeCompare((PetscObject)*A, MATSEQAIJ, &isaij));
  if (!isaij) PetscCall(MatConvert(*A, MATSEQAIJ, MAT_INPLACE_MATRIX, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = a fixed pseudo-random vector, uniform in [-1,1) (xorshift64) */
static PetscErrorCode fill_x(Vec x)
{
  PetscScalar *a;
  PetscInt     n;
  uint64_t     s = 88172645463325252ull;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayWrite(x, &a));
  for (PetscInt j = 0; j < n; j++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    a[j] = 2.0 * ((double)(s >> 11) / 9007199254740992.0) - 1.0;
  }
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* xh = the fixed x on the host, yref = A xh (host AIJ, double) */
static PetscErrorCode host_reference(Mat A, Vec *xh, Vec *yref)
{
  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, xh, yref));
  PetscCall(fill_x(*xh));
  PetscCall(MatMult(A, *xh, *yref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = xh, then x's valid copy is where B computes (a device vector uploads here, not in the setup) */
static PetscErrorCode copy_x(Vec xh, Vec x)
{
  const PetscScalar *s, *d;
  PetscScalar       *a;
  PetscMemType       mt;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(xh, &n));
  PetscCall(VecGetArrayRead(xh, &s));
  PetscCall(VecGetArrayWrite(x, &a));
  PetscCall(PetscArraycpy(a, s, n));
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscCall(VecRestoreArrayRead(xh, &s));
  PetscCall(VecGetArrayReadAndMemType(x, &d, &mt));
  PetscCall(VecRestoreArrayReadAndMemType(x, &d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the PETSc type MatConvert gets for -type (aij: SeqAIJ, a copy) */
static const char *convert_type(const char *type)
{
  if (!strcmp(type, "aijcusparse")) return MATAIJCUSPARSE;
  if (!strcmp(type, "matxtract")) return MATMATXTRACT;
  return MATSEQAIJ;
}

/* setup: B = A converted, then the first y = B x; each part timed between device syncs. The vectors
 * (B's own kind, MatCreateVecs) are made and x uploaded between the two parts, untimed. */
static PetscErrorCode setup_phase(Mat A, const char *type, Vec xh, Mat *B, Vec *x, Vec *y, Run *r)
{
  PetscLogDouble t0, t1;
  VecType        vt;

  PetscFunctionBegin;
  PetscCall(wall_time(&t0));
  PetscCall(MatConvert(A, convert_type(type), MAT_INITIAL_MATRIX, B));
  PetscCall(wall_time(&t1));
  r->convert_s = t1 - t0;
  PetscCall(MatCreateVecs(*B, x, y));
  PetscCall(copy_x(xh, *x));
  PetscCall(VecSet(*y, 0.0));
  PetscCall(VecGetType(*x, &vt));
  snprintf(r->vec_type, sizeof r->vec_type, "%s", vt);
  PetscCall(wall_time(&t0));
  PetscCall(MatMult(*B, *x, *y));
  PetscCall(wall_time(&t1));
  r->first_mult_s = t1 - t0;
  r->setup_s      = r->convert_s + r->first_mult_s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* its products y = B x in batches of `batch` (the last may be shorter), each batch ended by a VecNorm(y)
 * the host waits for; r->batch_s[b] = the wall seconds of batch b, its VecNorm included */
static PetscErrorCode run_batches(Mat B, Vec x, Vec y, PetscInt its, PetscInt batch, Run *r)
{
  PetscReal      nrm;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  r->nb = (its + batch - 1) / batch;
  PetscCall(PetscMalloc1(r->nb, &r->batch_s));
  PetscCall(VecNorm(y, NORM_2, &nrm));
  PetscCall(PetscTime(&t0));
  for (PetscInt b = 0; b < r->nb; b++) {
    PetscInt len = PetscMin(batch, its - b * batch);
    for (PetscInt i = 0; i < len; i++) PetscCall(MatMult(B, x, y));
    PetscCall(VecNorm(y, NORM_2, &nrm));
    PetscCall(PetscTime(&t1));
    r->batch_s[b] = t1 - t0;
    t0            = t1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* the median of v[0..n) (n >= 1; v is sorted in place) */
static double median(double *v, PetscInt n)
{
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* first batch, steady state (per MatMult) and the totals from r->batch_s */
static PetscErrorCode summarise_batches(PetscInt its, PetscInt batch, Run *r)
{
  PetscInt full = its / batch, from, n;
  double  *v, sum = 0;

  PetscFunctionBegin;
  r->first_batch_s = r->batch_s[0] / (double)PetscMin(batch, its);
  if (full >= 1) {                                /* the steady state from full batches only */
    from = full >= E2E_SKIP + 3 ? E2E_SKIP : full - (full + 2) / 3;
    n    = full - from;
    PetscCall(PetscMalloc1(n, &v));
    for (PetscInt b = 0; b < n; b++) v[b] = r->batch_s[from + b] / (double)batch;
    r->steady_s = median(v, n);
    PetscCall(PetscFree(v));
  } else r->steady_s = r->first_batch_s;
  for (PetscInt k = 0; k < E2E_NTOTALS; k++) r->totals[k] = NAN;
  for (PetscInt b = 0; b < r->nb; b++) {
    PetscInt done = PetscMin(its, (b + 1) * batch);
    sum += r->batch_s[b];
    for (PetscInt k = 0; k < E2E_NTOTALS; k++)
      if (done == e2e_totals[k]) r->totals[k] = r->setup_s + sum;
  }
  r->total_its_s = r->setup_s + sum;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *err = max(*err, ||y - yref|| / ||yref||) on the host (fault: y[0] taken as off by 1e-6 * (1 + |yref[0]|)) */
static PetscErrorCode check_product(Vec y, Vec yref, PetscBool fault, double *err)
{
  const PetscScalar *a, *b;
  PetscInt           n;
  double             d = 0, s = 0, e;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(yref, &b));
  for (PetscInt i = 0; i < n; i++) {
    double diff = (double)PetscAbsScalar(a[i] - b[i]), ref = (double)PetscAbsScalar(b[i]);
    if (fault && i == 0) diff += 1e-6 * (1.0 + ref);
    if (PetscIsInfOrNanScalar(a[i])) diff = INFINITY;
    d += diff * diff;
    s += ref * ref;
  }
  PetscCall(VecRestoreArrayRead(yref, &b));
  PetscCall(VecRestoreArrayRead(y, &a));
  e    = s > 0 ? sqrt(d / s) : (d > 0 ? INFINITY : 0.0);
  *err = (isnan(*err) || e > *err || isnan(e)) ? e : *err;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char csv_header[] =
  "matrix,source,values,rows,cols,nnz,type,vec_type,gpu,its,batch,setup_s,convert_s,first_mult_s,first_batch_per_mult_s,"
  "steady_per_mult_s,total_100_s,total_1000_s,total_3000_s,total_its_s,dev_bytes,dev_bytes_per_nnz,rel_err,check,"
  "mx_crux_tc,mx_crux_tr,mx_crux_source,mx_hot_mode,mx_hot_nnz_share,mx_cold_kernel,mx_cold_source,mx_on_device,mx_predicted,"
  "mx_pred_crux_tc,mx_pred_crux_tr,mx_pred_cold_kernel,mx_upgrade_tried,mx_plan_settled,mx_builds,mx_mults_on_plan,mx_mult_us,"
  "mx_device_bytes,mx_build_peak_bytes,mx_build_s,mx_compress,mx_compress_packed,mx_compress_in_use,mx_compress_values,mx_compress_columns,"
  "mx_compress_rows,mx_compress_row_patterns,mx_packed_bytes_per_nnz,mx_hub_columns,batches_s\n";

/* "%g" of v, or "" for NAN */
static const char *num(double v, char *buf, size_t len)
{
  if (isnan(v)) buf[0] = 0;
  else snprintf(buf, len, "%.6g", v);
  return buf;
}

/* s, or "" for NULL */
static const char *str(const char *s)
{
  return s ? s : "";
}

/* the plan columns (E2E_NPLANCOLS of them, comma-terminated) of a matxtract B, read after the run;
 * empty for the other types */
static PetscErrorCode plan_columns(Mat B, PetscInt64 nnz, char *buf, size_t len)
{
  PetscBool          isx;
  MatXtractInfo      xi;
  char               p[2][32];

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJMATXTRACT, &isx));
  if (!isx) {
    for (int k = 0; k < E2E_NPLANCOLS; k++) buf[k] = ',';
    buf[E2E_NPLANCOLS] = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatXtractGetInfo(B, &xi));
  snprintf(buf, len, "%g,%g,%s,%s,%.4f,%s,%s,%d,%d,%s,%s,%s,%d,%d,%d,%d,%.3f,%.0f,%.0f,%.4f,%s,%d,%d,%s,%s,%s,%d,%.3f,%d,", (double)xi.tau_c,
           (double)xi.tau_r, MatXtractCruxSourceName(xi.crux_source), xi.hot_mode, nnz ? (double)xi.hot_nnz / (double)nnz : 0.0, xi.cold_kernel, MatXtractCruxSourceName(xi.cold_source),
           (int)xi.on_device, (int)xi.predicted, num(xi.predicted ? (double)xi.pred_tau_c : NAN, p[0], sizeof p[0]),
           num(xi.predicted ? (double)xi.pred_tau_r : NAN, p[1], sizeof p[1]), xi.predicted && xi.pred_cold_kernel ? xi.pred_cold_kernel : "",
           (int)xi.upgrade_tried, (int)xi.plan_settled, (int)xi.builds, (int)xi.mults, 1e6 * xi.mult_seconds, (double)xi.device_bytes,
           (double)xi.build_peak_bytes, xi.build_seconds, str(xi.compress), (int)xi.compress_packed, (int)xi.compress_in_use, str(xi.compress_values),
           str(xi.compress_columns), str(xi.compress_rows), (int)xi.compress_row_patterns, xi.packed_bytes_per_nnz, (int)xi.hub_columns);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* f = path opened for appending; the header is written when the file is new, and an existing file must
 * have the same header (the same columns) */
static PetscErrorCode open_csv(const char *path, FILE **f)
{
  char  line[sizeof csv_header + 16] = "";
  FILE *g = fopen(path, "r");

  PetscFunctionBegin;
  if (g) {
    if (!fgets(line, sizeof line, g)) line[0] = 0;
    fclose(g);
  }
  PetscCheck(!line[0] || !strcmp(line, csv_header), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s has other columns than this program writes: use a new file", path);
  *f = fopen(path, "a");
  PetscCheck(*f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot append to %s", path);
  if (!line[0]) fputs(csv_header, *f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one CSV row for the run */
static PetscErrorCode write_row(const Options *o, const Run *r, const char *plan)
{
  FILE  *f;
  char   b[16][32];
  double dev = r->free_before - r->free_after;

  PetscFunctionBegin;
  PetscCall(open_csv(o->out, &f));
  fprintf(f, "%s,%s,%s,%d,%d,%lld,%s,%s,%s,%d,%d,", o->name, o->source, o->values, (int)r->rows, (int)r->cols, (long long)r->nnz, o->type, r->vec_type, r->gpu,
          (int)o->its, (int)o->batch);
  fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.6g,%s,%s,%s,%.6g,%s,%s,%.3g,%s,", r->setup_s, r->convert_s, r->first_mult_s, r->first_batch_s, r->steady_s,
          num(r->totals[0], b[0], 32), num(r->totals[1], b[1], 32), num(r->totals[2], b[2], 32), r->total_its_s, num(dev, b[3], 32),
          num(r->nnz ? dev / (double)r->nnz : NAN, b[4], 32), r->rel_err, r->rel_err <= E2E_TOL ? "ok" : "FAIL");
  fputs(plan, f);
  for (PetscInt k = 0; k < r->nb; k++) fprintf(f, "%s%.6g", k ? ";" : "", r->batch_s[k]);
  fputc('\n', f);
  PetscCheck(fclose(f) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "writing %s failed", o->out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the run's line on stdout */
static PetscErrorCode print_run(const Options *o, const Run *r)
{
  PetscFunctionBegin;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "e2e: %s (%s, %s values) %dx%d nnz %lld, %s on %s, vectors %s\n", o->name, o->source, o->values, (int)r->rows, (int)r->cols,
                        (long long)r->nnz, o->type, r->gpu, r->vec_type));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "e2e: setup %.4f s (convert %.4f + first MatMult %.4f), per MatMult: first batch %.2f us, steady %.2f us\n", r->setup_s,
                        r->convert_s, r->first_mult_s, 1e6 * r->first_batch_s, 1e6 * r->steady_s));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "e2e: total after 100 %.4f s, 1000 %.4f s, 3000 %.4f s, %d: %.4f s; device bytes per nnz %.2f; rel err %.3g (%s)\n", r->totals[0],
                        r->totals[1], r->totals[2], (int)o->its, r->total_its_s, (r->free_before - r->free_after) / (double)(r->nnz ? r->nnz : 1), r->rel_err,
                        r->rel_err <= E2E_TOL ? "ok" : "FAIL"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Options     o;
  Run         r;
  Mat         A, B;
  Vec         xh, yref, x, y;
  MatInfo     info;
  PetscBool   help;
  PetscMPIInt size;
  char        plan[1024];

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (help) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n%s", usage, MatXtractGenerateHelp()));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "matxtract-e2e runs on one rank");
  PetscCall(get_options(&o));
  memset(&r, 0, sizeof r);
  r.rel_err = NAN;
  PetscCall(detect_device(o.cpu, r.gpu, sizeof r.gpu));
  PetscCheck(g_gpu || strcmp(o.type, "aijcusparse"), PETSC_COMM_WORLD, PETSC_ERR_SUP, "-type aijcusparse needs a usable GPU and PETSc with CUDA (this run: %s)", o.cpu ? "-cpu" : "none");
  if (!g_gpu) PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "cpu"));

  PetscCall(load_host_aij(&o, &A));
  PetscCall(MatGetSize(A, &r.rows, &r.cols));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  r.nnz = (PetscInt64)info.nz_used;
  PetscCall(host_reference(A, &xh, &yref));

  PetscCall(device_free_bytes(&r.free_before));
  PetscCall(setup_phase(A, o.type, xh, &B, &x, &y, &r));
  PetscCall(check_product(y, yref, o.fault, &r.rel_err));
  PetscCall(run_batches(B, x, y, o.its, o.batch, &r));
  PetscCall(device_free_bytes(&r.free_after)); /* B and the vectors still alive */
  PetscCall(check_product(y, yref, o.fault, &r.rel_err));
  PetscCall(summarise_batches(o.its, o.batch, &r));
  PetscCall(plan_columns(B, r.nnz, plan, sizeof plan));
  PetscCall(write_row(&o, &r, plan));
  PetscCall(print_run(&o, &r));

  PetscCall(PetscFree(r.batch_s));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return r.rel_err <= E2E_TOL ? 0 : 2;
}

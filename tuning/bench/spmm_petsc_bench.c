/* spmm_petsc_bench.c - matxtract-spmm-bench: products with k dense columns through PETSc (issue 43).
 *
 *   matxtract-spmm-bench [-gen SPEC | -f FILE]... [-k 1,2,4,8,16,32,64,128] [-reps 20] [-mults 0] [-cpu] [-transpose] [-o DIR]
 *
 * For every matrix, every type (aijcusparse and matxtract with MATDENSECUDA columns on a GPU; aij and
 * matxtract with MATDENSE on the CPU, or under -cpu) and every k:
 *   setup_ms     MatConvert from the host AIJ + the first MatMatMult (C created), synchronised;
 *   spmm_us      the median of -reps MatMatMult(A, B, MAT_REUSE_MATRIX) calls, each synchronised;
 *   kspmv_us     the median of -reps rounds of k MatMults, one per column (column vectors of B and C);
 *   rel_err      ||C - C_ref||_F / ||C_ref||_F against AIJ's product on the host (must be <= 1e-12).
 * -transpose: A' B instead (MatTransposeMatMult, k MatMultTransposes; B has A's rows).
 * -mults N: N MatMults (MatMultTransposes) on B's first column after the setup and before the timed
 * products, as a solve that multiplies single vectors too would run them: matxtract's plan engine
 * weighs its levers at MatMults (pack, row patterns, hub split), so the products then run on the plan
 * those MatMults reached (setup_ms does not include them).
 * Writes DIR/spmm_petsc.csv (one row per matrix, type and k) and DIR/spmm_petsc_env.txt (mode, PETSc);
 * prints a table of spmm_us per type and the ratio base / matxtract. Exit 1 on a wrong product. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <matxtract.h>
#include <petscmat.h>
#include <petsctime.h>
#if defined(PETSC_HAVE_CUDA)
  #include <petscdevice.h>
#endif

#if !PETSC_VERSION_GE(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

#define MAXMATS 64
#define MAXK    32
#define TOL     1e-12

static PetscBool g_gpu       = PETSC_FALSE;
static PetscBool g_transpose = PETSC_FALSE; /* -transpose: A' B */
static PetscInt  g_mults     = 0;           /* -mults N: MatMults before the timed products */

/* C = A B, or A' B under -transpose */
static PetscErrorCode Product(Mat A, Mat B, MatReuse reuse, Mat *C)
{
  PetscFunctionBegin;
  if (g_transpose) PetscCall(MatTransposeMatMult(A, B, reuse, PETSC_DEFAULT, C));
  else PetscCall(MatMatMult(A, B, reuse, PETSC_DEFAULT, C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Wait for the device (nothing on the CPU). */
static PetscErrorCode Sync(void)
{
  PetscFunctionBegin;
#if defined(PETSC_HAVE_CUDA)
  if (g_gpu) {
    PetscDeviceContext dctx;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CmpDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double Median(double *t, PetscInt n)
{
  qsort(t, (size_t)n, sizeof *t, CmpDouble);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* A random n x k dense matrix of type `type`, entries in [-1, 1). */
static PetscErrorCode RandomDense(PetscInt n, PetscInt k, MatType type, PetscRandom rnd, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_SELF, B));
  PetscCall(MatSetSizes(*B, n, k, n, k));
  PetscCall(MatSetType(*B, type));
  PetscCall(MatSetUp(*B));
  PetscCall(MatSetRandom(*B, rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||C - R||_F / ||R||_F (C on the host for the comparison). */
static PetscErrorCode RelErr(Mat R, Mat C, double *err)
{
  Mat       D;
  PetscReal nr, nd;

  PetscFunctionBegin;
  PetscCall(MatConvert(C, MATSEQDENSE, MAT_INITIAL_MATRIX, &D));
  PetscCall(MatAXPY(D, -1.0, R, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(R, NORM_FROBENIUS, &nr));
  PetscCall(MatNorm(D, NORM_FROBENIUS, &nd));
  *err = nr > 0 ? (double)(nd / nr) : (double)nd;
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* N MatMults (MatMultTransposes) of B's first column into C's (both overwritten later). */
static PetscErrorCode SingleMults(Mat A, Mat B, Mat C, PetscInt n)
{
  Vec b, y;

  PetscFunctionBegin;
  PetscCall(MatDenseGetColumnVecRead(B, 0, &b));
  PetscCall(MatDenseGetColumnVecWrite(C, 0, &y));
  for (PetscInt i = 0; i < n; i++) {
    if (g_transpose) PetscCall(MatMultTranspose(A, b, y));
    else PetscCall(MatMult(A, b, y));
  }
  PetscCall(MatDenseRestoreColumnVecWrite(C, 0, &y));
  PetscCall(MatDenseRestoreColumnVecRead(B, 0, &b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The median over reps of k MatMults (MatMultTransposes), one per column of B into C. */
static PetscErrorCode TimeColumns(Mat A, Mat B, Mat C, PetscInt reps, double *us)
{
  PetscInt k;
  double  *t;

  PetscFunctionBegin;
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCall(PetscMalloc1(reps, &t));
  for (PetscInt r = 0; r < reps; r++) {
    PetscLogDouble t0, t1;
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    for (PetscInt c = 0; c < k; c++) {
      Vec b, y;
      PetscCall(MatDenseGetColumnVecRead(B, c, &b));
      PetscCall(MatDenseGetColumnVecWrite(C, c, &y));
      if (g_transpose) PetscCall(MatMultTranspose(A, b, y));
      else PetscCall(MatMult(A, b, y));
      PetscCall(MatDenseRestoreColumnVecWrite(C, c, &y));
      PetscCall(MatDenseRestoreColumnVecRead(B, c, &b));
    }
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    t[r] = 1e6 * (t1 - t0);
  }
  *us = Median(t, reps);
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  double setup_ms, spmm_us, kspmv_us, err;
} Result;

/* One type and one k: setup, the reused product's median, k MatMults' median, the error against R. */
static PetscErrorCode RunOne(Mat Aaij, MatType type, Mat B, Mat R, PetscInt reps, Result *res)
{
  Mat            A, C = NULL;
  PetscLogDouble t0, t1;
  double        *t;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(reps, &t));
  PetscCall(Sync());
  PetscCall(PetscTime(&t0));
  PetscCall(MatConvert(Aaij, type, MAT_INITIAL_MATRIX, &A));
  PetscCall(Product(A, B, MAT_INITIAL_MATRIX, &C));
  PetscCall(Sync());
  PetscCall(PetscTime(&t1));
  res->setup_ms = 1e3 * (t1 - t0);
  PetscCall(SingleMults(A, B, C, g_mults));
  for (PetscInt r = 0; r < 3; r++) PetscCall(Product(A, B, MAT_REUSE_MATRIX, &C)); /* warm-up */
  for (PetscInt r = 0; r < reps; r++) {
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    PetscCall(Product(A, B, MAT_REUSE_MATRIX, &C));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    t[r] = 1e6 * (t1 - t0);
  }
  res->spmm_us = Median(t, reps);
  PetscCall(RelErr(R, C, &res->err));
  PetscCall(TimeColumns(A, B, C, reps, &res->kspmv_us));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "1,2,4" -> ks[], *nk */
static PetscErrorCode ParseKs(const char *s, PetscInt ks[], PetscInt *nk)
{
  char *dup, *tok, *save = NULL;

  PetscFunctionBegin;
  *nk = 0;
  dup = strdup(s);
  for (tok = strtok_r(dup, ",", &save); tok && *nk < MAXK; tok = strtok_r(NULL, ",", &save)) {
    ks[*nk] = (PetscInt)atol(tok);
    PetscCheck(ks[*nk] >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-k: every k must be >= 1 (got '%s')", tok);
    (*nk)++;
  }
  free(dup);
  PetscCheck(*nk > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-k: give a comma-separated list, e.g. 1,8,32");
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        *srcs[MAXMATS], kstr[256] = "1,2,4,8,16,32,64,128", out[PETSC_MAX_PATH_LEN] = "spmm-out", path[PETSC_MAX_PATH_LEN + 32];
  PetscBool    isgen[MAXMATS], cpu = PETSC_FALSE;
  PetscInt     nsrc = 0, ks[MAXK], nk, reps = 20;
  MatType      types[2], dense;
  PetscRandom  rnd;
  FILE        *f;
  int          bad = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, "matxtract-spmm-bench: MatMatMult with k dense columns, base type vs matxtract.\n"));
  PetscCall(MatXtractRegister());
  for (int a = 1; a + 1 < argc; a++) /* -gen and -f may repeat: read them in order */
    if ((!strcmp(argv[a], "-gen") || !strcmp(argv[a], "-f")) && nsrc < MAXMATS) {
      isgen[nsrc]  = (PetscBool)!strcmp(argv[a], "-gen");
      srcs[nsrc++] = argv[++a];
    }
  PetscCall(PetscOptionsHasName(NULL, NULL, "-gen", NULL)); /* read above from argv: mark them used */
  PetscCall(PetscOptionsHasName(NULL, NULL, "-f", NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-k", kstr, sizeof kstr, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", out, sizeof out, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cpu", &cpu, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-transpose", &g_transpose, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mults", &g_mults, NULL));
  PetscCheck(g_mults >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mults must be >= 0");
  PetscCheck(nsrc > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "give matrices with -gen SPEC or -f FILE");
  PetscCheck(reps >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1");
  PetscCall(ParseKs(kstr, ks, &nk));
#if defined(PETSC_HAVE_CUDA)
  if (!cpu) {
    PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
    g_gpu = PetscDeviceInitialized(PETSC_DEVICE_CUDA);
  }
#endif
  types[0] = g_gpu ? MATAIJCUSPARSE : MATAIJ;
  types[1] = MATMATXTRACT;
  dense    = g_gpu ? MATSEQDENSECUDA : MATSEQDENSE;
  if (!g_gpu) PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_device", "cpu"));
  mkdir(out, 0755);
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/spmm_petsc_env.txt", out));
  f = fopen(path, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fprintf(f, "mode=%s\nproduct=%s\npetsc=%d.%d.%d\nreps=%d\nmults=%d\n", g_gpu ? "gpu" : "cpu", g_transpose ? "AtB" : "AB", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, (int)reps, (int)g_mults);
  fclose(f);
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/spmm_petsc.csv", out));
  f = fopen(path, "w");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fprintf(f, "matrix,rows,cols,nnz,type,dense_type,k,setup_ms,spmm_us,kspmv_us,rel_err\n");
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "# %s, %s, reps %d, %d single-vector products first; us per product (median); ratio = %s / matxtract\n", g_gpu ? "GPU" : "CPU", g_transpose ? "A' B" : "A B", (int)reps, (int)g_mults, types[0]));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-28s %5s %12s %12s %12s %8s\n", "matrix", "k", types[0], "matxtract", "mx k SpMVs", "ratio"));
  for (PetscInt s = 0; s < nsrc; s++) {
    Mat      Aaij;
    PetscInt m, n;
    MatInfo  info;
    if (isgen[s]) PetscCall(MatXtractGenerate(PETSC_COMM_SELF, srcs[s], "spmm_adj_", &Aaij));
    else PetscCall(MatXtractLoad(PETSC_COMM_SELF, srcs[s], "spmm_adj_", &Aaij));
    PetscCall(MatConvert(Aaij, MATSEQAIJ, MAT_INPLACE_MATRIX, &Aaij));
    PetscCall(MatGetSize(Aaij, &m, &n));
    PetscCall(MatGetInfo(Aaij, MAT_LOCAL, &info));
    for (PetscInt q = 0; q < nk; q++) {
      Mat    Bh, B, R;
      Result res[2];
      PetscCall(RandomDense(g_transpose ? m : n, ks[q], MATSEQDENSE, rnd, &Bh));
      PetscCall(Product(Aaij, Bh, MAT_INITIAL_MATRIX, &R)); /* the reference on the host */
      PetscCall(MatConvert(Bh, dense, MAT_INITIAL_MATRIX, &B));
      for (int t = 0; t < 2; t++) {
        PetscCall(RunOne(Aaij, types[t], B, R, reps, &res[t]));
        fprintf(f, "%s,%d,%d,%.0f,%s,%s,%d,%.3f,%.3f,%.3f,%.3g\n", srcs[s], (int)m, (int)n, (double)info.nz_used, types[t], dense, (int)ks[q], res[t].setup_ms, res[t].spmm_us, res[t].kspmv_us, res[t].err);
        if (!(res[t].err <= TOL)) bad = 1;
      }
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-28s %5d %12.2f %12.2f %12.2f %7.2fx%s\n", srcs[s], (int)ks[q], res[0].spmm_us, res[1].spmm_us, res[1].kspmv_us, res[0].spmm_us / res[1].spmm_us,
                            res[0].err <= TOL && res[1].err <= TOL ? "" : "  WRONG PRODUCT"));
      PetscCall(MatDestroy(&B));
      PetscCall(MatDestroy(&R));
      PetscCall(MatDestroy(&Bh));
    }
    PetscCall(MatDestroy(&Aaij));
  }
  fclose(f);
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscFinalize());
  return bad;
}

/* test_petsc_ops - every op of MATSEQAIJMATXTRACT against SeqAIJ (relative error <= 1e-12), on
 * random matrices of many shapes and on real Matrix Market files, for a grid of cruxes and the
 * three hot modes; also value refresh, pattern rebuild, duplicate/copy/convert, options, errors.
 * Usage: test_petsc_ops [-dir MATRICES_DIR/real] */
#include <matxtract.h>
#include "../common/petsc_check.h"

/* the -mat_view output of the interface test goes into the build tree, never the working directory */
#define MX_TEST_VIEW_FILE MX_TEST_TMPDIR "/test_petsc_ops_view.txt"

static const char help[] = "MatXtract op-by-op comparison with SeqAIJ.\n";

typedef struct {
  PetscReal tc, tr;
} Crux;

static const Crux        cruxes[] = {{0, 0}, {1, 1}, {1, 0}, {0.5, 0.3}, {0.9, 0.8}, {0.7, 0.5}};
static const char *const modes[]  = {"auto", "du", "se"};

/* splitmix64: deterministic random numbers for matrix patterns and values */
static uint64_t rng_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

/* Random m x n AIJ: per-row lengths from `kind` (uniform, power law, one dense row, one dense
 * column, empty rows), values in [-1, 1). */
static PetscErrorCode RandomAIJ(PetscInt m, PetscInt n, PetscInt avg, int kind, uint64_t seed, Mat *A)
{
  uint64_t     s = seed;
  PetscInt    *cols;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, 0, NULL, A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(PetscMalloc2(n + 1, &cols, n + 1, &vals));
  for (PetscInt i = 0; i < m; i++) {
    PetscInt len = n ? (PetscInt)(rng_next(&s) % (uint64_t)(2 * avg + 1)) : 0;
    if (kind == 1) len = n ? (PetscInt)PetscMin(n, (PetscInt)(avg / PetscPowReal(rng_unit(&s) + 1e-3, 1.2))) : 0; /* power law */
    if (kind == 2 && i == m / 2) len = n;                                                                          /* dense row */
    if (kind == 4 && i % 3 == 0) len = 0;                                                                          /* empty rows */
    len = PetscMin(len, n);
    for (PetscInt k = 0; k < len; k++) {
      cols[k] = (kind == 4) ? (PetscInt)(rng_next(&s) % (uint64_t)PetscMax(1, n / 2)) * 2 % PetscMax(n, 1) : (PetscInt)(rng_next(&s) % (uint64_t)n);
      vals[k] = 2.0 * rng_unit(&s) - 1.0;
    }
    if (kind == 3 && n) { /* dense column 0 */
      cols[len] = 0;
      vals[len] = 1.0 + rng_unit(&s);
      len++;
    }
    PetscCall(MatSetValues(*A, 1, &i, len, cols, vals, ADD_VALUES));
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* B = A converted to matxtract with the given crux and mode. */
static PetscErrorCode ToMatXtract(Mat A, Crux c, const char *mode, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_mode", mode));
  PetscCall(MatConvert(A, MATSEQAIJMATXTRACT, MAT_INITIAL_MATRIX, B));
  PetscCall(MatSetFromOptions(*B));
  PetscCall(MatXtractSetCrux(*B, c.tc, c.tr));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_mode"));
  PetscFunctionReturn(0);
}

/* Value changes without assembly (scale, shift, AXPY, zero, copy) and with it (same pattern, then a
 * new pattern): B must follow A exactly. Modifies A. */
static PetscErrorCode CheckValueChanges(Mat A, Mat B, const char *name, uint64_t seed)
{
  PetscInt m, n;
  Mat      C, D;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatScale(A, -2.5));
  PetscCall(MatScale(B, -2.5));
  PetscCall(CheckProducts(A, B, name, seed + 10));
  if (m == n) {
    Vec da, db;
    PetscCall(MatShift(A, 3.0));
    PetscCall(MatShift(B, 3.0));
    PetscCall(CheckProducts(A, B, name, seed + 20));
    PetscCall(MatCreateVecs(A, &da, NULL));
    PetscCall(VecDuplicate(da, &db));
    PetscCall(MatGetDiagonal(A, da));
    PetscCall(MatGetDiagonal(B, db));
    PetscCall(CheckClose(da, db, "MatGetDiagonal", name));
    PetscCall(VecDestroy(&da));
    PetscCall(VecDestroy(&db));
  }
  { /* A <- A + 0.5 E with E a same-pattern AIJ copy: MatAXPY changes values without assembly */
    Mat E;
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &E));
    PetscCall(MatScale(E, 0.5));
    PetscCall(MatAXPY(A, 1.0, E, SAME_NONZERO_PATTERN));
    PetscCall(MatAXPY(B, 1.0, E, SAME_NONZERO_PATTERN));
    PetscCall(CheckProducts(A, B, "after MatAXPY", seed + 30));
    PetscCall(MatDestroy(&E));
  }

  /* MatSetValues on existing entries + assembly: values-only refresh */
  if (m && n) {
    PetscInt    ncols, row = m - 1;
    const PetscInt *cols;
    PetscCall(MatGetRow(A, row, &ncols, &cols, NULL));
    if (ncols) {
      PetscInt    c = cols[0];
      PetscScalar v = 7.0;
      PetscCall(MatRestoreRow(A, row, &ncols, &cols, NULL));
      PetscCall(MatSetValue(A, row, c, v, INSERT_VALUES));
      PetscCall(MatSetValue(B, row, c, v, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
      PetscCall(CheckProducts(A, B, "after MatSetValues (same pattern)", seed + 40));
    } else PetscCall(MatRestoreRow(A, row, &ncols, &cols, NULL));
    /* a new nonzero: pattern change, the format is rebuilt */
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    for (PetscInt j = 0; j < n; j += PetscMax(1, n / 3)) {
      PetscCall(MatSetValue(A, 0, j, 1.0, ADD_VALUES));
      PetscCall(MatSetValue(B, 0, j, 1.0, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(CheckProducts(A, B, "after new nonzeros (rebuild)", seed + 50));
  }

  /* duplicate with and without values, then copy */
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &C));
  PetscCall(CheckProducts(A, C, "MatDuplicate(COPY_VALUES)", seed + 60));
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &D));
  PetscCall(MatCopy(A, D, SAME_NONZERO_PATTERN));
  PetscCall(CheckProducts(A, D, "MatDuplicate(DO_NOT_COPY)+MatCopy", seed + 70));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(D));
  PetscCall(CheckProducts(A, D, "MatZeroEntries", seed + 80));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

/* Everything on one AIJ matrix A (not modified): every crux and mode. */
static PetscErrorCode CheckMatrix(Mat A0, const char *name, uint64_t seed)
{
  PetscFunctionBegin;
  for (size_t ic = 0; ic < sizeof cruxes / sizeof cruxes[0]; ic++) {
    for (size_t im = 0; im < 3; im++) {
      Mat  A, B;
      char label[PETSC_MAX_PATH_LEN];
      PetscCall(PetscSNPrintf(label, sizeof label, "%s crux (%g,%g) mode %s", name, (double)cruxes[ic].tc, (double)cruxes[ic].tr, modes[im]));
      PetscCall(MatDuplicate(A0, MAT_COPY_VALUES, &A));
      PetscCall(ToMatXtract(A, cruxes[ic], modes[im], &B));
      PetscCall(CheckProducts(A, B, label, seed + 100 * ic + im));
      if (ic == 5 && im == 0) PetscCall(CheckValueChanges(A, B, label, seed + 1000));
      PetscCall(MatDestroy(&B));
      PetscCall(MatDestroy(&A));
    }
  }
  PetscFunctionReturn(0);
}

/* Info, view, hot path activity, options, convert back, and the clear errors. */
static PetscErrorCode CheckInterface(void)
{
  Mat            A, B, C;
  MatXtractInfo  info;
  PetscViewer    viewer;
  PetscBool      flg;
  PetscErrorCode ierr;
  char           buf[4096] = "";

  PetscFunctionBegin;
  PetscCall(RandomAIJ(300, 300, 12, 1, 77, &A));
  PetscCall(MatConvert(A, MATSEQAIJMATXTRACT, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(Expect((PetscBool)(info.hot_nnz == 0 && info.crux_source == MATXTRACT_CRUX_DEFAULT), "default crux is all cold", "interface"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_crux", "0.7,0.5"));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_crux"));
  PetscCall(MatXtractGetInfo(B, &info));
  PetscCall(Expect((PetscBool)(info.hot_nnz > 0 && info.crux_source == MATXTRACT_CRUX_OPTION && info.tau_c == (PetscReal)0.7), "-mat_matxtract_crux activates the hot path", "interface"));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, MX_TEST_VIEW_FILE, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_INFO_DETAIL));
  PetscCall(MatView(B, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  {
    FILE  *f = fopen(MX_TEST_VIEW_FILE, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n]   = 0;
    if (f) fclose(f);
  }
  PetscCall(Expect((PetscBool)(strstr(buf, "crux (tau_c, tau_r) = (0.7, 0.5)") != NULL), "-mat_view ::ascii_info_detail shows the crux", "interface"));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJMATXTRACT, &flg));
  PetscCall(Expect(flg, "type name", "interface"));

  /* back to AIJ: same products, AIJ type */
  PetscCall(MatConvert(B, MATSEQAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAIJ, &flg));
  PetscCall(Expect(flg, "convert back to seqaij", "interface"));
  PetscCall(CheckProducts(A, C, "converted back to seqaij", 5));
  PetscCall(MatDestroy(&C));

  /* -mat_type matxtract through MatSetFromOptions, root name mapping */
  PetscCall(MatCreate(PETSC_COMM_SELF, &C));
  PetscCall(MatSetSizes(C, 300, 300, 300, 300));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_type", "matxtract"));
  PetscCall(MatSetFromOptions(C));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_type"));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAIJMATXTRACT, &flg));
  PetscCall(Expect(flg, "-mat_type matxtract gives seqaijmatxtract", "interface"));
  PetscCall(MatSetUp(C));
  PetscCall(MatSetOption(C, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = 0; i < 300; i++) {
    PetscInt           ncols;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(A, i, &ncols, &cols, &vals));
    PetscCall(MatSetValues(C, 1, &i, ncols, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(A, i, &ncols, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckProducts(A, C, "MatSetFromOptions + MatSetValues", 6));
  PetscCall(MatDestroy(&C));

  /* invalid crux: a clear error, no crash */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatXtractSetCrux(B, 0.3, 0.5);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Expect((PetscBool)(ierr == PETSC_ERR_ARG_OUTOFRANGE), "tau_r > tau_c is refused", "interface"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char dir[PETSC_MAX_PATH_LEN] = "";
  static const char *const real[] = {"bcsstk13", "pushpull", "cryg2500", "zenios", "olm1000", "jagmesh7", "west0067", "lp_afiro", "karate", "LFAT5", "test_FW_2003", "skew_fp64", "full_symmetric", "ldbc-directed-example"};
  /* shape: rows, cols, average row length, kind (0 uniform, 1 power law, 2 dense row, 3 dense col, 4 empty rows+cols) */
  static const PetscInt shapes[][4] = {
    {0, 0, 0, 0},     {1, 1, 1, 0},      {1, 50, 10, 0},   {50, 1, 1, 0},     {7, 7, 3, 0},     {8, 8, 3, 0},     {9, 9, 3, 0},     {15, 15, 4, 0},
    {17, 17, 4, 0},   {63, 40, 6, 0},    {40, 63, 6, 0},   {200, 200, 0, 0},  {257, 300, 8, 1}, {300, 257, 8, 1}, {100, 100, 3, 2}, {100, 120, 3, 3},
    {120, 100, 4, 4}, {1000, 1000, 16, 1}, {2000, 1500, 5, 0}, {64, 64, 64, 0},
  };

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof dir, NULL));

  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    Mat  A;
    char name[64];
    PetscCall(PetscSNPrintf(name, sizeof name, "random %dx%d avg %d kind %d", (int)shapes[s][0], (int)shapes[s][1], (int)shapes[s][2], (int)shapes[s][3]));
    PetscCall(RandomAIJ(shapes[s][0], shapes[s][1], shapes[s][2], (int)shapes[s][3], 1000 + s, &A));
    PetscCall(CheckMatrix(A, name, 17 * s));
    PetscCall(MatDestroy(&A));
  }
  if (dir[0]) {
    for (size_t r = 0; r < sizeof real / sizeof real[0]; r++) {
      Mat  A;
      char path[PETSC_MAX_PATH_LEN];
      PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s.mtx", dir, real[r]));
      PetscCall(MatXtractLoad(PETSC_COMM_SELF, path, "aij_", &A));
      PetscCall(CheckMatrix(A, real[r], 31 * r));
      PetscCall(MatDestroy(&A));
    }
  }
  PetscCall(CheckInterface());
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}

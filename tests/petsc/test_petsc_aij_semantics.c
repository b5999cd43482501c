/* test_petsc_aij_semantics - where PETSc's own Mat tests found matxtract behaving unlike AIJ (issue 40),
 * each case against the same operations on AIJ:
 *   - in-place factorizations (MatLUFactor, MatILUFactor), then a solve and MatDestroy (the matrix
 *     becomes a plain AIJ factor);
 *   - mixed-type products: A*D, A^T*D, A*D^T, D*A with dense D, and PtAP with a MAIJ P;
 *   - a structure-only matrix (MAT_STRUCTURE_ONLY) assembles; its MatMult is a clear error;
 *   - MatConvert(dense -> matxtract) keeps AIJ's preallocation: a new nonzero errs where AIJ's does;
 *   - MatCopy(DIFFERENT_NONZERO_PATTERN) into a set-up matrix, MatTranspose + MatAXPY + MatConvert
 *     back to AIJ: the allocated nonzeros equal AIJ's;
 *   - -mat_view ::ascii_info equals AIJ's (type names mapped); ::ascii_info_detail adds our lines.
 * Runs on any number of ranks (the factorizations on one). */
#include <matxtract.h>
#include <petscksp.h>
#include "../common/petsc_check.h"

#define MX_TEST_VIEW_AIJ MX_TEST_TMPDIR "/test_petsc_aij_semantics_aij.txt"
#define MX_TEST_VIEW_MX  MX_TEST_TMPDIR "/test_petsc_aij_semantics_mx.txt"

static const char help[] = "matxtract vs AIJ where PETSc's Mat tests differed.\n";

/* The 5-point Laplacian on an n x n grid, plus a small asymmetric part when asym, as `type`. */
static PetscErrorCode Laplacian(MPI_Comm comm, PetscInt n, PetscBool asym, MatType type, Mat *A)
{
  PetscInt rstart, rend, N = n * n;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 5, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt    i = r / n, j = r % n, cols[5], k = 0;
    PetscScalar v[5];
    cols[k] = r, v[k++] = 4.0;
    if (i > 0) cols[k] = r - n, v[k++] = -1.0;
    if (i < n - 1) cols[k] = r + n, v[k++] = asym ? -0.5 : -1.0;
    if (j > 0) cols[k] = r - 1, v[k++] = -1.0;
    if (j < n - 1) cols[k] = r + 1, v[k++] = asym ? -0.75 : -1.0;
    PetscCall(MatSetValues(*A, 1, &r, k, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* ||R - B||_F <= TOL ||R||_F (B converted to R's type first where they differ) */
static PetscErrorCode CheckMatClose(Mat R, Mat B, const char *what)
{
  Mat       D;
  PetscReal nr, nd;

  PetscFunctionBegin;
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &D));
  {
    Mat Ra;
    PetscCall(MatConvert(R, MATAIJ, MAT_INITIAL_MATRIX, &Ra));
    PetscCall(MatAXPY(D, -1.0, Ra, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatNorm(Ra, NORM_FROBENIUS, &nr));
    PetscCall(MatDestroy(&Ra));
  }
  PetscCall(MatNorm(D, NORM_FROBENIUS, &nd));
  PetscCall(MatDestroy(&D));
  PetscCall(Record((PetscBool)(nd <= TOL * nr), what, "laplacian", nr, nd));
  PetscFunctionReturn(0);
}

/* An in-place factorization of matxtract vs AIJ: the solves agree, the factor is plain AIJ, and
 * MatDestroy works (it crashed before). kind: 0 LU, 1 ILU(0), 2 Cholesky, 3 ICC(0) (PETSc 3.18's
 * SeqAIJ has the first two in place; the type forwards all four to AIJ). */
static PetscErrorCode CheckInPlaceFactor(int kind)
{
  const char *const names[] = {"in-place LU", "in-place ILU", "in-place Cholesky", "in-place ICC"};
  Mat               F[2];
  Vec               b, x[2];
  MatFactorInfo     info;
  IS                row, col;
  PetscBool         isaij;

  PetscFunctionBegin;
  PetscCall(MatFactorInfoInitialize(&info));
  for (int t = 0; t < 2; t++) {
    PetscCall(Laplacian(PETSC_COMM_SELF, 8, PETSC_FALSE, t ? MATMATXTRACT : MATSEQAIJ, &F[t]));
    PetscCall(MatGetOrdering(F[t], MATORDERINGNATURAL, &row, &col));
    if (kind == 0) PetscCall(MatLUFactor(F[t], row, col, &info));
    if (kind == 1) PetscCall(MatILUFactor(F[t], row, col, &info));
    if (kind == 2) PetscCall(MatCholeskyFactor(F[t], row, &info));
    if (kind == 3) PetscCall(MatICCFactor(F[t], row, &info));
    PetscCall(ISDestroy(&row));
    PetscCall(ISDestroy(&col));
    PetscCall(MatCreateVecs(F[t], &x[t], t ? NULL : &b));
  }
  PetscCall(VecSet(b, 1.0));
  PetscCall(MatSolve(F[0], b, x[0]));
  PetscCall(MatSolve(F[1], b, x[1]));
  PetscCall(CheckClose(x[0], x[1], names[kind], "laplacian 8x8"));
  PetscCall(PetscObjectTypeCompare((PetscObject)F[1], MATSEQAIJ, &isaij));
  PetscCall(Expect(isaij, "the in-place factor is a plain seqaij", names[kind]));
  for (int t = 0; t < 2; t++) {
    PetscCall(MatDestroy(&F[t]));
    PetscCall(VecDestroy(&x[t]));
  }
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* A dense matrix of m x n on comm with values from (i, j). */
static PetscErrorCode DenseOf(MPI_Comm comm, PetscInt m, PetscInt n, Mat *D)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatCreateDense(comm, PETSC_DECIDE, PETSC_DECIDE, m, n, NULL, D));
  PetscCall(MatGetOwnershipRange(*D, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++)
    for (PetscInt j = 0; j < n; j++) {
      PetscScalar v = 1.0 / (1.0 + (PetscReal)i + 2.0 * (PetscReal)j);
      PetscCall(MatSetValue(*D, i, j, v, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(*D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*D, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Products with dense and MAIJ operands, matxtract vs AIJ (they failed: "Unspecified symbolic phase"). */
static PetscErrorCode CheckMixedProducts(MPI_Comm comm)
{
  const PetscInt n = 6, N = n * n, k = 3;
  Mat            A[2], D, Dt, Pm, C[2];
  PetscMPIInt    size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(Laplacian(comm, n, PETSC_TRUE, MATAIJ, &A[0]));
  PetscCall(Laplacian(comm, n, PETSC_TRUE, MATMATXTRACT, &A[1]));
  PetscCall(DenseOf(comm, N, k, &D));
  PetscCall(DenseOf(comm, k, N, &Dt));
  for (int t = 0; t < 2; t++) PetscCall(MatMatMult(A[t], D, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[t]));
  PetscCall(CheckMatClose(C[0], C[1], "A*D (dense)"));
  for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&C[t]));
  for (int t = 0; t < 2; t++) PetscCall(MatTransposeMatMult(A[t], D, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[t]));
  PetscCall(CheckMatClose(C[0], C[1], "A^T*D (dense)"));
  for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&C[t]));
  if (size == 1) { /* PETSc 3.18 has no A*D^T for MPIAIJ x MPIDense */
    for (int t = 0; t < 2; t++) PetscCall(MatMatTransposeMult(A[t], Dt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[t]));
    PetscCall(CheckMatClose(C[0], C[1], "A*D^T (dense)"));
    for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&C[t]));
  }
  for (int t = 0; t < 2; t++) PetscCall(MatMatMult(Dt, A[t], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[t]));
  PetscCall(CheckMatClose(C[0], C[1], "D*A (dense)"));
  for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&C[t]));
  /* PtAP with P = MAIJ(Paij, 2) of size N x (N/2): A must be 2N x 2N, so A (x) I_2 is built as a
   * MAIJ too and its AIJ form taken */
  {
    Mat Ak[2], Paij;
    PetscCall(Laplacian(comm, n, PETSC_FALSE, MATAIJ, &Paij)); /* square N x N interpolation stand-in */
    PetscCall(MatCreateMAIJ(Paij, 2, &Pm));
    for (int t = 0; t < 2; t++) {
      Mat M;
      PetscCall(MatCreateMAIJ(A[0], 2, &M));
      PetscCall(MatConvert(M, t ? MATMATXTRACT : MATAIJ, MAT_INITIAL_MATRIX, &Ak[t]));
      PetscCall(MatDestroy(&M));
    }
    for (int t = 0; t < 2; t++) PetscCall(MatPtAP(Ak[t], Pm, MAT_INITIAL_MATRIX, 2.0, &C[t]));
    PetscCall(CheckMatClose(C[0], C[1], "PtAP (P MAIJ)"));
    for (int t = 0; t < 2; t++) PetscCall(MatPtAP(Ak[t], Pm, MAT_REUSE_MATRIX, 2.0, &C[t]));
    PetscCall(CheckMatClose(C[0], C[1], "PtAP (P MAIJ, reused)"));
    for (int t = 0; t < 2; t++) {
      PetscCall(MatDestroy(&C[t]));
      PetscCall(MatDestroy(&Ak[t]));
    }
    PetscCall(MatDestroy(&Paij));
  }
  PetscCall(MatDestroy(&Pm));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&Dt));
  for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&A[t]));
  PetscFunctionReturn(0);
}

/* A structure-only matrix assembles as AIJ's does; MatMult is a clear error, not a crash. */
static PetscErrorCode CheckStructureOnly(MPI_Comm comm)
{
  Mat            A;
  Vec            x, y;
  PetscErrorCode ierr;
  PetscInt       rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 20, 20));
  PetscCall(MatSetType(A, MATMATXTRACT));
  PetscCall(MatSetOption(A, MAT_STRUCTURE_ONLY, PETSC_TRUE));
  PetscCall(MatSeqAIJSetPreallocation(A, 2, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 2, NULL, 1, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt cols[2] = {i, (i + 1) % 20};
    PetscCall(MatSetValues(A, 1, &i, 2, cols, NULL, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(Expect(PETSC_TRUE, "structure-only matrix assembles", "structure-only"));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatMult(A, x, y);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Expect((PetscBool)(ierr != 0), "MatMult of a structure-only matrix is an error", "structure-only"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* MatConvert(dense -> T) keeps AIJ's preallocation: inserting a new nonzero is an error for
 * matxtract exactly where it is for AIJ (MPIAIJ: yes; SeqAIJ in 3.18: no); err[t] says whether it was. */
static PetscErrorCode CheckConvertFromDense(MPI_Comm comm)
{
  PetscBool err[2];

  PetscFunctionBegin;
  for (int t = 0; t < 2; t++) {
    Mat            D;
    PetscInt       rstart;
    PetscErrorCode ierr;
    PetscScalar    v = 1.0;
    PetscCall(MatCreateDense(comm, PETSC_DECIDE, PETSC_DECIDE, 8, 8, NULL, &D)); /* all zeros: no nonzeros kept */
    PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatConvert(D, t ? MATMATXTRACT : MATAIJ, MAT_INPLACE_MATRIX, &D));
    PetscCall(MatGetOwnershipRange(D, &rstart, NULL));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatSetValues(D, 1, &rstart, 1, &rstart, &v, INSERT_VALUES);
    PetscCall(PetscPopErrorHandler());
    err[t] = (PetscBool)(ierr != 0);
    PetscCall(MatDestroy(&D));
  }
  PetscCall(Expect((PetscBool)(err[0] == err[1]), "a new nonzero after MatConvert(dense) is an error exactly where AIJ's is", "dense -> matxtract"));
  PetscFunctionReturn(0);
}

static PetscErrorCode Allocated(Mat A, PetscLogDouble *nz)
{
  MatInfo info;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  *nz = info.nz_allocated;
  PetscFunctionReturn(0);
}

/* Allocation after MatCopy(DIFFERENT_NONZERO_PATTERN) into a set-up matrix, and after MatTranspose +
 * MatAXPY + MatConvert back to AIJ (ex37 on 2 ranks): matxtract's equals AIJ's. */
static PetscErrorCode CheckAllocation(MPI_Comm comm)
{
  PetscLogDouble nz[2][2];
  PetscBool      isaij;

  PetscFunctionBegin;
  for (int t = 0; t < 2; t++) {
    Mat C, A, Cs;
    PetscCall(Laplacian(comm, 5, PETSC_TRUE, t ? MATMATXTRACT : MATAIJ, &C));
    PetscCall(MatCreate(comm, &A));
    PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 25, 25));
    PetscCall(MatSetType(A, t ? MATMATXTRACT : MATAIJ));
    PetscCall(MatSetUp(A));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCopy(C, A, DIFFERENT_NONZERO_PATTERN));
    PetscCall(Allocated(A, &nz[t][0]));
    PetscCall(MatTranspose(C, MAT_INITIAL_MATRIX, &Cs));
    PetscCall(MatAXPY(Cs, 1.0, C, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatConvert(Cs, MATAIJ, MAT_INPLACE_MATRIX, &Cs));
    PetscCall(Allocated(Cs, &nz[t][1]));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)Cs, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
    PetscCall(Expect(isaij, "MatConvert(matxtract, aij) gives plain AIJ", "transpose + axpy"));
    PetscCall(MatDestroy(&Cs));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&C));
  }
  PetscCall(Record((PetscBool)(nz[0][0] == nz[1][0]), "allocated nonzeros after MatCopy(DIFFERENT_NONZERO_PATTERN)", "laplacian 5x5", nz[0][0], nz[1][0]));
  PetscCall(Record((PetscBool)(nz[0][1] == nz[1][1]), "allocated nonzeros after MatTranspose + MatAXPY + MatConvert to aij", "laplacian 5x5", nz[0][1], nz[1][1]));
  PetscFunctionReturn(0);
}

/* The text of A viewed with format into path (rank 0 writes it), read back into buf. */
static PetscErrorCode ViewText(Mat A, PetscViewerFormat format, const char *path, char *buf, size_t len)
{
  PetscViewer viewer;
  FILE       *f;
  size_t      got = 0;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIOpen(PetscObjectComm((PetscObject)A), path, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, format));
  PetscCall(MatView(A, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  buf[0] = 0;
  f      = fopen(path, "r");
  if (f) {
    got = fread(buf, 1, len - 1, f);
    fclose(f);
  }
  buf[got] = 0;
  PetscFunctionReturn(0);
}

/* Type names of ours mapped to AIJ's in place ("seqaijmatxtract" -> "seqaij"). */
static void MapTypeNames(char *s)
{
  char *p;

  while ((p = strstr(s, "aijmatxtract"))) memmove(p + 3, p + 12, strlen(p + 12) + 1);
}

/* -mat_view ::ascii_info equals AIJ's; ::ascii_info_detail adds the MatXtract lines. */
static PetscErrorCode CheckInfoView(MPI_Comm comm)
{
  static char a[8192], m[8192];
  Mat         A[2];
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(Laplacian(comm, 5, PETSC_FALSE, MATAIJ, &A[0]));
  PetscCall(Laplacian(comm, 5, PETSC_FALSE, MATMATXTRACT, &A[1]));
  PetscCall(ViewText(A[0], PETSC_VIEWER_ASCII_INFO, MX_TEST_VIEW_AIJ, a, sizeof a));
  PetscCall(ViewText(A[1], PETSC_VIEWER_ASCII_INFO, MX_TEST_VIEW_MX, m, sizeof m));
  MapTypeNames(m);
  if (!rank) PetscCall(Expect((PetscBool)(a[0] && !strcmp(a, m)), "-mat_view ::ascii_info equals AIJ's", "laplacian 5x5"));
  PetscCall(ViewText(A[1], PETSC_VIEWER_ASCII_INFO_DETAIL, MX_TEST_VIEW_MX, m, sizeof m));
  if (!rank) PetscCall(Expect((PetscBool)(strstr(m, "MatXtract: crux") != NULL), "-mat_view ::ascii_info_detail shows the MatXtract lines", "laplacian 5x5"));
  for (int t = 0; t < 2; t++) PetscCall(MatDestroy(&A[t]));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1)
    for (int kind = 0; kind < 2; kind++) PetscCall(CheckInPlaceFactor(kind)); /* SeqAIJ has no in-place Cholesky or ICC */
  PetscCall(CheckMixedProducts(PETSC_COMM_WORLD));
  PetscCall(CheckStructureOnly(PETSC_COMM_WORLD));
  PetscCall(CheckConvertFromDense(PETSC_COMM_WORLD));
  PetscCall(CheckAllocation(PETSC_COMM_WORLD));
  PetscCall(CheckInfoView(PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " checks, %" PetscInt_FMT " failed\n", nchecks, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}

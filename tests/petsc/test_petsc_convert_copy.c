/* test_petsc_convert_copy - MatConvert(SeqAIJ -> matxtract, MAT_INITIAL_MATRIX) of a matrix of 4 MB
 * or more copies its arrays on several threads (src/petsc/matxtract_duplicate.c); against AIJ:
 *   - the copy took the threaded path (the MatXtractCopy event, with 2+ copy threads) or PETSc's
 *     MatDuplicate (with 1);
 *   - its CSR arrays equal the source's exactly, its block sizes and vector type are the source's,
 *     MatMult equals the source's (relative error <= 1e-12) on fresh random vectors;
 *   - the source changed after the conversion leaves the copy unchanged;
 *   - a new nonzero is PETSc's "caused a malloc" error, as in a MatDuplicate of a preallocated AIJ;
 *     with MAT_NEW_NONZERO_ALLOCATION_ERR off it goes in, and MatMult then equals AIJ's with the
 *     same insertion;
 *   - converting the copy back to AIJ in place, then destroying it, frees everything (the sanitizer
 *     build's leak check).
 *   - the rule between 4 and 32 MiB: 16 nonzeros per row threaded, 5 per row (a 2D Laplacian) and
 *     a matrix under 4 MiB through MatDuplicate.
 * Run with -mat_matxtract_copy_threads 1 (the ctest "_petsc_duplicate" variant) every copy is
 * expected from MatDuplicate. */
#include <matxtract.h>
#include "../common/petsc_check.h"

static const char help[] = "MatConvert's threaded copy vs AIJ.\n";

/* The 5-point Laplacian on an n x n grid with distinct values, block size 2, as SeqAIJ. */
static PetscErrorCode Laplacian(PetscInt n, Mat *A)
{
  PetscInt N = n * n;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, N, N, N, N));
  PetscCall(MatSetBlockSizes(*A, 2, 2));
  PetscCall(MatSetType(*A, MATSEQAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  for (PetscInt r = 0; r < N; r++) {
    PetscInt    i = r / n, j = r % n, cols[5], k = 0;
    PetscScalar v[5];
    cols[k] = r, v[k++] = 4.0 + 1e-3 * (PetscScalar)(r % 97);
    if (i > 0) cols[k] = r - n, v[k++] = -1.0 - 1e-4 * (PetscScalar)(r % 13);
    if (i < n - 1) cols[k] = r + n, v[k++] = -0.5;
    if (j > 0) cols[k] = r - 1, v[k++] = -1.0 + 1e-5 * (PetscScalar)(r % 7);
    if (j < n - 1) cols[k] = r + 1, v[k++] = -0.75;
    PetscCall(MatSetValues(*A, 1, &r, k, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* whether A's and B's CSR arrays (host) are equal entry for entry */
static PetscErrorCode SameArrays(Mat A, Mat B, PetscBool *same)
{
  const PetscInt    *ai, *aj, *bi, *bj;
  const PetscScalar *aa, *ba;
  PetscInt           m, mb;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &mb, &bi, &bj, &done));
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  PetscCall(MatSeqAIJGetArrayRead(B, &ba));
  *same = (PetscBool)(m == mb);
  for (PetscInt r = 0; *same && r <= m; r++) *same = (PetscBool)(ai[r] == bi[r]);
  for (PetscInt k = 0; *same && k < ai[m]; k++) *same = (PetscBool)(aj[k] == bj[k] && aa[k] == ba[k]);
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatSeqAIJRestoreArrayRead(B, &ba));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ai, &aj, &done));
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &mb, &bi, &bj, &done));
  PetscFunctionReturn(0);
}

/* y = A x and y = B x on a fresh random x agree */
static PetscErrorCode SameProduct(Mat A, Mat B, PetscRandom rnd, const char *what)
{
  Vec x, ya, yb, xb;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &ya));
  PetscCall(MatCreateVecs(B, &xb, &yb));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecCopy(x, xb));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(B, xb, yb));
  PetscCall(CheckClose(ya, yb, what, "laplacian 800"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xb));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscFunctionReturn(0);
}

/* A banded SeqAIJ: n rows of w nonzeros (columns r .. r+w-1, wrapped). */
static PetscErrorCode Band(PetscInt n, PetscInt w, Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, w, NULL, A));
  for (PetscInt r = 0; r < n; r++) {
    PetscInt    cols[32];
    PetscScalar v[32];
    for (PetscInt k = 0; k < w; k++) cols[k] = (r + k) % n, v[k] = 1.0 + 1e-3 * (PetscScalar)((r * 7 + k) % 101);
    PetscCall(MatSetValues(*A, 1, &r, w, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* The copy's rule on A (name): threaded iff expected (and more than one copy thread); the copy equals
 * A either way. */
static PetscErrorCode CheckRule(Mat A, const char *name, PetscBool expected, PetscInt threads)
{
  Mat                B;
  PetscLogEvent      ev;
  PetscEventPerfInfo before, after;
  PetscBool          same;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId("MatXtractCopy", &ev));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &before));
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &after));
  PetscCall(Expect((PetscBool)((after.count > before.count) == (expected && threads != 1)), expected ? "copied by the threads" : "copied by MatDuplicate", name));
  PetscCall(SameArrays(A, B, &same));
  PetscCall(Expect(same, "copied arrays equal the source's", name));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A, B;
  PetscRandom rnd;
  PetscLogEvent      copy_event;
  PetscEventPerfInfo perf;
  PetscInt    rbs, cbs, threads = 0, row = 7, col = 5000;
  PetscBool   same, threaded;
  VecType     vt;
  PetscScalar one = 1.0;
  PetscErrorCode refused;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCall(PetscLogDefaultBegin()); /* the MatXtractCopy event's count says which copy ran */
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_matxtract_copy_threads", &threads, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 20261128));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(Laplacian(800, &A)); /* 3,196,800 nonzeros: 38 MB of values and column indices (the threaded copy starts at 32 MiB) */

  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscLogEventGetId("MatXtractCopy", &copy_event));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, copy_event, &perf));
  threaded = (PetscBool)(perf.count == 1);
  PetscCall(Expect((PetscBool)(threaded == (threads != 1)), threads == 1 ? "MatDuplicate's copy with 1 copy thread" : "the threaded copy", "laplacian 800"));
  PetscCall(SameArrays(A, B, &same));
  PetscCall(Expect(same, "copied arrays equal the source's", "laplacian 800"));
  PetscCall(MatGetBlockSizes(B, &rbs, &cbs));
  PetscCall(Expect((PetscBool)(rbs == 2 && cbs == 2), "block sizes carried", "laplacian 800"));
  PetscCall(MatGetVecType(B, &vt));
  PetscCall(Expect((PetscBool)(vt != NULL), "a vector type", "laplacian 800"));
  PetscCall(SameProduct(A, B, rnd, "MatMult after the conversion"));

  /* the source changed: the copy keeps its values */
  PetscCall(MatScale(A, 2.0));
  PetscCall(MatScale(A, 0.5));
  PetscCall(MatSetValue(A, 0, 0, 100.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(SameArrays(A, B, &same));
  PetscCall(Expect((PetscBool)!same, "the copy does not share the source's values", "laplacian 800"));
  PetscCall(MatSetValue(A, 0, 0, 4.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(SameArrays(A, B, &same));
  PetscCall(Expect(same, "source restored equals the copy", "laplacian 800"));

  /* a new nonzero: refused as by a MatDuplicate of the preallocated source, then allowed in both */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  refused = MatSetValues(B, 1, &row, 1, &col, &one, INSERT_VALUES);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Expect((PetscBool)(refused == PETSC_ERR_ARG_OUTOFRANGE), "a new nonzero needing a malloc is an error", "laplacian 800"));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetValues(A, 1, &row, 1, &col, &one, INSERT_VALUES));
  PetscCall(MatSetValues(B, 1, &row, 1, &col, &one, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(SameArrays(A, B, &same));
  PetscCall(Expect(same, "a new nonzero inserted into the copy", "laplacian 800"));
  PetscCall(SameProduct(A, B, rnd, "MatMult after a new nonzero"));

  /* back to AIJ in place; then destroyed */
  PetscCall(MatConvert(B, MATSEQAIJ, MAT_INPLACE_MATRIX, &B));
  PetscCall(SameProduct(A, B, rnd, "MatMult after the conversion back"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));

  /* the rule between 4 and 32 MiB: long rows threaded, short rows and smaller matrices not */
  PetscCall(Band(40000, 16, &A)); /* 640,000 nonzeros, 7.7 MB (10.2 MB with 64-bit indices), 16 per row */
  PetscCall(CheckRule(A, "band 40000 x 16", PETSC_TRUE, threads));
  PetscCall(MatDestroy(&A));
  PetscCall(Laplacian(400, &A)); /* 798,400 nonzeros, 9.6 MB (12.8 MB), 5 per row */
  PetscCall(CheckRule(A, "laplacian 400", PETSC_FALSE, threads));
  PetscCall(MatDestroy(&A));
  PetscCall(Band(15000, 16, &A)); /* 240,000 nonzeros: 2.9 MB (3.8 MB with 64-bit indices) */
  PetscCall(CheckRule(A, "band 15000 x 16", PETSC_FALSE, threads));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " checks, %" PetscInt_FMT " failed\n", nchecks, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}

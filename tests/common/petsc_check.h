/* petsc_check.h - the comparison helpers of the PETSc-level tests (test_petsc_ops, test_petsc_gpu,
 * test_mpi_ops; each is one translation unit that includes this once): a pass/fail tally, a
 * relative-error check of two vectors over all ranks that treats non-finite entries exactly, and the
 * six product forms of a matrix against a reference on fresh random vectors. */
#ifndef MX_PETSC_CHECK_H
#define MX_PETSC_CHECK_H

#include <petscmat.h>

#define TOL 1e-12
static PetscInt nchecks = 0, nfail = 0;

/* Tally one check; a failure prints what failed, on which matrix, and the two numbers compared. */
static inline PetscErrorCode Record(PetscBool ok, const char *what, const char *name, PetscReal a, PetscReal b)
{
  PetscFunctionBegin;
  nchecks++;
  if (!ok) {
    nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s on %s (%g vs %g)\n", what, name, (double)a, (double)b));
  }
  PetscFunctionReturn(0);
}

/* Tally a yes/no check. */
static inline PetscErrorCode Expect(PetscBool ok, const char *what, const char *name)
{
  PetscFunctionBegin;
  nchecks++;
  if (!ok) {
    nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s on %s\n", what, name));
  }
  PetscFunctionReturn(0);
}

/* ||a - b|| <= TOL ||a|| over the finite entries of a on all ranks of a's communicator (exact match
 * when a is zero; a NaN in b fails); non-finite entries of a (matrices holding inf, like skew_fp64)
 * must be non-finite in b too, of the same kind. Device vectors are read through the host. */
static inline PetscErrorCode CheckClose(Vec a, Vec b, const char *what, const char *name)
{
  const PetscScalar *x, *y;
  PetscInt           n;
  PetscReal          loc[3] = {0, 0, 0}, sum[3]; /* |a|^2, |a-b|^2, entries of another kind */

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < n; i++) {
    if (PetscIsInfOrNanReal(x[i])) {
      if (!(PetscIsNanReal(x[i]) ? PetscIsNanReal(y[i]) : x[i] == y[i])) loc[2] += 1;
      continue;
    }
    loc[0] += x[i] * x[i];
    loc[1] += (x[i] - y[i]) * (x[i] - y[i]);
  }
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCallMPI(MPI_Allreduce(loc, sum, 3, MPIU_REAL, MPI_SUM, PetscObjectComm((PetscObject)a)));
  const PetscReal na = PetscSqrtReal(sum[0]), nd = PetscSqrtReal(sum[1]);
  if (sum[2] > 0) PetscCall(Expect(PETSC_FALSE, "non-finite entries differ", name));
  PetscCall(Record((PetscBool)(nd <= TOL * na || (na == 0 && nd == 0)), what, name, na, nd));
  PetscFunctionReturn(0);
}

/* Two matrices of one type and layout (dense: R - C by MatAXPY): ||R - C||_F <= TOL ||R||_F */
static inline PetscErrorCode CheckDenseClose(Mat R, Mat C, const char *what, const char *name)
{
  Mat       D;
  PetscReal nr, nd;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &D));
  PetscCall(MatAXPY(D, -1.0, C, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(R, NORM_FROBENIUS, &nr));
  PetscCall(MatNorm(D, NORM_FROBENIUS, &nd));
  PetscCall(Record((PetscBool)(nd <= TOL * nr || (nr == 0 && nd == 0)), what, name, nd, nr));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

/* One product and its Add forms of B against R (mult = MatMult or MatMultTranspose, with multadd to
 * match): y = op(B) x, y = op(B) x + z and y = op(B) x + y (y == z), B's output poisoned with NaN
 * first where it must write every entry. The reference for the Add forms is op(R) x + z (VecAXPY),
 * not R's own Add form: PETSc 3.22.5's aijcusparse MatMultTransposeAdd(A, x, z, y) with y != z
 * returns y_old + A^T x + z (aijcusparse.cu, default transpose path: cusparseSpMV with beta = 1 into
 * the output's old values, then + z; seen on an H200 2026-11-21, confirmed in the 3.22.5 source). */
static inline PetscErrorCode CheckProductForms(Mat R, Mat B, PetscErrorCode (*mult)(Mat, Vec, Vec),
                                               PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec), Vec x, Vec z, Vec yr,
                                               Vec yb, const char *what, const char *name)
{
  char label[128];

  PetscFunctionBegin;
  PetscCall(mult(R, x, yr));
  PetscCall(VecSet(yb, NAN));
  PetscCall(mult(B, x, yb));
  PetscCall(CheckClose(yr, yb, what, name));
  PetscCall(VecAXPY(yr, 1.0, z));
  PetscCall(PetscSNPrintf(label, sizeof label, "%s + z", what));
  PetscCall(VecSet(yb, NAN));
  PetscCall(multadd(B, x, z, yb));
  PetscCall(CheckClose(yr, yb, label, name));
  PetscCall(PetscSNPrintf(label, sizeof label, "%s + y (y == z)", what));
  PetscCall(VecCopy(z, yb));
  PetscCall(multadd(B, x, yb, yb));
  PetscCall(CheckClose(yr, yb, label, name));
  PetscFunctionReturn(0);
}

/* B against the reference R: MatMult and MatMultTranspose, each with its Add forms, on fresh random
 * vectors from `seed`. */
static inline PetscErrorCode CheckProducts(Mat R, Mat B, const char *name, unsigned long seed)
{
  Vec         x, z, yr, yb, xt, zt, ytr, ytb;
  PetscRandom rnd;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)R), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, seed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(MatCreateVecs(B, &x, &yb));
  PetscCall(VecDuplicate(yb, &yr));
  PetscCall(VecDuplicate(yb, &z));
  PetscCall(MatCreateVecs(B, &ytb, &xt));
  PetscCall(VecDuplicate(ytb, &ytr));
  PetscCall(VecDuplicate(ytb, &zt));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(VecSetRandom(xt, rnd));
  PetscCall(VecSetRandom(zt, rnd));
  PetscCall(CheckProductForms(R, B, MatMult, MatMultAdd, x, z, yr, yb, "MatMult", name));
  PetscCall(CheckProductForms(R, B, MatMultTranspose, MatMultTransposeAdd, xt, zt, ytr, ytb, "MatMultTranspose", name));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&yb));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&ytr));
  PetscCall(VecDestroy(&ytb));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

#endif

static char help[] = "Many right-hand sides at once: A X = B for k columns of an SPD matrix A by the block conjugate\n\
gradient method (O'Leary 1980), against k separate KSPCG solves. Every block iteration does ONE sparse\n\
times dense product Q = A P (MatMatMult; a matxtract A runs its SpMM) plus k x k dense algebra; the k\n\
single solves do k MatMults per iteration instead. B = A X_true for a random X_true (rand48, fixed seed:\n\
the same B on any number of ranks and for every Mat/Vec type), so the error is known.\n\n\
Input (at most one of -f and -gen; default -gen lap2d:100):\n\
  -f <file>                 SPD matrix: Matrix Market (.mtx) or PETSc binary (any other name)\n\
  -gen <spec>               generated matrix, e.g. lap2d:100, lap3d:20 (-gen help lists the generators)\n\
  -gen_seed <0>             generator seed (0 = the family's default)\n\
  -mat_type <type>          aij, aijcusparse, matxtract, ...; -vec_type cuda puts the blocks on the GPU\n\
                            (MATDENSECUDA), as does a Mat type whose vectors are cuda\n\
Method:\n\
  -block_cg_k <8>           number of right-hand sides k\n\
  -block_cg_rtol <1e-8>     stop when every column has ||r_j||_2 <= rtol ||b_j||_2 (the recursive residual);\n\
                            the single solves use the same test (KSPCG, unpreconditioned norm)\n\
  -block_cg_max_it <1000>   iteration limit (per single solve too)\n\
  -pc_type <none|jacobi>    preconditioner of both methods (default none)\n\
  -block_cg_monitor         print the largest relative residual of every block iteration\n\
  -block_cg_compare         also run the k single KSPCG solves (options prefix single_, e.g.\n\
                            -single_ksp_monitor) and compare the solutions\n\
  -block_cg_compare_tol <t> with -block_cg_compare: error if a column differs by more than t (relative, 2-norm)\n\
Output: 'matrix type: ', 'vector type: ', 'block CG: k = K, N iterations, max relative residual R, T s' (R: the\n\
true residual max_j ||b_j - A x_j|| / ||b_j|| from a fresh MatMatMult), 'block CG converged: yes|no', the\n\
error against X_true; with -block_cg_compare 'single CG: K solves, N iterations, T s' (N: the sum over the\n\
solves), 'compare: max over columns ||x_block - x_single|| / ||x_single|| = E' and\n\
'speedup (single / block): Sx'. Timing lines start with 'time:'.\n\n";

/* The method (real symmetric positive definite A; M the preconditioner, identity or diag(A)):
 *
 *   X = 0, R = B, Z = M^-1 R, P = Z
 *   repeat:  Q     = A P                      (the one SpMM of the iteration)
 *            alpha = (P'Q)^-1 (Z'R)           (k x k, Cholesky on the host)
 *            X    += P alpha,  R -= Q alpha
 *            Z     = M^-1 R
 *            stop when every column's ||r_j|| <= rtol ||b_j|| (from diag(R'R))
 *            beta  = (Z'R)_old^-1 (Z'R)_new
 *            P     = Z + P beta
 *
 * Every column of X lies in the block Krylov space of all k right-hand sides, so (in exact arithmetic) the
 * block method needs no more iterations than the slowest single CG, in practice clearly fewer. It breaks down when the k search directions become
 * linearly dependent (P'AP or Z'R singular); that is checked and reported. All columns iterate until the
 * last one has converged (no deflation), which is fine for modest k.
 *
 * Where the data lives: the n x k blocks X, R, Z, P, Q are dense matrices of the vectors' kind (MATDENSE,
 * or MATDENSECUDA with cuda vectors) in A's row layout. The k x k products P'Q, Z'R and R'R are
 * MatTransposeMatMult of the blocks' local row blocks (MatDenseGetLocalMatrix), summed over the ranks on
 * the host, where the k x k Cholesky solves run; the updates are MatMatMult of a local row block with a
 * k x k coefficient matrix of the same local type, then MatAXPY: on a GPU the n x k data never leaves the
 * device, only k x k numbers travel. (MATMPIDENSE has no A B product without Elemental, hence the local
 * blocks.) */

#include <petscksp.h>
#include <petsctime.h>
#include <matxtract.h>
#include "example_util.h"

/* Seed of the random X_true (rand48; fixed so that runs and types compare). */
#define BCG_XTRUE_SEED 20260043UL

/* A scaled Cholesky pivot below this (cond(D^-1/2 G D^-1/2) above its inverse) is a breakdown. */
#define BCG_PIVOT_MIN (1e4 * PETSC_MACHINE_EPSILON)

typedef enum {
  BCG_PC_NONE,
  BCG_PC_JACOBI
} BCGPCType;
static const char *const BCGPCTypes[] = {"none", "jacobi", "BCGPCType", "BCG_PC_", NULL};

typedef struct {
  char      file[PETSC_MAX_PATH_LEN], spec[256];
  PetscBool hasfile, hasgen;
  PetscInt  genseed;
  PetscInt  k, max_it;
  PetscReal rtol, compare_tol;
  PetscBool compare, has_compare_tol, monitor;
  BCGPCType pc;
} Options;

/* The state of a block CG solve. Invariant: a block and its local row block are the same data (the same
 * object on one rank): the updates write the local blocks in place, and the block's other users (the
 * product A P, the column vectors) read that data, none caches it. */
typedef struct {
  MPI_Comm     comm;
  PetscInt     k;
  Mat          A;
  Vec          dinv;                /* Jacobi: 1 / diag(A); NULL: no preconditioner */
  Mat          X, R, Z, P, Q;       /* n x k; Z is R itself without a preconditioner */
  Mat          Xl, Rl, Zl, Pl, Ql;  /* their local row blocks */
  Mat          coef;                /* k x k in the local blocks' type: alpha, then beta (set on the host) */
  Mat          Pcoef, Qcoef;        /* Pl coef, Ql coef */
  Mat          PtQl, ZtRl, RtRl;    /* local k x k products (ZtRl unused without a preconditioner) */
  PetscScalar *ptq, *ztr, *ztr_old; /* host k x k, column-major, summed over the ranks */
  PetscScalar *rtr, *rhs, *scale;   /* rtr: R'R; rhs, scale: work of the small solves */
  PetscReal   *bnorm;               /* ||b_j||_2 */
} BlockCG;

/* ---------------------------------------------------------------------------------------------- */
/* options and input                                                                               */

static PetscErrorCode GetOptions(MPI_Comm comm, Options *o)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(o, sizeof(*o)));
  PetscCall(PetscStrncpy(o->spec, "lap2d:100", sizeof(o->spec)));
  o->k      = 8;
  o->rtol   = 1e-8;
  o->max_it = 1000;
  o->pc     = BCG_PC_NONE;
  PetscOptionsBegin(comm, NULL, "block_cg input", NULL);
  PetscCall(PetscOptionsString("-f", "SPD matrix file (.mtx or PETSc binary)", NULL, o->file, o->file, sizeof(o->file), &o->hasfile));
  PetscCall(PetscOptionsString("-gen", "Generated matrix (spec; 'help' lists them)", NULL, o->spec, o->spec, sizeof(o->spec), &o->hasgen));
  PetscCall(PetscOptionsInt("-gen_seed", "Generator seed (0 = the family's default)", NULL, o->genseed, &o->genseed, NULL));
  PetscCall(PetscOptionsEnum("-pc_type", "Preconditioner of both methods: none or jacobi", NULL, BCGPCTypes, (PetscEnum)o->pc, (PetscEnum *)&o->pc, NULL));
  PetscOptionsEnd();
  PetscOptionsBegin(comm, "block_cg_", "Block CG options", NULL);
  PetscCall(PetscOptionsInt("-k", "Number of right-hand sides", NULL, o->k, &o->k, NULL));
  PetscCall(PetscOptionsReal("-rtol", "Relative residual tolerance of every column", NULL, o->rtol, &o->rtol, NULL));
  PetscCall(PetscOptionsInt("-max_it", "Iteration limit", NULL, o->max_it, &o->max_it, NULL));
  PetscCall(PetscOptionsBool("-monitor", "Print the largest relative residual of every iteration", NULL, o->monitor, &o->monitor, NULL));
  PetscCall(PetscOptionsBool("-compare", "Also run k single KSPCG solves and compare", NULL, o->compare, &o->compare, NULL));
  PetscCall(PetscOptionsReal("-compare_tol", "Largest relative difference accepted by -block_cg_compare", NULL, o->compare_tol, &o->compare_tol, &o->has_compare_tol));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckOptions(MPI_Comm comm, const Options *o)
{
  PetscFunctionBeginUser;
  PetscCheck(o->k >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-block_cg_k %" PetscInt_FMT ": need at least 1 right-hand side", o->k);
  PetscCheck(o->rtol > 0.0 && o->rtol < 1.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-block_cg_rtol %g: need 0 < rtol < 1", (double)o->rtol);
  PetscCheck(o->max_it >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-block_cg_max_it %" PetscInt_FMT ": need at least 1", o->max_it);
  PetscCheck(!o->has_compare_tol || o->compare, comm, PETSC_ERR_ARG_INCOMP, "-block_cg_compare_tol needs -block_cg_compare");
  PetscCheck(!o->has_compare_tol || o->compare_tol >= 0.0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-block_cg_compare_tol %g: need tol >= 0", (double)o->compare_tol);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A from -f or -gen, in the type -mat_type names (MatXtractLoad/Generate apply MatSetFromOptions); square,
 * at least k rows. */
static PetscErrorCode LoadMatrix(MPI_Comm comm, const Options *o, Mat *A)
{
  PetscInt M, N;

  PetscFunctionBeginUser;
  if (o->hasfile) PetscCall(MatXtractLoad(comm, o->file, NULL, A));
  else PetscCall(MatXtractGenerateSeeded(comm, o->spec, o->genseed, NULL, A));
  PetscCall(MatGetSize(*A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "A must be square (and SPD) for CG; it is %" PetscInt_FMT " x %" PetscInt_FMT, M, N);
  PetscCheck(o->k <= N, comm, PETSC_ERR_ARG_OUTOFRANGE, "-block_cg_k %" PetscInt_FMT ": more right-hand sides than rows (%" PetscInt_FMT ")", o->k, N);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */
/* dense blocks                                                                                     */

/* A dense N x k matrix in A's row layout (CreateDenseBlock), zero and assembled. */
static PetscErrorCode CreateBlock(Mat A, PetscInt k, VecType vtype, Mat *X)
{
  PetscFunctionBeginUser;
  PetscCall(CreateDenseBlock(A, k, vtype, X));
  PetscCall(MatZeroEntries(*X));
  PetscCall(MatAssemblyBegin(*X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*X, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Column c of X gets draws c N .. c N + N - 1 of rand48 (seed): independent of the number of ranks. */
static PetscErrorCode FillRandom(Mat X, unsigned long seed)
{
  PetscRandom  rnd;
  PetscInt     lo, hi, N, k, lda;
  PetscScalar *a, val;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(X, &N, &k));
  PetscCall(MatGetOwnershipRange(X, &lo, &hi));
  PetscCall(MatDenseGetLDA(X, &lda));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetType(rnd, PETSCRANDER48));
  PetscCall(PetscRandomSetSeed(rnd, seed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(MatDenseGetArrayWrite(X, &a));
  for (PetscInt c = 0; c < k; c++) {
    for (PetscInt i = 0; i < N; i++) {
      PetscCall(PetscRandomGetValue(rnd, &val));
      if (i >= lo && i < hi) a[c * lda + (i - lo)] = val;
    }
  }
  PetscCall(MatDenseRestoreArrayWrite(X, &a));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Waits for the device (a no-op on the host): a norm returns its value to the host after the work before it. */
static PetscErrorCode WaitForDevice(Mat X)
{
  Vec       x;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(MatDenseGetColumnVecRead(X, 0, &x));
  PetscCall(VecNorm(x, NORM_2, &nrm));
  PetscCall(MatDenseRestoreColumnVecRead(X, 0, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max_j ||X_j - Y_j||_2 / ||Y_j||_2 (Y_j = 0: the absolute difference). */
static PetscErrorCode MaxColumnRelativeDifference(Mat X, Mat Y, PetscReal *maxrel)
{
  Mat        D;
  PetscInt   k;
  PetscReal *dn, *yn;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(X, NULL, &k));
  PetscCall(PetscMalloc2(k, &dn, k, &yn));
  PetscCall(MatDuplicate(X, MAT_COPY_VALUES, &D));
  PetscCall(MatAXPY(D, -1.0, Y, SAME_NONZERO_PATTERN));
  PetscCall(MatGetColumnNorms(D, NORM_2, dn));
  PetscCall(MatGetColumnNorms(Y, NORM_2, yn));
  *maxrel = 0.0;
  for (PetscInt j = 0; j < k; j++) *maxrel = PetscMax(*maxrel, yn[j] > 0.0 ? dn[j] / yn[j] : dn[j]);
  PetscCall(MatDestroy(&D));
  PetscCall(PetscFree2(dn, yn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The true residual: max_j ||b_j - A x_j||_2 / ||b_j||_2, with a fresh MatMatMult. */
static PetscErrorCode MaxRelativeResidual(Mat A, Mat X, Mat B, PetscReal *maxrel)
{
  Mat AX;

  PetscFunctionBeginUser;
  PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &AX));
  PetscCall(MaxColumnRelativeDifference(AX, B, maxrel));
  PetscCall(MatDestroy(&AX));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */
/* the k x k algebra on the host                                                                    */

/* G = U'V summed over the ranks (host, k x k column-major): the local product Ul'Vl, then MPI_Allreduce.
 * *UtVl holds the local product between calls (created on the first). */
static PetscErrorCode GramSum(MPI_Comm comm, Mat Ul, Mat Vl, Mat *UtVl, PetscInt k, PetscScalar *G)
{
  const PetscScalar *a;
  PetscInt           lda;

  PetscFunctionBeginUser;
  PetscCall(MatTransposeMatMult(Ul, Vl, *UtVl ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, PETSC_DEFAULT, UtVl));
  PetscCall(MatDenseGetLDA(*UtVl, &lda));
  PetscCall(MatDenseGetArrayRead(*UtVl, &a)); /* from the device when it lives there: k x k numbers */
  for (PetscInt j = 0; j < k; j++)
    for (PetscInt i = 0; i < k; i++) G[j * k + i] = a[j * lda + i];
  PetscCall(MatDenseRestoreArrayRead(*UtVl, &a));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, G, (PetscMPIInt)(k * k), MPIU_SCALAR, MPIU_SUM, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y = M^-1 Y for a k x k SPD M (column-major, its lower triangle read; M is overwritten by the Cholesky
 * factor of S M S, S = diag(M)^-1/2, Y by the solution). The unit-diagonal scaling keeps columns of
 * different scales from counting as ill-conditioning; a pivot of S M S below BCG_PIVOT_MIN means
 * cond(S M S) > 1 / BCG_PIVOT_MIN. *ok = PETSC_FALSE when M is not numerically SPD (a nonpositive diagonal
 * or such a pivot; Y is then garbage). k is small: a plain Cholesky here, no LAPACK to link. s: work of k. */
static PetscErrorCode SolveSmallSPD(PetscInt k, PetscScalar *M, PetscScalar *Y, PetscScalar *s, PetscBool *ok)
{
  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  for (PetscInt i = 0; i < k; i++) {
    PetscReal d = PetscRealPart(M[i * k + i]);
    if (!(d > 0.0) || PetscIsInfOrNanReal(d)) PetscFunctionReturn(PETSC_SUCCESS);
    s[i] = 1.0 / PetscSqrtReal(d);
  }
  for (PetscInt j = 0; j < k; j++) {
    for (PetscInt i = j; i < k; i++) M[j * k + i] *= s[i] * s[j];
    for (PetscInt i = 0; i < k; i++) Y[j * k + i] *= s[i];
  }
  for (PetscInt j = 0; j < k; j++) { /* M = L L', L in the lower triangle */
    PetscScalar d = M[j * k + j];
    for (PetscInt p = 0; p < j; p++) d -= M[p * k + j] * M[p * k + j];
    if (!(PetscRealPart(d) >= BCG_PIVOT_MIN)) PetscFunctionReturn(PETSC_SUCCESS);
    M[j * k + j] = PetscSqrtScalar(d);
    for (PetscInt i = j + 1; i < k; i++) {
      PetscScalar v = M[j * k + i];
      for (PetscInt p = 0; p < j; p++) v -= M[p * k + i] * M[p * k + j];
      M[j * k + i] = v / M[j * k + j];
    }
  }
  for (PetscInt c = 0; c < k; c++) { /* L L' y = column c of Y */
    PetscScalar *y = Y + c * k;
    for (PetscInt i = 0; i < k; i++) {
      for (PetscInt p = 0; p < i; p++) y[i] -= M[p * k + i] * y[p];
      y[i] /= M[i * k + i];
    }
    for (PetscInt i = k - 1; i >= 0; i--) {
      for (PetscInt p = i + 1; p < k; p++) y[i] -= M[i * k + p] * y[p];
      y[i] /= M[i * k + i];
    }
  }
  for (PetscInt j = 0; j < k; j++)
    for (PetscInt i = 0; i < k; i++) Y[j * k + i] *= s[i];
  *ok = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cg->coef = C (host k x k column-major; uploaded by the next product when coef lives on the device). */
static PetscErrorCode SetCoefficients(BlockCG *cg, const PetscScalar *C)
{
  PetscScalar *a;
  PetscInt     lda;

  PetscFunctionBeginUser;
  PetscCall(MatDenseGetLDA(cg->coef, &lda));
  PetscCall(MatDenseGetArrayWrite(cg->coef, &a));
  for (PetscInt j = 0; j < cg->k; j++)
    for (PetscInt i = 0; i < cg->k; i++) a[j * lda + i] = C[j * cg->k + i];
  PetscCall(MatDenseRestoreArrayWrite(cg->coef, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */
/* block CG                                                                                         */

/* The blocks, their local row blocks and every product object (created here, so the iterations only
 * reuse): Q = A P, the k x k products, Pl coef and Ql coef. */
static PetscErrorCode BlockCGCreate(Mat A, Mat B, BCGPCType pc, BlockCG *cg)
{
  PetscInt k;
  MatType  ltype;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(cg, sizeof(*cg)));
  PetscCall(MatGetSize(B, NULL, &k));
  cg->comm = PetscObjectComm((PetscObject)A);
  cg->k    = k;
  cg->A    = A;
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &cg->X));
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &cg->R));
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &cg->P));
  if (pc == BCG_PC_JACOBI) {
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &cg->Z));
    PetscCall(MatCreateVecs(A, &cg->dinv, NULL));
    PetscCall(MatGetDiagonal(A, cg->dinv));
    PetscCall(VecReciprocal(cg->dinv));
  } else {
    PetscCall(PetscObjectReference((PetscObject)cg->R));
    cg->Z = cg->R;
  }
  PetscCall(MatDenseGetLocalMatrix(cg->X, &cg->Xl));
  PetscCall(MatDenseGetLocalMatrix(cg->R, &cg->Rl));
  PetscCall(MatDenseGetLocalMatrix(cg->Z, &cg->Zl));
  PetscCall(MatDenseGetLocalMatrix(cg->P, &cg->Pl));
  PetscCall(MatMatMult(A, cg->P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &cg->Q)); /* symbolic now, reused later */
  PetscCall(MatDenseGetLocalMatrix(cg->Q, &cg->Ql));

  PetscCall(MatGetType(cg->Pl, &ltype));
  PetscCall(MatCreate(PETSC_COMM_SELF, &cg->coef));
  PetscCall(MatSetSizes(cg->coef, k, k, k, k));
  PetscCall(MatSetType(cg->coef, ltype));
  PetscCall(MatSetUp(cg->coef));
  PetscCall(MatZeroEntries(cg->coef));
  PetscCall(MatAssemblyBegin(cg->coef, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(cg->coef, MAT_FINAL_ASSEMBLY));
  PetscCall(MatMatMult(cg->Pl, cg->coef, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &cg->Pcoef));
  PetscCall(MatMatMult(cg->Ql, cg->coef, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &cg->Qcoef));

  PetscCall(PetscMalloc6(k * k, &cg->ptq, k * k, &cg->ztr, k * k, &cg->ztr_old, k * k, &cg->rtr, k * k, &cg->rhs, k, &cg->scale));
  PetscCall(PetscMalloc1(k, &cg->bnorm));
  PetscCall(MatGetColumnNorms(B, NORM_2, cg->bnorm));
  for (PetscInt j = 0; j < k; j++) PetscCheck(cg->bnorm[j] > 0.0, cg->comm, PETSC_ERR_ARG_WRONG, "Right-hand side %" PetscInt_FMT " is zero", j);
  PetscCall(GramSum(cg->comm, cg->Pl, cg->Ql, &cg->PtQl, k, cg->ptq)); /* create the k x k products */
  PetscCall(GramSum(cg->comm, cg->Rl, cg->Rl, &cg->RtRl, k, cg->rtr));
  if (cg->dinv) PetscCall(GramSum(cg->comm, cg->Zl, cg->Rl, &cg->ZtRl, k, cg->ztr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BlockCGDestroy(BlockCG *cg)
{
  PetscFunctionBeginUser;
  PetscCall(MatDestroy(&cg->X));
  PetscCall(MatDestroy(&cg->R));
  PetscCall(MatDestroy(&cg->Z));
  PetscCall(MatDestroy(&cg->P));
  PetscCall(MatDestroy(&cg->Q));
  PetscCall(MatDestroy(&cg->coef));
  PetscCall(MatDestroy(&cg->Pcoef));
  PetscCall(MatDestroy(&cg->Qcoef));
  PetscCall(MatDestroy(&cg->PtQl));
  PetscCall(MatDestroy(&cg->ZtRl));
  PetscCall(MatDestroy(&cg->RtRl));
  PetscCall(VecDestroy(&cg->dinv));
  PetscCall(PetscFree6(cg->ptq, cg->ztr, cg->ztr_old, cg->rtr, cg->rhs, cg->scale));
  PetscCall(PetscFree(cg->bnorm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Z = M^-1 R (Jacobi: column by column on the columns' own memory); nothing without a preconditioner (Z is R). */
static PetscErrorCode ApplyPreconditioner(BlockCG *cg)
{
  PetscFunctionBeginUser;
  if (!cg->dinv) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt j = 0; j < cg->k; j++) {
    Vec r, z;
    PetscCall(MatDenseGetColumnVecRead(cg->R, j, &r));
    PetscCall(MatDenseGetColumnVecWrite(cg->Z, j, &z));
    PetscCall(VecPointwiseMult(z, cg->dinv, r));
    PetscCall(MatDenseRestoreColumnVecWrite(cg->Z, j, &z));
    PetscCall(MatDenseRestoreColumnVecRead(cg->R, j, &r));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cg->rtr = R'R and cg->ztr = Z'R (the same without a preconditioner). */
static PetscErrorCode ResidualProducts(BlockCG *cg)
{
  PetscFunctionBeginUser;
  PetscCall(GramSum(cg->comm, cg->Rl, cg->Rl, &cg->RtRl, cg->k, cg->rtr));
  if (cg->dinv) PetscCall(GramSum(cg->comm, cg->Zl, cg->Rl, &cg->ZtRl, cg->k, cg->ztr));
  else PetscCall(PetscArraycpy(cg->ztr, cg->rtr, cg->k * cg->k));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max_j ||r_j|| / ||b_j|| of the recursive residual, from diag(R'R). */
static PetscReal MaxRecursiveResidual(const BlockCG *cg)
{
  PetscReal m = 0.0;

  for (PetscInt j = 0; j < cg->k; j++) m = PetscMax(m, PetscSqrtReal(PetscMax(PetscRealPart(cg->rtr[j * cg->k + j]), 0.0)) / cg->bnorm[j]);
  return m;
}

/* Yl += s Ml C, C = cg->coef (*MC: the product object of Ml, reused). */
static PetscErrorCode AddTimesCoefficients(BlockCG *cg, Mat Yl, PetscScalar s, Mat Ml, Mat *MC)
{
  PetscFunctionBeginUser;
  PetscCall(MatMatMult(Ml, cg->coef, MAT_REUSE_MATRIX, PETSC_DEFAULT, MC));
  PetscCall(MatAXPY(Yl, s, *MC, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* X += P alpha, R -= Q alpha with alpha = (P'Q)^-1 (Z'R); error on a singular P'Q (P'AP). */
static PetscErrorCode StepSolution(BlockCG *cg, PetscInt it)
{
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(GramSum(cg->comm, cg->Pl, cg->Ql, &cg->PtQl, cg->k, cg->ptq));
  PetscCall(PetscArraycpy(cg->rhs, cg->ztr, cg->k * cg->k));
  PetscCall(SolveSmallSPD(cg->k, cg->ptq, cg->rhs, cg->scale, &ok));
  PetscCheck(ok, cg->comm, PETSC_ERR_NOT_CONVERGED,
             "Block CG breakdown at iteration %" PetscInt_FMT ": P'AP is singular or not positive definite (the %" PetscInt_FMT " search directions became linearly dependent, or A is not SPD); try fewer right-hand sides (-block_cg_k) or a larger -block_cg_rtol", it, cg->k);
  PetscCall(SetCoefficients(cg, cg->rhs));
  PetscCall(AddTimesCoefficients(cg, cg->Xl, 1.0, cg->Pl, &cg->Pcoef));
  PetscCall(AddTimesCoefficients(cg, cg->Rl, -1.0, cg->Ql, &cg->Qcoef));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P = Z + P beta with beta = (Z'R)_old^-1 (Z'R)_new; error on a singular (Z'R)_old. */
static PetscErrorCode StepDirections(BlockCG *cg, PetscInt it)
{
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(PetscArraycpy(cg->rhs, cg->ztr, cg->k * cg->k));
  PetscCall(SolveSmallSPD(cg->k, cg->ztr_old, cg->rhs, cg->scale, &ok));
  PetscCheck(ok, cg->comm, PETSC_ERR_NOT_CONVERGED,
             "Block CG breakdown at iteration %" PetscInt_FMT ": Z'R is singular (the %" PetscInt_FMT " residuals became linearly dependent); try fewer right-hand sides (-block_cg_k) or a larger -block_cg_rtol", it, cg->k);
  PetscCall(SetCoefficients(cg, cg->rhs));
  PetscCall(MatMatMult(cg->Pl, cg->coef, MAT_REUSE_MATRIX, PETSC_DEFAULT, &cg->Pcoef));
  PetscCall(MatCopy(cg->Zl, cg->Pl, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(cg->Pl, 1.0, cg->Pcoef, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The block CG iteration from X = 0 until every column's recursive residual is <= rtol ||b_j|| or max_it
 * iterations (= products A P). */
static PetscErrorCode BlockCGSolve(BlockCG *cg, Mat B, PetscReal rtol, PetscInt max_it, PetscBool monitor, PetscInt *its, PetscBool *converged)
{
  PetscReal res;

  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(cg->X));
  PetscCall(MatCopy(B, cg->R, SAME_NONZERO_PATTERN));
  PetscCall(ApplyPreconditioner(cg));
  PetscCall(MatCopy(cg->Z, cg->P, SAME_NONZERO_PATTERN));
  PetscCall(ResidualProducts(cg));
  res        = MaxRecursiveResidual(cg);
  *its       = 0;
  *converged = (PetscBool)(res <= rtol);
  if (monitor) PetscCall(PetscPrintf(cg->comm, "block CG %4" PetscInt_FMT ": max relative residual %.6e\n", *its, (double)res));
  while (!*converged && *its < max_it) {
    PetscCall(MatMatMult(cg->A, cg->P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &cg->Q)); /* the SpMM */
    (*its)++;
    PetscCall(StepSolution(cg, *its));
    PetscCall(ApplyPreconditioner(cg));
    PetscCall(PetscArraycpy(cg->ztr_old, cg->ztr, cg->k * cg->k));
    PetscCall(ResidualProducts(cg));
    res        = MaxRecursiveResidual(cg);
    *converged = (PetscBool)(res <= rtol);
    if (monitor) PetscCall(PetscPrintf(cg->comm, "block CG %4" PetscInt_FMT ": max relative residual %.6e\n", *its, (double)res));
    if (!*converged && *its < max_it) PetscCall(StepDirections(cg, *its));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */
/* the k single solves                                                                              */

typedef struct {
  PetscInt       its_total, its_min, its_max, failed;
  PetscLogDouble seconds;
} SingleStats;

/* One MatMult before the clock: what a type builds or uploads lazily for MatMult (aijcusparse: the copy to
 * the GPU) is setup, as the first product A P of the block method is (BlockCGCreate). */
static PetscErrorCode WarmUpMatMult(Mat A)
{
  Vec       x, y;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecNorm(y, NORM_2, &nrm)); /* waits for the device */
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Column j of Xs = A^-1 b_j by KSPCG from zero, the same preconditioner and stopping test as the block
 * method (unpreconditioned residual norm, rtol, max_it); options prefix single_. Times the k KSPSolves. */
static PetscErrorCode SingleCGSolves(Mat A, BCGPCType pc, Mat B, PetscReal rtol, PetscInt max_it, Mat Xs, SingleStats *st)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);
  KSP                ksp;
  PC                 kpc;
  PetscInt           k, its;
  KSPConvergedReason reason;
  PetscLogDouble     t0, t1;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "single_"));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &kpc));
  PetscCall(PCSetType(kpc, pc == BCG_PC_JACOBI ? PCJACOBI : PCNONE));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, max_it));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(WarmUpMatMult(A));
  st->its_total = 0;
  st->its_min   = PETSC_MAX_INT;
  st->its_max   = 0;
  st->failed    = 0;
  PetscCall(WaitForDevice(B));
  PetscCall(Now(comm, &t0));
  for (PetscInt j = 0; j < k; j++) {
    Vec b, x;
    PetscCall(MatDenseGetColumnVecRead(B, j, &b));
    PetscCall(MatDenseGetColumnVecWrite(Xs, j, &x));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(MatDenseRestoreColumnVecWrite(Xs, j, &x));
    PetscCall(MatDenseRestoreColumnVecRead(B, j, &b));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    st->its_total += its;
    st->its_min = PetscMin(st->its_min, its);
    st->its_max = PetscMax(st->its_max, its);
    if (reason <= 0) st->failed++;
  }
  PetscCall(WaitForDevice(Xs));
  PetscCall(Now(comm, &t1));
  st->seconds = t1 - t0;
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */

static PetscErrorCode PrintProblem(Mat A, const Options *o, VecType vtype)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  MatInfo     info;
  MatType     mtype;
  PetscInt    N;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetType(A, &mtype));
  if (o->hasfile) PetscCall(PetscPrintf(comm, "block_cg: %s\n", o->file));
  else PetscCall(PetscPrintf(comm, "block_cg: -gen %s\n", o->spec));
  PetscCall(PetscPrintf(comm, "rows: %" PetscInt_FMT ", nonzeros: %.0f\n", N, (double)info.nz_used));
  PetscCall(PetscPrintf(comm, "matrix type: %s\n", mtype));
  PetscCall(PetscPrintf(comm, "vector type: %s\n", vtype));
  PetscCall(PetscPrintf(comm, "processes: %d\n", (int)size));
  PetscCall(PetscPrintf(comm, "right-hand sides: k = %" PetscInt_FMT ", B = A X_true, X_true uniform in [0, 1)\n", o->k));
  PetscCall(PetscPrintf(comm, "preconditioner: %s, rtol %g, max_it %" PetscInt_FMT "\n", BCGPCTypes[o->pc], (double)o->rtol, o->max_it));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm       comm;
  Options        o;
  PetscBool      genhelp = PETSC_FALSE;
  Mat            A, Xtrue, B, Xs = NULL;
  Vec            v;
  VecType        vtype;
  BlockCG        cg;
  SingleStats    single = {0, 0, 0, 0, 0.0};
  PetscInt       its    = 0;
  PetscBool      converged = PETSC_FALSE;
  PetscReal      res, err, diff = 0.0;
  PetscLogDouble t0, t1, t2, t3;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCall(MatXtractRegister());
  PetscCall(GetOptions(comm, &o));
  PetscCall(CheckMatrixSource(comm, o.hasfile, o.hasgen, o.spec, &genhelp));
  if (genhelp) {
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(CheckOptions(comm, &o));
#if defined(PETSC_USE_COMPLEX)
  SETERRQ(comm, PETSC_ERR_SUP, "block_cg needs real scalars (its k x k products are transposes, not adjoints)");
#endif

  /* ---- setup: A, its vector type, X_true and B = A X_true ---- */
  PetscCall(Now(comm, &t0));
  PetscCall(LoadMatrix(comm, &o, &A));
  PetscCall(SetVecTypeFromOptions(A));
  PetscCall(MatCreateVecs(A, &v, NULL));
  PetscCall(VecGetType(v, &vtype));
  PetscCall(CreateBlock(A, o.k, vtype, &Xtrue));
  PetscCall(FillRandom(Xtrue, BCG_XTRUE_SEED));
  PetscCall(MatMatMult(A, Xtrue, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &B));
  PetscCall(BlockCGCreate(A, B, o.pc, &cg));
  PetscCall(WaitForDevice(B));
  PetscCall(Now(comm, &t1));
  PetscCall(PrintProblem(A, &o, vtype));

  /* ---- block CG ---- */
  PetscCall(Now(comm, &t2));
  PetscCall(BlockCGSolve(&cg, B, o.rtol, o.max_it, o.monitor, &its, &converged));
  PetscCall(WaitForDevice(cg.X));
  PetscCall(Now(comm, &t3));
  PetscCall(MaxRelativeResidual(A, cg.X, B, &res));
  PetscCall(MaxColumnRelativeDifference(cg.X, Xtrue, &err));
  PetscCall(PetscPrintf(comm, "block CG: k = %" PetscInt_FMT ", %" PetscInt_FMT " iterations, max relative residual %.3e, %.6f s\n", o.k, its, (double)res, t3 - t2));
  PetscCall(PetscPrintf(comm, "block CG converged: %s\n", converged ? "yes" : "no"));
  PetscCall(PetscPrintf(comm, "block CG error: max over columns ||x - x_true|| / ||x_true|| = %.3e\n", (double)err));

  /* ---- the k single solves ---- */
  if (o.compare) {
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &Xs));
    PetscCall(SingleCGSolves(A, o.pc, B, o.rtol, o.max_it, Xs, &single));
    PetscCall(MaxColumnRelativeDifference(cg.X, Xs, &diff));
    PetscCall(PetscPrintf(comm, "single CG: %" PetscInt_FMT " solves, %" PetscInt_FMT " iterations, %.6f s\n", o.k, single.its_total, single.seconds));
    PetscCall(PetscPrintf(comm, "single CG: iterations per solve: min %" PetscInt_FMT ", max %" PetscInt_FMT "%s\n", single.its_min, single.its_max, single.failed ? " (some did not converge)" : ""));
    if (o.has_compare_tol) PetscCall(PetscPrintf(comm, "compare: max over columns ||x_block - x_single|| / ||x_single|| = %.3e (tol %.1e)\n", (double)diff, (double)o.compare_tol));
    else PetscCall(PetscPrintf(comm, "compare: max over columns ||x_block - x_single|| / ||x_single|| = %.3e\n", (double)diff));
    PetscCall(PetscPrintf(comm, "speedup (single / block): %.2fx\n", t3 > t2 ? single.seconds / (t3 - t2) : 0.0));
  }
  PetscCall(PetscPrintf(comm, "time: setup (matrix, X_true, B = A X_true, workspace): %.6f s\n", t1 - t0));
  PetscCall(PetscPrintf(comm, "time: block CG: %.6f s, per iteration %.3e s\n", t3 - t2, its > 0 ? (t3 - t2) / its : 0.0));
  PetscCall(PrintMatXtractPlan(A, "solves"));
  if (o.compare) {
    PetscCheck(single.failed == 0, comm, PETSC_ERR_NOT_CONVERGED, "-block_cg_compare: %" PetscInt_FMT " of the %" PetscInt_FMT " single KSPCG solves did not converge", single.failed, o.k);
    PetscCheck(!o.has_compare_tol || diff <= o.compare_tol, comm, PETSC_ERR_PLIB, "-block_cg_compare: the block and single solutions differ by %g > -block_cg_compare_tol %g (relative, max over columns)", (double)diff, (double)o.compare_tol);
  }

  PetscCall(BlockCGDestroy(&cg));
  PetscCall(MatDestroy(&Xs));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&Xtrue));
  PetscCall(VecDestroy(&v));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}

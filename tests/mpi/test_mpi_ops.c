/* test_mpi_ops - MATMPIAIJMATXTRACT against MPIAIJ on any number of ranks: products, diagonal,
 * value refresh (MatScale, MatShift, same-pattern re-assembly), new pattern, duplicate, and KSP
 * iteration counts / residual histories, on generated and real matrices, hot path off and on; the
 * products against one rank's (the whole matrix as one matxtract on each rank); and the
 * off-diagonal block's compressed rows against all its rows, bit for bit; under
 * -mat_matxtract_ghost_exchange nccl, that a matrix and its duplicate share one NCCL communicator.
 * Usage: mpiexec -n N test_mpi_ops -dir MATRICES_DIR/real */
#include <matxtract.h>
#include <petscksp.h>
#include "../common/petsc_check.h"
#include "petsc/matxtract_impl.h" /* white box: the NCCL communicator the MPI matrices borrow */

static const char help[] = "MatXtract MPI comparison with MPIAIJ.\n";

static PetscBool no_ksp  = PETSC_FALSE; /* -no_ksp: products only (GPU run) */

static PetscErrorCode CheckKSP(Mat A, Mat B, const char *name)
{
  Mat       M[2] = {A, B};
  PetscInt  its[2], nh[2];
  PetscReal h[2][200], worst = 0;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    KSP ksp;
    Vec x, b;
    PetscCall(MatCreateVecs(M[k], &x, &b));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(M[k], x, b));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, M[k], M[k]));
    PetscCall(KSPSetType(ksp, KSPBCGS));
    {
      PC pc;
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCJACOBI));
    }
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 150));
    PetscCall(KSPSetResidualHistory(ksp, h[k], 200, PETSC_TRUE));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(VecZeroEntries(x));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetIterationNumber(ksp, &its[k]));
    {
      const PetscReal *hh;
      PetscCall(KSPGetResidualHistory(ksp, &hh, &nh[k]));
    }
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
  }
  for (PetscInt i = 0; i < PetscMin(nh[0], nh[1]); i++) worst = PetscMax(worst, PetscAbsReal(h[0][i] - h[1][i]) / h[0][0]);
  PetscCall(Record((PetscBool)(its[0] == its[1] && worst <= 1e-10), "KSP bcgs iterations and history", name, (PetscReal)its[0], (PetscReal)its[1]));
  PetscFunctionReturn(0);
}

/* Builds so far of the format that runs B's off-diagonal products: its rows with ghost columns
 * where they run alone (MATXTRACT_GHOST_ROWS_KEY), else the block's (-1 on one rank: no such block). */
static PetscErrorCode OffDiagonalBuilds(Mat B, PetscInt *builds)
{
  PetscBool     mpi;
  Mat           Ao;
  PetscObject   rows;
  MatXtractInfo info;

  PetscFunctionBegin;
  *builds = -1;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJMATXTRACT, &mpi));
  if (!mpi) PetscFunctionReturn(0);
  PetscCall(MatMPIAIJGetSeqAIJ(B, NULL, &Ao, NULL));
  PetscCall(PetscObjectQuery((PetscObject)B, MATXTRACT_GHOST_ROWS_KEY, &rows));
  PetscCall(MatXtractGetInfo(rows ? (Mat)rows : Ao, &info));
  *builds = info.builds;
  PetscFunctionReturn(0);
}

/* B x (and B^T x) on every rank against one rank's: each rank holds the whole matrix A
 * (MatCreateRedundantMatrix), converted to matxtract alone on its communicator, and multiplies the
 * whole x; the distributed product, gathered onto every rank, must equal it within TOL (issue 44:
 * results equal to 1 rank's at 2, 3 and 4 ranks). */
static PetscErrorCode CheckOneRank(Mat A, Mat B, const char *name, unsigned long seed)
{
  PetscMPIInt size;
  Mat         S, Sx;
  Vec         x, y, xs, ys, xall, yall;
  VecScatter  gx, gy;
  PetscRandom rnd;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatCreateRedundantMatrix(A, size, PETSC_COMM_SELF, MAT_INITIAL_MATRIX, &S));
  PetscCall(MatConvert(S, MATMATXTRACT, MAT_INITIAL_MATRIX, &Sx));
  PetscCall(MatDestroy(&S));
  for (int t = 0; t < 2; t++) { /* B x, then B^T x */
    PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
    PetscCall(PetscRandomSetSeed(rnd, seed + (unsigned long)t));
    PetscCall(PetscRandomSeed(rnd));
    if (t == 0) PetscCall(MatCreateVecs(B, &x, &y));
    else PetscCall(MatCreateVecs(B, &y, &x));
    PetscCall(VecSetRandom(x, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(t == 0 ? MatMult(B, x, y) : MatMultTranspose(B, x, y));
    PetscCall(VecScatterCreateToAll(x, &gx, &xall));
    PetscCall(VecScatterCreateToAll(y, &gy, &yall));
    PetscCall(VecScatterBegin(gx, x, xall, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(gx, x, xall, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterBegin(gy, y, yall, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(gy, y, yall, INSERT_VALUES, SCATTER_FORWARD));
    if (t == 0) PetscCall(MatCreateVecs(Sx, &xs, &ys));
    else PetscCall(MatCreateVecs(Sx, &ys, &xs));
    PetscCall(VecCopy(xall, xs));
    PetscCall(t == 0 ? MatMult(Sx, xs, ys) : MatMultTranspose(Sx, xs, ys));
    PetscCall(CheckClose(ys, yall, t == 0 ? "MatMult equals one rank's" : "MatMultTranspose equals one rank's", name));
    PetscCall(VecScatterDestroy(&gx));
    PetscCall(VecScatterDestroy(&gy));
    PetscCall(VecDestroy(&xall));
    PetscCall(VecDestroy(&yall));
    PetscCall(VecDestroy(&xs));
    PetscCall(VecDestroy(&ys));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
  }
  PetscCall(MatDestroy(&Sx));
  PetscFunctionReturn(0);
}

/* Rows of A's off-diagonal block with ghost columns on this rank (0 on one rank). */
static PetscErrorCode GhostRowCount(Mat A, PetscInt *nonempty)
{
  PetscBool       mpi;
  Mat             Ao;
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;

  PetscFunctionBegin;
  *nonempty = 0;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (!mpi) PetscFunctionReturn(0);
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  for (PetscInt i = 0; i < n; i++) *nonempty += ia[i + 1] > ia[i];
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* -mat_matxtract_ghost_rows compressed (the off-diagonal products run only the rows with ghost
 * columns) and all give the same bits in MatMult, MatMultAdd and both transposes on the CPU path
 * (on the GPU the two may pick different cold kernels: within TOL there); the compressed rows are
 * composed under MATXTRACT_GHOST_ROWS_KEY on exactly the ranks that have such rows. */
static PetscErrorCode CheckGhostRows(Mat A, const char *name)
{
  static const char *const forms[2] = {"compressed", "all"};
  char                     saved[32] = "";
  PetscBool                had, on_device = PETSC_FALSE;
  PetscInt                 nonempty;
  Vec                      x, z, xt, zt, y[2][4];
  PetscRandom              rnd;

  PetscFunctionBegin;
  PetscCall(GhostRowCount(A, &nonempty));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_matxtract_ghost_rows", saved, sizeof saved, &had));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 23));
  PetscCall(PetscRandomSeed(rnd));
  for (int f = 0; f < 2; f++) {
    Mat         B;
    PetscObject rows;
    PetscBool   mpi;
    PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_ghost_rows", forms[f]));
    PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
    if (f == 0) {
      PetscCall(MatCreateVecs(B, &x, &z));
      PetscCall(MatCreateVecs(B, &zt, &xt));
      PetscCall(VecSetRandom(x, rnd));
      PetscCall(VecSetRandom(z, rnd));
      PetscCall(VecSetRandom(xt, rnd));
      PetscCall(VecSetRandom(zt, rnd));
    }
    PetscCall(VecDuplicate(z, &y[f][0]));
    PetscCall(VecDuplicate(z, &y[f][1]));
    PetscCall(VecDuplicate(zt, &y[f][2]));
    PetscCall(VecDuplicate(zt, &y[f][3]));
    PetscCall(MatMult(B, x, y[f][0]));
    PetscCall(MatMultAdd(B, x, z, y[f][1]));
    PetscCall(MatMultTranspose(B, xt, y[f][2]));
    PetscCall(MatMultTransposeAdd(B, xt, zt, y[f][3]));
    {
      MatXtractInfo info;
      PetscCall(MatXtractGetInfo(B, &info));
      on_device = info.on_device;
    }
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJMATXTRACT, &mpi));
    PetscCall(PetscObjectQuery((PetscObject)B, MATXTRACT_GHOST_ROWS_KEY, &rows));
    if (mpi) PetscCall(Expect((PetscBool)(!rows == !(f == 0 && nonempty > 0)), f == 0 ? "compressed ghost rows composed where this rank has rows with ghost columns" : "no compressed ghost rows under -mat_matxtract_ghost_rows all", name));
    PetscCall(MatDestroy(&B));
  }
  if (had) PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_ghost_rows", saved));
  else PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_ghost_rows"));
  for (int k = 0; k < 4; k++) {
    static const char *const what[4] = {"MatMult", "MatMultAdd", "MatMultTranspose", "MatMultTransposeAdd"};
    char                     label[128];
    PetscBool                same;
    if (on_device) {
      PetscCall(PetscSNPrintf(label, sizeof label, "%s: compressed ghost rows equal all rows", what[k]));
      PetscCall(CheckClose(y[1][k], y[0][k], label, name));
    } else {
      PetscCall(VecEqual(y[0][k], y[1][k], &same));
      PetscCall(PetscSNPrintf(label, sizeof label, "%s: compressed ghost rows bit for bit all rows", what[k]));
      PetscCall(Expect(same, label, name));
    }
    PetscCall(VecDestroy(&y[0][k]));
    PetscCall(VecDestroy(&y[1][k]));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&zt));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

/* Under the NCCL exchange (set up by the products already made), B and C borrow the one NCCL
 * communicator of their MPI communicator: one NCCL setup, never two communicators in use at once. */
static PetscErrorCode CheckHaloCommShared(Mat B, Mat C, const char *label)
{
  const Mat_MPIAIJMatXtract *b, *c;
  PetscBool                  mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJMATXTRACT, &mpi));
  if (!mpi) PetscFunctionReturn(0);
  b = (const Mat_MPIAIJMatXtract *)B->spptr;
  c = (const Mat_MPIAIJMatXtract *)C->spptr;
  if (b->exchange != MATXTRACT_EXCHANGE_NCCL) PetscFunctionReturn(0);
  PetscCall(Record((PetscBool)(b->halo && c->halo && b->hcomm && b->hcomm == c->hcomm), "a matrix and its duplicate share one NCCL communicator", label, 0, 0));
  PetscFunctionReturn(0);
}

/* One matrix: crux off and on; value changes and re-assembly follow. A is MPIAIJ (modified). */
static PetscErrorCode CheckMatrix(Mat A, const char *name)
{
  static const PetscReal cruxes[][2] = {{0, 0}, {0.7, 0.5}, {1, 1}};
  PetscInt               rstart, rend, m, n;
  PetscBool              flg;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(CheckGhostRows(A, name));
  for (int q = 0; q < 3; q++) {
    Mat  B, C;
    char label[256];
    PetscCall(PetscSNPrintf(label, sizeof label, "%s crux (%g,%g)", name, (double)cruxes[q][0], (double)cruxes[q][1]));
    PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &flg, MATSEQAIJMATXTRACT, MATMPIAIJMATXTRACT, ""));
    PetscCall(Record(flg, "type after MatConvert", label, 0, 0));
    PetscCall(MatXtractSetCrux(B, cruxes[q][0], cruxes[q][1]));
    PetscCall(CheckProducts(A, B, label, 7));
    PetscCall(CheckOneRank(A, B, label, 17));
    if (!no_ksp && (!strncmp(name, "lap2d", 5) || !strncmp(name, "convdiff", 8))) PetscCall(CheckKSP(A, B, label)); /* converging solves: a non-converging BCGS amplifies rounding chaotically */

    PetscCall(MatScale(A, 0.5));
    PetscCall(MatScale(B, 0.5));
    PetscCall(CheckProducts(A, B, "after MatScale", 8));
    if (m == n) {
      Vec da, db;
      PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* missing diagonals: new pattern */
      PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(MatShift(A, 2.0));
      PetscCall(MatShift(B, 2.0));
      PetscCall(CheckProducts(A, B, "after MatShift", 9));
      PetscCall(MatCreateVecs(A, &da, NULL));
      PetscCall(VecDuplicate(da, &db));
      PetscCall(MatGetDiagonal(A, da));
      PetscCall(MatGetDiagonal(B, db));
      PetscCall(CheckClose(da, db, "MatGetDiagonal", label));
      PetscCall(VecDestroy(&da));
      PetscCall(VecDestroy(&db));
    }
    /* same-pattern values through MatSetValues on the locally owned diagonal-block entries */
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    PetscInt ao_builds[2];
    PetscCall(OffDiagonalBuilds(B, &ao_builds[0]));
    {
      PetscInt    *ci, nset = 0;
      PetscScalar *cv;
      PetscCall(PetscMalloc2(rend - rstart, &ci, rend - rstart, &cv));
      for (PetscInt i = rstart; i < rend; i++) { /* last entry of each row += 1 (collected first:
                                                     MatGetRow needs an assembled matrix) */
        PetscInt           nc;
        const PetscInt    *cols;
        const PetscScalar *vals;
        PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
        ci[i - rstart] = nc ? cols[nc - 1] : -1;
        cv[i - rstart] = nc ? vals[nc - 1] + 1.0 : 0.0;
        PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
      }
      for (PetscInt i = rstart; i < rend; i++) {
        if (ci[i - rstart] < 0) continue;
        PetscCall(MatSetValue(A, i, ci[i - rstart], cv[i - rstart], INSERT_VALUES));
        PetscCall(MatSetValue(B, i, ci[i - rstart], cv[i - rstart], INSERT_VALUES));
        nset++;
      }
      (void)nset;
      PetscCall(PetscFree2(ci, cv));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(CheckProducts(A, B, "after same-pattern MatSetValues", 10));
    PetscCall(OffDiagonalBuilds(B, &ao_builds[1]));
    PetscCall(Record((PetscBool)(ao_builds[1] == ao_builds[0]), "off-diagonal block refreshed, not rebuilt, after a same-pattern assembly", label, (PetscReal)ao_builds[0], (PetscReal)ao_builds[1]));
    PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &C));
    PetscCall(CheckProducts(A, C, "MatDuplicate", 11));
    PetscCall(CheckHaloCommShared(B, C, label));
    PetscCall(MatDestroy(&B)); /* C's exchange goes on without B */
    PetscCall(CheckProducts(A, C, "MatDuplicate, its original destroyed", 12));
    PetscCall(MatDestroy(&C));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  static const char *const specs[] = {"lap2d:40", "convdiff2d:30", "rand:500:8", "chunglu:800:8:2.1", "bipartite:300:200:5", "kron:9:8"};
  static const char *const real[]  = {"bcsstk13", "pushpull", "west0067", "lp_afiro", "karate", "cryg2500"};
  char                     dir[PETSC_MAX_PATH_LEN] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof dir, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-no_ksp", &no_ksp, NULL));
  { /* -mat_matxtract_device gpu without a usable GPU: skip (77) */
    char      dev[16] = "";
    PetscBool gpu;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_matxtract_device", dev, sizeof dev, NULL));
    PetscCall(PetscStrcmp(dev, "gpu", &gpu));
    if (gpu) {
      Mat           T;
      MatXtractInfo info;
      PetscErrorCode ierr;
      PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "lap2d:4", "probe_", &T));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = MatConvert(T, MATMATXTRACT, MAT_INPLACE_MATRIX, &T);
      if (!ierr) ierr = MatXtractGetInfo(T, &info);
      PetscCall(PetscPopErrorHandler());
      PetscCall(MatDestroy(&T));
      if (ierr || !info.on_device) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: no usable GPU\n"));
        PetscCall(PetscFinalize());
        return 77;
      }
    }
  }
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
    Mat A;
    PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, specs[s], "aij_", &A));
    PetscCall(CheckMatrix(A, specs[s]));
    PetscCall(MatDestroy(&A));
  }
  if (dir[0])
    for (size_t r = 0; r < sizeof real / sizeof real[0]; r++) {
      Mat  A;
      char path[PETSC_MAX_PATH_LEN];
      PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s.mtx", dir, real[r]));
      PetscCall(MatXtractLoad(PETSC_COMM_WORLD, path, "aij_", &A));
      PetscCall(CheckMatrix(A, real[r]));
      PetscCall(MatDestroy(&A));
    }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}

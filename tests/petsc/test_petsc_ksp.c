/* test_petsc_ksp - KSP solves with -mat_type matxtract give the same iteration counts and residual
 * histories (within 1e-10 relative to the first residual) as AIJ, with the hot path inactive (0,0)
 * and active (0.7,0.5), for CG, GMRES and BCGS with several preconditioners (AIJ's own PCs run on
 * our type: jacobi, sor, ilu, icc, bjacobi). CG on bcsstk13 (condition ~1e10) is run for 40
 * iterations: past ~60 the hot path's different summation order (cold part + hot part per row) is
 * amplified like any rounding change (1.6e-3 after 100 iterations), as between aij and aijcusparse.
 * Usage: test_petsc_ksp -dir MATRICES_DIR/real */
#include <matxtract.h>
#include <petscksp.h>

static const char help[] = "MatXtract KSP comparison with SeqAIJ.\n";

typedef struct {
  const char *matrix; /* file in -dir, or a generator spec when it contains ':' */
  const char *ksp, *pc;
  PetscInt    max_it;
} Case;

#define MAXHIST 2000

/* Solve A x = b (b = A v) and return the residual history. */
static PetscErrorCode Solve(Mat A, const Case *c, PetscReal *hist, PetscInt *nhist, PetscInt *its)
{
  KSP ksp;
  PC  pc;
  Vec x, b, ones;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &ones));
  { /* b = A v, v_i = 1 + (i mod 7)/7: not in the null space of Laplacian-like matrices */
    PetscScalar *v;
    PetscInt     n;
    PetscCall(VecGetLocalSize(ones, &n));
    PetscCall(VecGetArray(ones, &v));
    for (PetscInt i = 0; i < n; i++) v[i] = 1.0 + (PetscReal)(i % 7) / 7.0;
    PetscCall(VecRestoreArray(ones, &v));
  }
  PetscCall(MatMult(A, ones, b));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, c->ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, c->pc));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, c->max_it));
  PetscCall(KSPSetResidualHistory(ksp, hist, MAXHIST, PETSC_TRUE));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  {
    PetscReal *h;
    PetscCall(KSPGetResidualHistory(ksp, (const PetscReal **)&h, nhist));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&ones));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  static const Case cases[] = {
    {"bcsstk13.mtx", KSPGMRES, PCJACOBI, 100},   {"jagmesh7.mtx", KSPCG, PCICC, 300}, {"olm1000.mtx", KSPGMRES, PCILU, 300}, {"bcsstk13.mtx", KSPCG, PCJACOBI, 40}, {"cryg2500.mtx", KSPBCGS, PCJACOBI, 300},
    {"west0067.mtx", KSPGMRES, PCNONE, 200},   {"pushpull.mtx", KSPBCGS, PCSOR, 200}, {"lap2d:60", KSPCG, PCSOR, 500},
    {"convdiff2d:50", KSPBCGS, PCBJACOBI, 500}, {"lap3d:14", KSPGMRES, PCNONE, 500},
  };
  static const PetscReal cruxes[][2] = {{0, 0}, {0.7, 0.5}, {1, 1}};
  char                   dir[PETSC_MAX_PATH_LEN] = ".";
  PetscInt               npass = 0, nfail = 0;
  PetscReal             *ha, *hb;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof dir, NULL));
  PetscCall(PetscMalloc2(MAXHIST, &ha, MAXHIST, &hb));
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const Case *c = &cases[k];
    Mat         A;
    PetscInt    na, itsa;
    char        path[PETSC_MAX_PATH_LEN];

    if (strchr(c->matrix, ':')) PetscCall(MatXtractGenerate(PETSC_COMM_SELF, c->matrix, "aij_", &A));
    else {
      PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s", dir, c->matrix));
      PetscCall(MatXtractLoad(PETSC_COMM_SELF, path, "aij_", &A));
    }
    PetscCall(Solve(A, c, ha, &na, &itsa));
    for (size_t q = 0; q < sizeof cruxes / sizeof cruxes[0]; q++) {
      Mat       B;
      PetscInt  nb, itsb;
      PetscReal worst = 0;
      PetscCall(MatConvert(A, MATSEQAIJMATXTRACT, MAT_INITIAL_MATRIX, &B));
      PetscCall(MatXtractSetCrux(B, cruxes[q][0], cruxes[q][1]));
      PetscCall(Solve(B, c, hb, &nb, &itsb));
      for (PetscInt i = 0; i < PetscMin(na, nb); i++) worst = PetscMax(worst, PetscAbsReal(ha[i] - hb[i]) / ha[0]);
      if (itsa == itsb && na == nb && worst <= 1e-10) npass++;
      else {
        nfail++;
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL "));
      }
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s %s/%s crux (%g,%g): its aij %" PetscInt_FMT " matxtract %" PetscInt_FMT ", history max rel diff %.2e\n", c->matrix, c->ksp, c->pc, (double)cruxes[q][0], (double)cruxes[q][1], itsa, itsb, (double)worst));
      PetscCall(MatDestroy(&B));
    }
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscFree2(ha, hb));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", npass, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}

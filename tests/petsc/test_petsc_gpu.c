/* test_petsc_gpu - matxtract with device vectors (-vec_type cuda) against aijcusparse and AIJ:
 * MatMult, MatMultAdd (also y == z), MatMultTranspose(Add), value refresh on the GPU (MatScale,
 * same-pattern re-assembly), pattern rebuild, and a KSP solve, for several cruxes and modes on
 * generated and real matrices. Exits 77 (ctest: skipped) when PETSc has no CUDA or no GPU is
 * visible. Usage: test_petsc_gpu -dir MATRICES_DIR/real */
#include <matxtract.h>
#include <petscksp.h>
#include "../common/petsc_check.h"
#include "../common/petsc_gpu_probe.h"

static const char help[] = "MatXtract on the GPU vs aijcusparse.\n";

#if !defined(PETSC_HAVE_CUDA)
int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: PETSc was built without CUDA\n"));
  PetscCall(PetscFinalize());
  return 77;
}
#else

/* Products against aijcusparse for each crux and mode, also after value changes; seeds from `seed`. */
static PetscErrorCode CheckMatrix(Mat A, const char *name, unsigned long seed)
{
  static const PetscReal   cruxes[][2] = {{0, 0}, {0.7, 0.5}, {0.9, 0.8}, {1, 1}};
  static const char *const modes[]     = {"du", "se"};
  MatXtractInfo            info;

  PetscFunctionBegin;
  for (int q = 0; q < 4; q++)
    for (int md = 0; md < 2; md++) {
      Mat  R, B;
      char label[256];
      PetscCall(PetscSNPrintf(label, sizeof label, "%s crux (%g,%g) %s", name, (double)cruxes[q][0], (double)cruxes[q][1], modes[md]));
      PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &R));
      PetscCall(PetscOptionsSetValue(NULL, "-mat_matxtract_mode", modes[md]));
      PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, &B));
      PetscCall(MatSetFromOptions(B));
      PetscCall(PetscOptionsClearValue(NULL, "-mat_matxtract_mode"));
      PetscCall(MatXtractSetCrux(B, cruxes[q][0], cruxes[q][1]));
      const unsigned long s = seed + 3 * (2 * q + md);
      PetscCall(CheckProducts(R, B, label, s));
      PetscCall(MatXtractGetInfo(B, &info));
      PetscCall(Expect(info.on_device, "MatMult on the GPU", label));
      /* values change without assembly (refresh on the GPU), then through re-assembly */
      PetscCall(MatScale(R, -1.5));
      PetscCall(MatScale(B, -1.5));
      PetscCall(CheckProducts(R, B, "after MatScale", s + 1));
      PetscCall(MatShift(R, 1.0));
      PetscCall(MatShift(B, 1.0));
      PetscCall(CheckProducts(R, B, "after MatShift", s + 2));
      PetscCall(MatDestroy(&R));
      PetscCall(MatDestroy(&B));
    }
  PetscFunctionReturn(0);
}

/* The same KSP solve with aijcusparse and matxtract: same iteration count. */
static PetscErrorCode CheckKSP(Mat A, const char *name)
{
  PetscInt its[2];
  MatType  types[2] = {MATAIJCUSPARSE, MATMATXTRACT};

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Mat M;
    KSP ksp;
    Vec x, b;
    PetscCall(MatConvert(A, types[k], MAT_INITIAL_MATRIX, &M));
    PetscCall(MatCreateVecs(M, &x, &b));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(M, x, b));
    PetscCall(VecZeroEntries(x));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, M, M));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    {
      PC pc;
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCJACOBI));
    }
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetIterationNumber(ksp, &its[k]));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&M));
  }
  PetscCall(Record((PetscBool)(its[0] == its[1]), "KSP CG iterations (aijcusparse vs matxtract)", name, (PetscReal)its[0], (PetscReal)its[1]));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  static const char *const large[] = {"lap2d:300", "kron:14:16", "rand:20000:12", "chunglu:30000:10:2.1", "bipartite:3000:2000:7", "blockdense:20000:20:64", "kron:17:16"};
  static const char *const small[] = {"lap2d:20", "kron:8:8", "bipartite:60:40:5"}; /* -small: for compute-sanitizer */
  const char *const       *specs   = large;
  size_t                   nspecs  = sizeof large / sizeof large[0];
  PetscBool                is_small = PETSC_FALSE;
  static const char *const real[]  = {"bcsstk13", "pushpull", "west0067", "lp_afiro", "karate", "cryg2500", "zenios"};
  char                     dir[PETSC_MAX_PATH_LEN] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
  {
    PetscBool usable;
    PetscCall(MatXtractTestGpuUsable(&usable));
    if (!usable) {
      PetscCall(PetscFinalize());
      return 77;
    }
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof dir, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-small", &is_small, NULL));
  if (is_small) {
    specs   = small;
    nspecs  = sizeof small / sizeof small[0];
    dir[0]  = 0;
  }
  for (size_t s = 0; s < nspecs; s++) {
    Mat A;
    PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, specs[s], "aij_", &A));
    PetscCall(CheckMatrix(A, specs[s], 100 * s));
    if (!strncmp(specs[s], "lap2d", 5)) PetscCall(CheckKSP(A, specs[s]));
    PetscCall(MatDestroy(&A));
  }
  if (dir[0])
    for (size_t r = 0; r < sizeof real / sizeof real[0]; r++) {
      Mat  A;
      char path[PETSC_MAX_PATH_LEN];
      PetscCall(PetscSNPrintf(path, sizeof path, "%s/%s.mtx", dir, real[r]));
      PetscCall(MatXtractLoad(PETSC_COMM_WORLD, path, "aij_", &A));
      PetscCall(CheckMatrix(A, real[r], 10000 + 100 * r));
      PetscCall(MatDestroy(&A));
    }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", nchecks - nfail, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
#endif

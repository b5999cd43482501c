/* test_petsc_gpu_inject - one run of a GPU user's sequence under a test-only injected CUDA failure
 * (MX_FAULT_INJECT=N: the N-th checked CUDA call of the process fails, see src/cuda/mx_device.cu):
 * MatConvert to matxtract (-mat_matxtract_device auto), MatMult and MatMultAdd with the matrix's own
 * vectors, MatScale (value refresh), MatMultTranspose. Passes iff either every product equals AIJ's
 * (relative error <= 1e-12: the failure hit the build and the matrix fell back to the CPU, or N was
 * past the last CUDA call) or the first failing call returned a PETSc error (not a crash) whose
 * message says the failure was injected; in both cases the AIJ matrix still gives its products.
 * tests/petsc/gpu_fault_injection.sh runs it for N = 1, 2, ... Exit 77 without PETSc+CUDA or GPU. */
#include <matxtract.h>
#include "../common/petsc_check.h"

static const char help[] = "One run under an injected GPU failure.\n";

/* ||y - ref|| <= 1e-12 ||ref|| */
static PetscErrorCode Close(Vec y, Vec ref, PetscBool *ok)
{
  Vec       d;
  PetscReal nd, nr;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(ref, &d));
  PetscCall(VecCopy(y, d));
  PetscCall(VecAXPY(d, -1.0, ref));
  PetscCall(VecNorm(d, NORM_2, &nd));
  PetscCall(VecNorm(ref, NORM_2, &nr));
  *ok = (PetscBool)(nd <= 1e-12 * nr);
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

/* The user's sequence on B (converted from A); products compared with A's. Errors propagate. */
static PetscErrorCode Sequence(Mat A, Mat *B, PetscBool *all_ok)
{
  Vec       x, y, z, r, xt, yt, rt;
  PetscBool ok;

  PetscFunctionBegin;
  *all_ok = PETSC_TRUE;
  PetscCall(MatConvert(A, MATMATXTRACT, MAT_INITIAL_MATRIX, B));
  PetscCall(MatCreateVecs(*B, &x, &y));
  PetscCall(MatCreateVecs(A, NULL, &r));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecSet(z, 1.0));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatMult(*B, x, y));
    PetscCall(MatMult(A, x, r));
    PetscCall(Close(y, r, &ok));
    *all_ok = (PetscBool)(*all_ok && ok);
    PetscCall(MatMultAdd(*B, x, z, y));
    PetscCall(MatMultAdd(A, x, z, r));
    PetscCall(Close(y, r, &ok));
    *all_ok = (PetscBool)(*all_ok && ok);
    PetscCall(MatScale(*B, 2.0));
    PetscCall(MatScale(A, 2.0));
  }
  PetscCall(MatCreateVecs(*B, &yt, &xt));
  PetscCall(VecDuplicate(yt, &rt));
  PetscCall(VecSetRandom(xt, NULL));
  PetscCall(MatMultTranspose(*B, xt, yt));
  PetscCall(MatMultTranspose(A, xt, rt));
  PetscCall(Close(yt, rt, &ok));
  *all_ok = (PetscBool)(*all_ok && ok);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&rt));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            A, B = NULL;
  Vec            x, y;
  PetscBool      ok = PETSC_FALSE;
  PetscErrorCode ierr;
  PetscReal      ny;
  const char    *inject = getenv("MX_FAULT_INJECT");

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatXtractRegister());
#if !defined(PETSC_HAVE_CUDA)
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "skipped: PETSc was built without CUDA\n"));
  PetscCall(PetscFinalize());
  return 77;
#endif
  PetscCall(MatXtractGenerate(PETSC_COMM_WORLD, "lap2d:200", "aij_", &A));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = Sequence(A, &B, &ok);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    const char *text = NULL;
    char       *specific = NULL;
    PetscErrorMessage(ierr, &text, &specific);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MX_FAULT_INJECT=%s: PETSc error %d: %s\n", inject ? inject : "", (int)ierr, specific ? specific : "(none)"));
    PetscCall(Expect((PetscBool)(specific && strstr(specific, "injected fault")), "the error says the failure was injected", "lap2d:200"));
  } else {
    MatXtractInfo info;
    PetscCall(MatXtractGetInfo(B, &info));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MX_FAULT_INJECT=%s: no error, products on the %s\n", inject ? inject : "", info.on_device ? "GPU" : "CPU"));
    PetscCall(Expect(ok, "every product equals AIJ's", "lap2d:200"));
  }
  /* B may be half-made after an error: destroying it must not crash either */
  PetscCall(MatDestroy(&B));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecNorm(y, NORM_2, &ny));
  PetscCall(Expect((PetscBool)(PetscIsNormalReal(ny) || ny == 0), "AIJ still multiplies", "lap2d:200"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}

/* matxtract_register.c - type registration, log events, the public dispatchers, and the entry
 * point PETSc calls when the library is loaded with -dll_append. */
#include "matxtract_impl.h"
#include "io/mx_io.h"


PetscLogEvent MATXTRACT_Build, MATXTRACT_Refresh, MATXTRACT_Mult, MATXTRACT_MultT, MATXTRACT_BuildT, MATXTRACT_Copy, MATXTRACT_MultDense;

PetscErrorCode MatXtractRegisterEvents(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("MatXtractBuild", MAT_CLASSID, &MATXTRACT_Build));
  PetscCall(PetscLogEventRegister("MatXtractRefresh", MAT_CLASSID, &MATXTRACT_Refresh));
  PetscCall(PetscLogEventRegister("MatXtractMult", MAT_CLASSID, &MATXTRACT_Mult));
  PetscCall(PetscLogEventRegister("MatXtractMultT", MAT_CLASSID, &MATXTRACT_MultT));
  PetscCall(PetscLogEventRegister("MatXtractMultDense", MAT_CLASSID, &MATXTRACT_MultDense));
  PetscCall(PetscLogEventRegister("MatXtractBuildT", MAT_CLASSID, &MATXTRACT_BuildT));
  PetscCall(PetscLogEventRegister("MatXtractCopy", MAT_CLASSID, &MATXTRACT_Copy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool MatXtractRegistered = PETSC_FALSE;

static PetscErrorCode MatXtractFinalize(void)
{
  PetscFunctionBegin;
  mx_device_release_pools();
  MatXtractRegistered = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Process-wide options (every matrix shares them), read once at registration. */
static PetscErrorCode MatXtractProcessOptions(void)
{
  PetscInt  threads = 4, copy_threads = mx_hostcopy_default_threads();
  PetscBool warmup = PETSC_TRUE;

  PetscFunctionBegin;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MatXtract process-wide options", "Mat");
  PetscCall(PetscOptionsInt("-mat_matxtract_upload_threads", "Host threads (1-16) staging large uploads to the GPU (the AIJ arrays at a build, the values at a refresh) through pinned buffers; 1 = the driver's pageable copy", "", threads, &threads, NULL));
  PetscCall(PetscOptionsInt("-mat_matxtract_copy_threads", "Host threads (1-16) of MatConvert's copy of a large SeqAIJ (32 MiB, or 4 MiB with 8+ nonzeros per row) into the new matrix (default: OpenMP's, OMP_NUM_THREADS, less 2, at most 16); 1 = PETSc's MatDuplicate", "", copy_threads, &copy_threads, NULL));
  PetscCall(PetscOptionsBool("-mat_matxtract_warmup", "Load the GPU code of the default plan in a host thread while the process's first MatConvert copies the matrix (or the first matxtract matrix is assembled), instead of at its first MatMult", "", warmup, &warmup, NULL));
  PetscOptionsEnd();
  mx_device_set_warmup((int)warmup);
  PetscCheck(threads >= 1 && threads <= 16, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-mat_matxtract_upload_threads %" PetscInt_FMT ": need 1 to 16", threads);
  PetscCheck(copy_threads >= 1 && copy_threads <= MX_HOSTCOPY_MAX_THREADS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-mat_matxtract_copy_threads %" PetscInt_FMT ": need 1 to %d", copy_threads, MX_HOSTCOPY_MAX_THREADS);
  PetscCheck(!mx_device_set_upload_threads((int)threads), PETSC_COMM_WORLD, PETSC_ERR_LIB, "matxtract: %s", mx_device_last_error());
  PetscCheck(!mx_hostcopy_set_threads((int)copy_threads), PETSC_COMM_WORLD, PETSC_ERR_LIB, "matxtract: copy threads %" PetscInt_FMT " refused", copy_threads);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractRegister(void)
{
  PetscFunctionBegin;
  if (MatXtractRegistered) PetscFunctionReturn(PETSC_SUCCESS);
  MatXtractRegistered = PETSC_TRUE;
  PetscCall(MatRegisterRootName(MATMATXTRACT, MATSEQAIJMATXTRACT, MATMPIAIJMATXTRACT));
  PetscCall(MatRegister(MATSEQAIJMATXTRACT, MatCreate_SeqAIJMatXtract));
  PetscCall(MatRegister(MATMPIAIJMATXTRACT, MatCreate_MPIAIJMatXtract));
  PetscCall(MatXtractRegisterEvents());
  PetscCall(PetscRegisterFinalize(MatXtractFinalize));
  PetscCall(MatXtractProcessOptions());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called by PETSc after dlopen() of libmatxtract.so (-dll_append). */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_matxtract(void)
{
  PetscFunctionBegin;
  PetscCall(MatXtractRegister());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractSetCrux(Mat A, PetscReal tau_c, PetscReal tau_r)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscUseMethod(A, "MatXtractSetCrux_C", (Mat, PetscReal, PetscReal), (A, tau_c, tau_r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractGetInfo(Mat A, MatXtractInfo *info)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(info, 2);
  PetscUseMethod(A, "MatXtractGetInfo_C", (Mat, MatXtractInfo *), (A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

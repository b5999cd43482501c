/* matxtract_settings.c - the user's choices (-mat_matxtract_* options), and the conversion steps
 * that the sequential and MPI types share. */
#include "matxtract_impl.h"

const char *const MatXtractModeNames[]   = {"auto", "du", "se", "MatXtractMode", "MX_MODE_", NULL};
const char *const MatXtractDeviceNames[] = {"auto", "cpu", "gpu", "MatXtractDevice", "MATXTRACT_DEVICE_", NULL};
const char *const MatXtractColdNames[]   = {"auto", "segment", "merge", "cusparse", "MatXtractCold", "MX_COLD_", NULL};
const char *const MatXtractSourceNames[] = {"default (no predictor yet: all cold)", "option -mat_matxtract_crux", "MatXtractSetCrux", "predictor"};

PetscErrorCode MatXtractSettingsDefault(MatXtractSettings *set)
{
  PetscFunctionBegin;
  set->crux.tau_c    = 0.0;
  set->crux.tau_r    = 0.0;
  set->crux_source   = MATXTRACT_CRUX_DEFAULT;
  set->mode          = MX_MODE_AUTO;
  set->device_choice = MATXTRACT_DEVICE_AUTO;
  set->cold_kernel   = MX_COLD_AUTO;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set->crux = (tau_c, tau_r) from `source`, after checking 0 <= tau_r <= tau_c <= 1. */
PetscErrorCode MatXtractSettingsSetCrux(Mat A, MatXtractSettings *set, PetscReal tau_c, PetscReal tau_r, MatXtractCruxSource source)
{
  PetscFunctionBegin;
  PetscCheck(tau_c >= 0 && tau_c <= 1 && tau_r >= 0 && tau_r <= tau_c, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "matxtract: crux (%g, %g) is invalid: need 0 <= tau_r <= tau_c <= 1", (double)tau_c, (double)tau_r);
  set->crux.tau_c  = tau_c;
  set->crux.tau_r  = tau_r;
  set->crux_source = source;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* First step of MatConvert to a matxtract type: refuse scalars other than real double, and give
 * *B the matrix to turn into ours (a duplicate, A's values copied in, or A itself in place). */
PetscErrorCode MatXtractConvertBegin(Mat A, MatReuse reuse, Mat *B)
{
  PetscFunctionBegin;
#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "matxtract needs PetscScalar = real double (the tensor-core path is FP64); this PETSc is configured with another scalar type: use -mat_type aij");
#endif
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether products run on the GPU: not refused by -mat_matxtract_device cpu, and a GPU is usable. */
PetscBool MatXtractSettingsWantDevice(const MatXtractSettings *set)
{
  if (set->device_choice == MATXTRACT_DEVICE_CPU) return PETSC_FALSE;
  return mx_device_count() > 0 ? PETSC_TRUE : PETSC_FALSE;
}

/* MatCreateVecs of a matxtract matrix whose products run on the GPU gives device vectors, as
 * aijcusparse's does; one whose products run on the CPU (no GPU, or a GPU build that failed under
 * -mat_matxtract_device auto) gives host vectors. */
PetscErrorCode MatXtractSetDefaultVecType(Mat B, PetscBool on_device)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(B->defaultvectype));
#if defined(PETSC_HAVE_CUDA)
  PetscCall(PetscStrallocpy(on_device ? VECCUDA : VECSTANDARD, &B->defaultvectype));
#else
  (void)on_device;
  PetscCall(PetscStrallocpy(VECSTANDARD, &B->defaultvectype));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parse -mat_matxtract_* into set; *changed tells whether anything was given. */
PetscErrorCode MatXtractSettingsFromOptions(Mat A, PetscOptionItems *PetscOptionsObject, MatXtractSettings *set, PetscBool *changed)
{
  PetscReal crux[2] = {set->crux.tau_c, set->crux.tau_r};
  PetscInt  ncrux = 2, mode = (PetscInt)set->mode, device = (PetscInt)set->device_choice, cold = (PetscInt)set->cold_kernel;
  PetscBool set_crux, set_mode, set_device, set_cold;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "MatXtract options (hot/cold SpMV format)");
  PetscCall(PetscOptionsRealArray("-mat_matxtract_crux", "Crux tau_c,tau_r (0 <= tau_r <= tau_c <= 1); default 0,0 = all cold, since no predictor is built in yet", "MatXtractSetCrux", crux, &ncrux, &set_crux));
  PetscCall(PetscOptionsEList("-mat_matxtract_mode", "Hot region format: auto (smaller of DU/SE by exact byte cost), du (dense unfolding), se (sparse encoding)", "", MatXtractModeNames, 3, MatXtractModeNames[mode], &mode, &set_mode));
  PetscCall(PetscOptionsEList("-mat_matxtract_device", "Where MatMult runs: auto (GPU when one is visible), cpu, gpu", "", MatXtractDeviceNames, 3, MatXtractDeviceNames[device], &device, &set_device));
  PetscCall(PetscOptionsEList("-mat_matxtract_cold", "Cold-region GPU kernel: auto (measured at upload), segment (paper Alg. 2), merge (merge path), cusparse (cusparseSpMV CSR ALG2)", "", MatXtractColdNames, 4, MatXtractColdNames[cold], &cold, &set_cold));
  PetscOptionsHeadEnd();
  if (set_crux) {
    PetscCheck(ncrux == 2, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "-mat_matxtract_crux takes two numbers tau_c,tau_r; got %" PetscInt_FMT, ncrux);
    PetscCall(MatXtractSettingsSetCrux(A, set, crux[0], crux[1], MATXTRACT_CRUX_OPTION));
  }
  set->mode          = (mx_mode_request)mode;
  set->device_choice = (MatXtractDeviceChoice)device;
  set->cold_kernel   = (mx_cold_kernel)cold;
  *changed           = (PetscBool)(set_crux || set_mode || set_device || set_cold);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same options read straight from the database (no -help text), for conversions: MatConvert
 * to matxtract does not call MatSetFromOptions, yet -mat_matxtract_* must apply to it too. */
PetscErrorCode MatXtractSettingsFromDatabase(Mat A, MatXtractSettings *set)
{
  const char *prefix;
  PetscReal   crux[2];
  PetscInt    ncrux = 2, choice;
  PetscBool   flg;

  PetscFunctionBegin;
  PetscCall(MatGetOptionsPrefix(A, &prefix));
  PetscCall(PetscOptionsGetRealArray(((PetscObject)A)->options, prefix, "-mat_matxtract_crux", crux, &ncrux, &flg));
  if (flg) {
    PetscCheck(ncrux == 2, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "-mat_matxtract_crux takes two numbers tau_c,tau_r; got %" PetscInt_FMT, ncrux);
    PetscCall(MatXtractSettingsSetCrux(A, set, crux[0], crux[1], MATXTRACT_CRUX_OPTION));
  }
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_mode", MatXtractModeNames, 3, &choice, &flg));
  if (flg) set->mode = (mx_mode_request)choice;
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_device", MatXtractDeviceNames, 3, &choice, &flg));
  if (flg) set->device_choice = (MatXtractDeviceChoice)choice;
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_cold", MatXtractColdNames, 4, &choice, &flg));
  if (flg) set->cold_kernel = (mx_cold_kernel)choice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

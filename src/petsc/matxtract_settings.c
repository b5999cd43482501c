/* matxtract_settings.c - the user's choices (-mat_matxtract_* options), shared by the sequential
 * and MPI types. */
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

PetscErrorCode MatXtractCheckCrux(Mat A, PetscReal tau_c, PetscReal tau_r)
{
  PetscFunctionBegin;
  PetscCheck(tau_c >= 0 && tau_c <= 1 && tau_r >= 0 && tau_r <= tau_c, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "matxtract: crux (%g, %g) is invalid: need 0 <= tau_r <= tau_c <= 1", (double)tau_c, (double)tau_r);
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
    PetscCall(MatXtractCheckCrux(A, crux[0], crux[1]));
    set->crux.tau_c  = crux[0];
    set->crux.tau_r  = crux[1];
    set->crux_source = MATXTRACT_CRUX_OPTION;
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
    PetscCall(MatXtractCheckCrux(A, crux[0], crux[1]));
    set->crux.tau_c  = crux[0];
    set->crux.tau_r  = crux[1];
    set->crux_source = MATXTRACT_CRUX_OPTION;
  }
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_mode", MatXtractModeNames, 3, &choice, &flg));
  if (flg) set->mode = (mx_mode_request)choice;
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_device", MatXtractDeviceNames, 3, &choice, &flg));
  if (flg) set->device_choice = (MatXtractDeviceChoice)choice;
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, prefix, "-mat_matxtract_cold", MatXtractColdNames, 4, &choice, &flg));
  if (flg) set->cold_kernel = (mx_cold_kernel)choice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* matxtract_impl.h - private struct of the matxtract Mat types.
 *
 * MATSEQAIJMATXTRACT is SeqAIJ plus a "shadow" copy of the matrix in the MatXtract hot/cold format
 * (host arrays, and a device copy when a GPU is in use). AIJ stays the master copy: every op we do
 * not override runs on it unchanged. The shadow is valid iff its recorded states equal the
 * matrix's: nonzerostate (pattern) and object state (values). MatXtractSync_SeqAIJ is the one
 * function that compares them and rebuilds (pattern changed) or refreshes values (values only). */
#ifndef MATXTRACT_IMPL_H
#define MATXTRACT_IMPL_H

#include <petsc/private/matimpl.h>
#include "matxtract_compat.h"
#include <matxtract.h>
#include "core/mx_format.h"
#include "cuda/mx_device.h"

/* The AIJ ops we override, saved at conversion and called through. */
typedef struct {
  PetscErrorCode (*assemblyend)(Mat, MatAssemblyType);
  PetscErrorCode (*destroy)(Mat);
  PetscErrorCode (*duplicate)(Mat, MatDuplicateOption, Mat *);
  PetscErrorCode (*view)(Mat, PetscViewer);
  PetscErrorCode (*setfromoptions)(Mat, PetscOptionItems *);
  /* not called (ours replace them), restored when converting back to AIJ */
  PetscErrorCode (*mult)(Mat, Vec, Vec);
  PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec);
  PetscErrorCode (*multtranspose)(Mat, Vec, Vec);
  PetscErrorCode (*multtransposeadd)(Mat, Vec, Vec, Vec);
} MatXtractBaseOps;

typedef enum { MATXTRACT_DEVICE_AUTO = 0, MATXTRACT_DEVICE_CPU = 1, MATXTRACT_DEVICE_GPU = 2 } MatXtractDeviceChoice;

/* What the user chose (options or API); shared by the sequential type and the MPI type, which
 * hands it to its diagonal block. */
typedef struct {
  mx_crux               crux;
  MatXtractCruxSource   crux_source;
  mx_mode_request       mode;
  MatXtractDeviceChoice device_choice;
  mx_cold_kernel        cold_kernel;
} MatXtractSettings;

typedef struct {
  MatXtractSettings set;

  /* the shadow and the states it was built for */
  mx_format        F;
  PetscBool        built;
  PetscInt         nbuilds;       /* builds so far (one per pattern, settings change or renumbering) */
  PetscLogDouble   build_seconds; /* of the last build (upload included on the GPU) */
  PetscBool        verify_columns;      /* a block whose columns MPIAIJ may renumber in place (Ao) */
  uint64_t         columns_fingerprint; /* of the columns at the last build, when verify_columns */
  PetscObjectState state;   /* object state the values correspond to */
  PetscObjectState nzstate; /* nonzerostate the pattern corresponds to */
  int32_t         *rowptr32, *colidx32; /* 32-bit copies when PetscInt is 64-bit, else NULL */

  /* transpose shadow (crux (0,0) of A^T), built lazily on the first MatMultTranspose */
  mx_format        Ft;
  PetscBool        built_t;
  PetscObjectState state_t;

  /* device copies (NULL when running on the CPU) */
  mx_device *D, *Dt;
  PetscBool  staged_info_done; /* PetscInfo about host-vector staging printed once */

  MatXtractBaseOps base;
} Mat_MatXtract;

/* MATMPIAIJMATXTRACT: MPIAIJ whose diagonal block is a MATSEQAIJMATXTRACT with the user's
 * settings and whose off-diagonal block is one with crux (0,0) (the cold path), so that both run
 * on the GPU. The blocks are converted after every preallocation and assembly (MPIAIJ may
 * recreate them); the off-diagonal block's format is rebuilt only when its pattern or its
 * (in-place renumbered) columns changed. */
typedef struct {
  MatXtractSettings set;
  PetscErrorCode (*preallocation)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]);
  PetscErrorCode (*assemblyend)(Mat, MatAssemblyType);
  PetscErrorCode (*destroy)(Mat);
  PetscErrorCode (*duplicate)(Mat, MatDuplicateOption, Mat *);
  PetscErrorCode (*view)(Mat, PetscViewer);
  PetscErrorCode (*setfromoptions)(Mat, PetscOptionItems *);
  /* our own ghost exchange, so that the ghost vector is a device vector when the blocks run on
   * the GPU (MPIAIJ's own lvec is a host vector) */
  Vec              lvec;    /* ghost values, Ao's column space */
  VecScatter       scatter; /* global x -> lvec, built from Ao's column map */
  PetscObjectState nzstate; /* A->nonzerostate the scatter was built for */
} Mat_MPIAIJMatXtract;

PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJMatXtract(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatXtractViewInfo_SeqAIJ(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJMatXtract(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJMatXtract_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatCreate_SeqAIJMatXtract(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJMatXtract(Mat);
PETSC_INTERN PetscErrorCode MatXtractRegisterEvents(void);
PETSC_INTERN PetscErrorCode MatXtractSync_SeqAIJ(Mat);
PETSC_INTERN PetscErrorCode MatXtractSettingsDefault(MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSettingsFromOptions(Mat, PetscOptionItems *, MatXtractSettings *, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractSettingsFromDatabase(Mat, MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSettingsSetCrux(Mat, MatXtractSettings *, PetscReal, PetscReal, MatXtractCruxSource);
PETSC_INTERN PetscErrorCode MatXtractConvertBegin(Mat, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatXtractSetDefaultVecType(Mat, PetscBool);
PETSC_INTERN PetscBool      MatXtractSettingsWantDevice(const MatXtractSettings *);
PETSC_INTERN const char *const MatXtractModeNames[], *const MatXtractDeviceNames[], *const MatXtractColdNames[], *const MatXtractSourceNames[];
PETSC_INTERN PetscErrorCode MatXtractSetSettings_SeqAIJ(Mat, const MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSetVerifyColumns_SeqAIJ(Mat);

PETSC_INTERN PetscLogEvent MATXTRACT_Build, MATXTRACT_Refresh, MATXTRACT_Mult, MATXTRACT_MultT, MATXTRACT_BuildT;

#endif

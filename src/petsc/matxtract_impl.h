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
#include "core/mx_cold_pack.h"
#include "core/mx_cold_hub.h"
#include "core/mx_cold_rowpat.h"
#include "core/mx_hot_pack.h"
#include "core/mx_predictor.h"
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
  /* in-place factorizations: called after the matrix is converted back to AIJ */
  PetscErrorCode (*lufactor)(Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*ilufactor)(Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*choleskyfactor)(Mat, IS, const MatFactorInfo *);
  PetscErrorCode (*iccfactor)(Mat, IS, const MatFactorInfo *);
} MatXtractBaseOps;

typedef enum { MATXTRACT_DEVICE_AUTO = 0, MATXTRACT_DEVICE_CPU = 1, MATXTRACT_DEVICE_GPU = 2 } MatXtractDeviceChoice;

/* -mat_matxtract_upgrade: build the predicted plan at the first build (now), online once the
 * MatMults spent pay for it (auto), or never predict. */
typedef enum { MATXTRACT_UPGRADE_NOW = 0, MATXTRACT_UPGRADE_AUTO = 1, MATXTRACT_UPGRADE_NEVER = 2 } MatXtractUpgrade;

/* A model read from -mat_matxtract_model FILE, shared by every matrix whose settings name it
 * (reference counted; MatXtractModelRelease frees it with its last reference). */
typedef struct {
  mx_model M;
  PetscInt refct;
  char     path[PETSC_MAX_PATH_LEN];
} MatXtractModel;

/* What the user chose (options or API); shared by the sequential type and the MPI type, which
 * hands it to its diagonal block. Copy with MatXtractSettingsCopy (it references the model),
 * release with MatXtractSettingsDestroy. */
/* -mat_matxtract_compress: off; auto = pack the cold region where it pays: on the GPU (the packed
 * segment and merge kernels), once the MatMult time spent, saving the pack's assumed gain, would
 * have paid for packing (a short solve never pays it); not on the CPU path (its C kernel is not reliably faster there: on the 2-core dev
 * VM, minimum of 60 MatMults, lap2d:1000 4.7 vs 5.2 ms but rgg:17 1.85 vs 1.53 ms packed vs plain);
 * on = pack on the CPU too (the reference). */
typedef enum { MATXTRACT_COMPRESS_OFF = 0, MATXTRACT_COMPRESS_AUTO = 1, MATXTRACT_COMPRESS_ON = 2 } MatXtractCompressChoice;

typedef struct {
  mx_crux               crux;
  MatXtractCruxSource   crux_source; /* DEFAULT: free for the predictor; OPTION or USER: fixed */
  mx_mode_request       mode;
  PetscBool             mode_fixed;  /* -mat_matxtract_mode given */
  MatXtractDeviceChoice device_choice;
  mx_cold_kernel        cold_kernel;
  PetscBool             cold_fixed;  /* -mat_matxtract_cold given */
  PetscBool             predictor;   /* -mat_matxtract_predictor */
  MatXtractUpgrade      upgrade;
  PetscBool             guard;          /* time an upgraded plan against the previous one, keep the faster */
  PetscInt              expected_mults; /* MatMults the user expects in all; 0 = unknown */
  MatXtractModel       *model;          /* NULL: the embedded model */
  MatXtractCompressChoice compress;       /* -mat_matxtract_compress: pack the cold region (third cascade) */
  PetscInt              hub;            /* -mat_matxtract_hub: hub columns of the GPU hub split at all-cold plans (0 = off, MATXTRACT_HUB_AUTO: by the rule) */
} MatXtractSettings;

/* The plan in use for the current pattern, where its parts came from, and the state of the
 * prediction and of the online upgrade (matxtract_plan.c). Reset by every build of a new pattern
 * or new settings. */
typedef struct {
  mx_plan             plan;                 /* requested crux, hot mode, cold kernel of the format in use */
  MatXtractCruxSource src_crux, src_mode, src_cold;
  PetscBool           predicted;            /* features + prediction done for this pattern */
  PetscBool           settled;              /* nothing more to predict or try for this pattern */
  PetscBool           upgrade_tried;        /* the one upgrade attempt of this pattern was made */
  const char         *why_not;              /* why nothing (more) is predicted or tried, when settled without an upgrade */
  mx_plan             pred_plan;            /* the predicted plan (when predicted) */
  double              log_ratio_cur, log_ratio_pred; /* model outputs of the plan in use then and of the predicted one */
  mx_plan_cold        cold_pred;            /* the best cold kernel for the crux and hot mode in use (when predicted) */
  double              log_ratio_cold;       /* its model output */
  PetscBool           features_on_gpu;      /* the features were computed on the GPU */
  double              predict_nnz;          /* nonzeros they were computed on (under upgrade now: before the first build) */
  PetscBool           predict_pending;      /* the features' GPU passes are queued (MatXtractPredictStart), not yet collected */
  PetscLogDouble      predict_started;      /* host seconds of queueing them */
  PetscLogDouble      predict_seconds;      /* host seconds of features + prediction (queueing and collecting the GPU passes) */
  PetscLogDouble      t_mult;               /* GPU: seconds per MatMult of the plan in use, timed after its build (0: not timed) */
  PetscLogDouble      t_pred;               /* predicted seconds per MatMult of the predicted plan (0: none) */
  PetscLogDouble      upgrade_setup;        /* estimated seconds of the upgrade (0: none estimated) */
  PetscLogDouble      spent;                /* CPU: seconds of the CPU kernel in the MatMults on the plan in use */
  PetscInt            mults;                /* MatMults on the plan in use */
} MatXtractPlanState;

typedef struct {
  MatXtractSettings set;

  /* the shadow and the states it was built for */
  mx_format        F;
  PetscBool        built;
  PetscInt         nbuilds;       /* builds so far (one per pattern, settings change or renumbering) */
  PetscLogDouble   build_seconds; /* of the last build (upload included on the GPU) */
  PetscLogDouble   build_mult_seconds; /* per GPU MatMult of the format in use, timed by the pack guard (at a build, or at the amortised pack); 0: not timed */
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

  /* the third cascade (-mat_matxtract_compress auto): on the CPU the row-pattern form (RP) or the
   * packed form (P) of F's cold CSR and F's SE values packed (HP), which the CPU MatMult reads
   * (mx_spmv_compressed); on the GPU D holds its own (mx_device_compress). pack_note says why
   * the cold region is not packed (NULL when it is). */
  mx_cold_rowpat RP;
  PetscBool      rowpat;         /* RP holds the row-pattern form (CPU; never beside a pack) */
  PetscBool      patterns_lost;  /* CPU: the last value refresh found the row patterns no longer hold the values */
  mx_hot_pack    HP;             /* CPU, compress on: F's SE values packed (PLAIN: F's own are read) */
  PetscBool      hot_fell_back;  /* CPU: the last value refresh no longer fit HP's encoding */
  mx_cold_pack P;
  PetscBool    packed;       /* P holds a pack (CPU) */
  PetscBool    pack_pending; /* GPU, compress auto: packed once the MatMult time spent pays for it (MatXtractPackBeforeMult) */
  PetscBool    hub_pending;  /* GPU, -mat_matxtract_hub: split once the MatMult time spent pays for it (MatXtractHubBeforeMult) */
  PetscBool    rowpat_tried; /* GPU, compress auto, pack pending: the row-pattern form was tried (or will never pay) */
  const char  *pack_note;

  MatXtractPlanState plan; /* the plan in use, the prediction and the upgrade */
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
  /* MPIAIJ's products, restored when converting back to MPIAIJ */
  PetscErrorCode (*mult)(Mat, Vec, Vec);
  PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec);
  PetscErrorCode (*multtranspose)(Mat, Vec, Vec);
  PetscErrorCode (*multtransposeadd)(Mat, Vec, Vec, Vec);
  /* our own ghost exchange, so that the ghost vector is a device vector when the blocks run on
   * the GPU (MPIAIJ's own lvec is a host vector) */
  Vec              lvec;    /* ghost values, Ao's column space */
  VecScatter       scatter; /* global x -> lvec, built from Ao's column map */
  PetscObjectState nzstate; /* A->nonzerostate the scatter was built for */
} Mat_MPIAIJMatXtract;

PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJMatXtract(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_MatXtract(Mat);
PETSC_INTERN PetscErrorCode MatXtractComposeConverters(Mat, const char *, PetscBool);
PETSC_INTERN PetscErrorCode MatXtractViewInfo_SeqAIJ(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJMatXtract(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJMatXtract_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatCreate_SeqAIJMatXtract(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJMatXtract(Mat);
PETSC_INTERN PetscErrorCode MatXtractRegisterEvents(void);
PETSC_INTERN PetscErrorCode MatXtractSync_SeqAIJ(Mat);
PETSC_INTERN PetscErrorCode MatXtractSettingsDefault(MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSettingsCopy(const MatXtractSettings *, MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSettingsDestroy(MatXtractSettings *);
PETSC_INTERN PetscBool      MatXtractSettingsEqual(const MatXtractSettings *, const MatXtractSettings *);
PETSC_INTERN const mx_model *MatXtractSettingsModel(const MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractModelLoad(Mat, const char *, MatXtractModel **);
PETSC_INTERN PetscErrorCode MatXtractModelReference(MatXtractModel *);
PETSC_INTERN PetscErrorCode MatXtractModelRelease(MatXtractModel **);
PETSC_INTERN PetscErrorCode MatXtractSettingsFromOptions(Mat, PetscOptionItems *, MatXtractSettings *, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractSettingsFromDatabase(Mat, MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSettingsSetCrux(Mat, MatXtractSettings *, PetscReal, PetscReal, MatXtractCruxSource);
PETSC_INTERN PetscErrorCode MatXtractConvertBegin(Mat, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatXtractConvertSettings(Mat *, MatReuse, MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSetDefaultVecType(Mat, PetscBool);
PETSC_INTERN PetscBool      MatXtractSettingsWantDevice(const MatXtractSettings *);
PETSC_INTERN const char *const MatXtractModeNames[], *const MatXtractDeviceNames[], *const MatXtractColdNames[], *const MatXtractSourceNames[], *const MatXtractUpgradeNames[], *const MatXtractCompressNames[];
PETSC_INTERN PetscErrorCode MatXtractSetSettings_SeqAIJ(Mat, const MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSetVerifyColumns_SeqAIJ(Mat);
PETSC_INTERN PetscErrorCode MatXtractGetCSR_SeqAIJ(Mat, mx_csr *);
PETSC_INTERN PetscErrorCode MatXtractBuildPlan_SeqAIJ(Mat, const mx_plan *);
PETSC_INTERN PetscErrorCode MatXtractRepack_SeqAIJ(Mat);
/* estimated seconds of packing the GPU cold region with its guard, at t_cur seconds per MatMult */
PETSC_INTERN PetscLogDouble MatXtractPackSeconds(const Mat_MatXtract *, PetscLogDouble);

/* the plan, the prediction and the online upgrade of a sequential block (matxtract_plan.c) */
/* SpMVs timed on the GPU (median, after 2 warm-ups, CUDA events) for a plan's time per MatMult and by
 * the guards: 5 suffice where the choices differ by the 5-40% they decide on (kron:20:16 PageRank on
 * an H100: plain 289 us vs packed 266 us; 20 products of one plan there spread by < 1%), and each is
 * setup time the solve must pay back */
#define MATXTRACT_GPU_TIME_REPS 5

PETSC_INTERN PetscErrorCode MatXtractPlanFirst(Mat, mx_plan *);
PETSC_INTERN PetscErrorCode MatXtractPlanAfterBuild(Mat);
PETSC_INTERN PetscErrorCode MatXtractPlanBeforeMult(Mat);
PETSC_INTERN PetscBool      MatXtractHubInUse(const Mat_MatXtract *);
PETSC_INTERN PetscErrorCode MatXtractPlanAfterMult(Mat, PetscLogDouble);
PETSC_INTERN PetscErrorCode MatXtractPlanGetInfo(Mat, MatXtractInfo *);
PETSC_INTERN void           MatXtractPlanTimes(const Mat_MatXtract *, PetscLogDouble *, PetscLogDouble *);
PETSC_INTERN PetscErrorCode MatXtractPackNow_SeqAIJ(Mat);
PETSC_INTERN PetscErrorCode MatXtractPlanView(Mat, PetscViewer);

PETSC_INTERN PetscLogEvent MATXTRACT_Build, MATXTRACT_Refresh, MATXTRACT_Mult, MATXTRACT_MultT, MATXTRACT_BuildT;

#endif

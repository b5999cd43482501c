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
#include "core/mx_engine.h"
#include "cuda/mx_device.h"
#include "cuda/mx_halo.h"

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
 * have paid for packing (a short solve never pays it); not on the CPU path (its C kernel is not
 * reliably faster there: docs/performance.md, "Behind the source's constants");
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

/* The levers of the plan engine (matxtract_engine.c), in the order the loop weighs them. */
typedef enum {
  MATXTRACT_LEVER_PREDICT = 0, /* features + the model's plan (changes no format) */
  MATXTRACT_LEVER_COLD,        /* the predicted cold kernel for the crux and hot mode in use (GPU) */
  MATXTRACT_LEVER_REBUILD,     /* the predicted plan, built beside the one in use */
  MATXTRACT_LEVER_ROWPAT,      /* the cold region in row-pattern form (GPU, segment kernel) */
  MATXTRACT_LEVER_PACK,        /* the cold region packed (GPU) */
  MATXTRACT_LEVER_HUB,         /* the hub split of an all-cold plan (GPU) */
  MATXTRACT_NLEVERS
} MatXtractLeverId;

/* The plan in use for the current pattern, where its parts came from, and the prediction
 * (matxtract_predict.c). Reset by every build of a new pattern or new settings. */
typedef struct {
  mx_plan             plan;                 /* requested crux, hot mode, cold kernel of the format in use */
  MatXtractCruxSource src_crux, src_mode, src_cold;
  PetscBool           predicted;            /* features + prediction done for this pattern */
  mx_plan             pred_plan;            /* the predicted plan (when predicted) */
  double              log_ratio_cur, log_ratio_pred; /* model outputs of the plan in use then and of the predicted one */
  mx_plan_cold        cold_pred;            /* the best cold kernel for the crux and hot mode in use (when predicted) */
  double              log_ratio_cold;       /* its model output */
  PetscBool           features_on_gpu;      /* the features were computed on the GPU */
  double              predict_nnz;          /* nonzeros they were computed on */
  PetscBool           predict_pending;      /* the features' GPU passes are queued (MatXtractPredictStart), not yet collected */
  PetscLogDouble      predict_started;      /* host seconds of queueing them */
  PetscLogDouble      predict_seconds;      /* host seconds of features + prediction (queueing and collecting the GPU passes) */
  PetscLogDouble      t_mult;               /* seconds per MatMult of the plan in use, timed (0: not timed; the CPU's mean then) */
  PetscLogDouble      t_pred;               /* predicted seconds per MatMult of the predicted plan (0: none) */
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
  PetscBool        verify_columns;      /* a block whose columns MPIAIJ may renumber in place (Ao) */
  uint64_t         columns_fingerprint; /* of the columns at the last build, when verify_columns */
  PetscBool        lazy;          /* built at the first product, not at assembly (MatXtractSetLazy_SeqAIJ) */
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
  const char  *pack_note;

  MatXtractPlanState plan; /* the plan in use and the prediction */
  /* the plan engine: one state per lever, the table's rows as this matrix weighs them (costs that
   * depend on the matrix set by the engine), and while the rebuild lever is guarded the format it
   * would replace (kept until the guard decides) */
  mx_lever       levers[MATXTRACT_NLEVERS];
  mx_lever_row   rows[MATXTRACT_NLEVERS];
  mx_format      Fprev;
  mx_device     *Dprev;
  mx_plan        plan_prev;
  mx_cold_kernel cold_prev;  /* the cold kernel before the lever being applied (the cold kernel's, the pack's) */
  PetscBool      hub_rule_pays; /* the hub split's rule (auto) said it pays for this build's pattern */
  PetscErrorCode engine_err; /* a PETSc error raised inside a lever's callback */
  PetscInt       products;     /* A x products since the matrix was made (never reset: an MPI matrix's blocks count the
                                  same on every rank, every rank making every MatMult) */
  PetscInt       lever_period; /* > 1: the levers are weighed only before products 0, P, 2P, ... (MatXtractSetLeverPeriod_SeqAIJ) */
  size_t         bytes_free; /* free device memory, read after each build and each lever applied (cudaMemGetInfo
                                costs microseconds: not read before every product) */
  PetscBool  staged_info_done; /* PetscInfo about host-vector staging printed once */
  PetscInt   spmm_k_seen;      /* the dense column count of the last GPU SpMM (its plan is told by -info on a change) */
  int        spmm_hub_seen;    /* ... and the hub columns then (a split made or dropped: told again) */
  const char *spmm_way_seen;   /* ... and the name of the way it ran (timed again after a change of form: told again) */
  PetscBool  spmm_plain_tried; /* an SpMM under a hub split tried to bring D's plain arrays back (once: kept, or refused for memory) */

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
  /* -mat_matxtract_ghost_exchange nccl: MatMult's ghosts through NCCL between the ranks' GPUs
   * (the transposes send the ghosts' partial sums back the same way) */
  PetscInt      exchange; /* MATXTRACT_EXCHANGE_* */
  mx_halo_comm *hcomm;    /* the MPI communicator's NCCL one (matxtract_ghosts.c), borrowed */
  mx_halo      *halo;     /* the exchange of the current scatter's pattern */
  /* the rows of Ao with ghost columns (-mat_matxtract_ghost_rows): where few rows have any, they
   * alone form Aoc, whose product is added into y's local rows at rindex, bit for bit as Ao's
   * (a multiply over all of Ao's rows walks every row); Ao itself is then lazy (no
   * format of its own unless a product uses it). Made again before a product when Ao or its state
   * changed. */
  PetscInt         ghost_rows; /* MATXTRACT_GHOST_ROWS_*: the option */
  PetscInt         lever_period; /* -mat_matxtract_lever_period: the blocks' levers weighed every this many MatMults */
  PetscInt         ao_form;    /* MATXTRACT_AO_*: what the products use now */
  Mat              Aoc;        /* MATXTRACT_AO_COMPRESSED: Ao's non-empty rows, in order */
  Vec              tc;         /* Aoc's rows: y there plus Aoc x_ghost, or x there (transpose) */
  VecScatter       rows;       /* tc -> the local rows rindex */
  PetscInt        *rindex;     /* the local row of each row of Aoc */
  PetscInt         nonempty;   /* Ao's rows with ghost columns */
  Mat              ao_src;     /* the Ao, its object state and A's nonzero state ao_form matches */
  PetscObjectState ao_state, ao_nzstate;
} Mat_MPIAIJMatXtract;

typedef enum { MATXTRACT_EXCHANGE_VECSCATTER = 0, MATXTRACT_EXCHANGE_NCCL = 1 } MatXtractExchange;
typedef enum { MATXTRACT_GHOST_ROWS_AUTO = 0, MATXTRACT_GHOST_ROWS_COMPRESSED = 1, MATXTRACT_GHOST_ROWS_ALL = 2 } MatXtractGhostRows;
typedef enum { MATXTRACT_AO_ALL = 0, MATXTRACT_AO_COMPRESSED = 1, MATXTRACT_AO_NONE = 2 } MatXtractAoForm;

PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJMatXtract(Mat, MatType, MatReuse, Mat *);
/* matxtract_ghosts.c: the MPI type's ghost side */
PETSC_INTERN const char *const MatXtractExchangeNames[];
PETSC_INTERN const char *const MatXtractGhostRowsNames[];
PETSC_INTERN void              MatXtractMPIColdSettings(const MatXtractSettings *, MatXtractSettings *);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsSync(Mat);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsBegin(Mat, Vec);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsEnd(Mat, Vec);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostMultAdd(Mat, Vec);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostMultTranspose(Mat, Vec);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsReturnBegin(Mat, Vec);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsReturnEnd(Mat, Vec);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsFree(Mat);
PETSC_INTERN PetscErrorCode    MatXtractMPIGhostsView(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_MatXtract(Mat);
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_MatXtract_Dense(Mat);
PETSC_INTERN PetscErrorCode MatXtractComposeConverters(Mat, const char *, PetscBool);
PETSC_INTERN PetscErrorCode MatXtractViewInfo_SeqAIJ(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJMatXtract(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJMatXtract_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatCreate_SeqAIJMatXtract(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJMatXtract(Mat);
PETSC_INTERN PetscErrorCode MatXtractRegisterEvents(void);
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
/* matxtract_duplicate.c: MatConvert's threaded copy of a large SeqAIJ */
PETSC_INTERN PetscErrorCode MatXtractDuplicateThreaded(Mat, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractDuplicateSeqAIJ(Mat, Mat *);
PETSC_INTERN PetscErrorCode MatXtractConvertBackBegin(Mat, MatReuse, Mat *, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractConvertSettings(Mat *, MatReuse, MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSetDefaultVecType(Mat, PetscBool);
PETSC_INTERN PetscBool      MatXtractSettingsWantDevice(const MatXtractSettings *);
PETSC_INTERN const char *const MatXtractModeNames[], *const MatXtractDeviceNames[], *const MatXtractColdNames[], *const MatXtractUpgradeNames[], *const MatXtractCompressNames[];
PETSC_INTERN PetscErrorCode MatXtractSetSettings_SeqAIJ(Mat, const MatXtractSettings *);
PETSC_INTERN PetscErrorCode MatXtractSetVerifyColumns_SeqAIJ(Mat);
PETSC_INTERN PetscErrorCode MatXtractSetLazy_SeqAIJ(Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatXtractSetLeverPeriod_SeqAIJ(Mat, PetscInt);
PETSC_INTERN PetscErrorCode MatXtractOnDevice_SeqAIJ(Mat, PetscBool *);

/* -mat_matxtract_lever_period's default on several ranks: a lever waits at most this many MatMults
 * minus one for the next MatMult at which every rank weighs its levers (docs/options.md) */
#define MATXTRACT_MPI_LEVER_PERIOD 32

/* SpMVs timed on the GPU (median, after 2 warm-ups, CUDA events) for a plan's time per MatMult and by
 * the guard: 5 suffice where the choices differ by the 5-40% they decide on (docs/performance.md,
 * "Guard timings"), and each is setup time the solve must pay back */
#define MATXTRACT_GPU_TIME_REPS 5
/* SpMVs timed on the CPU by the guard (median) */
#define MATXTRACT_TIME_REPS 10
/* the k MatXtractGetInfo plans an SpMM for (its fields do not depend on k) */
#define MATXTRACT_SPMM_VIEW_K 8

/* the shadow (matxtract_shadow.c): build, refresh, free, compress, split, time, apply; no decisions */
PETSC_INTERN PetscErrorCode MatXtractCheckStatus(Mat, mx_status, const char *);
PETSC_INTERN PetscErrorCode MatXtractCheckDevice(Mat, int, const char *);
PETSC_INTERN PetscErrorCode MatXtractGetCSR_SeqAIJ(Mat, mx_csr *);
PETSC_INTERN PetscErrorCode MatXtractShadowFree(Mat_MatXtract *);
PETSC_INTERN void           MatXtractShadowFreeFormats(Mat_MatXtract *);
PETSC_INTERN PetscErrorCode MatXtractShadowBuildInto(Mat, const mx_plan *, PetscBool, mx_format *, mx_device **);
PETSC_INTERN PetscErrorCode MatXtractShadowBuild(Mat, const mx_plan *);
PETSC_INTERN PetscErrorCode MatXtractShadowColumnsChanged(Mat, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractShadowRefresh(Mat);
PETSC_INTERN PetscErrorCode MatXtractShadowCompress(Mat, const mx_pack_request *, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractShadowUncompress(Mat);
PETSC_INTERN PetscErrorCode MatXtractShadowHub(Mat, int, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractShadowReleasePlain(Mat);
PETSC_INTERN PetscErrorCode MatXtractShadowReleasePackPlain(Mat);
PETSC_INTERN PetscErrorCode MatXtractShadowApplyDenseCPU(Mat, PetscBool, Mat, Mat);
PETSC_INTERN PetscErrorCode MatXtractShadowApplyDenseGPU(Mat, PetscBool, Mat, Mat);
PETSC_INTERN int            MatXtractShadowHubColumns(const Mat_MatXtract *);
PETSC_INTERN PetscErrorCode MatXtractShadowTime(Mat, PetscLogDouble *);
PETSC_INTERN PetscErrorCode MatXtractShadowSyncTranspose(Mat);
PETSC_INTERN PetscErrorCode MatXtractShadowApply(Mat, PetscBool, Vec, Vec, Vec, PetscLogDouble *);
PETSC_INTERN PetscBool      MatXtractPackActive(const Mat_MatXtract *);
PETSC_INTERN PetscBool      MatXtractHubInUse(const Mat_MatXtract *);
PETSC_INTERN PetscBool      MatXtractPackInUse(const Mat_MatXtract *);

/* the prediction (matxtract_predict.c): features + the model, for the engine */
PETSC_INTERN PetscBool      MatXtractCruxFixed(const MatXtractSettings *);
PETSC_INTERN PetscBool      MatXtractPlanSameFormat(const mx_plan *, const mx_plan *, PetscBool);
PETSC_INTERN PetscBool      MatXtractPlanHasAlternative(const mx_model *, const MatXtractSettings *, const mx_plan *, PetscBool);
PETSC_INTERN PetscLogDouble MatXtractPredictCostNow(const mx_model *, const Mat_MatXtract *);
PETSC_INTERN double         MatXtractPredictGain(const Mat_MatXtract *);
PETSC_INTERN PetscErrorCode MatXtractPredictStart(Mat);
PETSC_INTERN PetscErrorCode MatXtractPredictCollect(Mat, PetscBool *);
PETSC_INTERN PetscErrorCode MatXtractPredictNow(Mat);

/* the plan engine (matxtract_engine.c) */
PETSC_INTERN PetscErrorCode MatXtractSync_SeqAIJ(Mat);
PETSC_INTERN PetscErrorCode MatXtractEngineBeforeMult(Mat);
PETSC_INTERN PetscErrorCode MatXtractEngineAfterMult(Mat, PetscLogDouble);
PETSC_INTERN void           MatXtractPlanTimes(const Mat_MatXtract *, PetscLogDouble *, PetscLogDouble *);
PETSC_INTERN PetscBool      MatXtractPlanSettled(const Mat_MatXtract *);

/* viewing (matxtract_view.c) */
PETSC_INTERN PetscErrorCode MatXtractGetInfo_SeqAIJ(Mat, MatXtractInfo *);

PETSC_INTERN PetscLogEvent MATXTRACT_Build, MATXTRACT_Refresh, MATXTRACT_Mult, MATXTRACT_MultT, MATXTRACT_BuildT, MATXTRACT_Copy, MATXTRACT_MultDense;

#endif

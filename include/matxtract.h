/* matxtract.h - public API of MatXtract: a PETSc Mat type ("matxtract") whose MatMult runs on the
 * MatXtract hot/cold format (tensor cores for the hot block, CUDA cores for the cold rest).
 *
 * Most programs need none of this: `-mat_type matxtract` (plus `-dll_append libmatxtract.so` for a
 * program not linked against the library) is enough. Programs that link the library call
 * MatXtractRegister() once after PetscInitialize(). */
#ifndef MATXTRACT_H
#define MATXTRACT_H

#include <petscmat.h>

#define MATMATXTRACT       "matxtract"
#define MATSEQAIJMATXTRACT "seqaijmatxtract"
#define MATMPIAIJMATXTRACT "mpiaijmatxtract"

/* On an mpiaijmatxtract matrix whose products run only the off-diagonal block's rows with ghost
 * columns (-mat_matxtract_ghost_rows), those rows as a seqaijmatxtract matrix are composed under
 * this name (PetscObjectQuery; MatXtractGetInfo tells its format); nothing is composed otherwise. */
#define MATXTRACT_GHOST_ROWS_KEY "MatXtractGhostRows"

/* -mat_matxtract_hub auto (the default): the hub split where its rule says it pays */
#define MATXTRACT_HUB_AUTO (-1)

/* Where a part of the plan in use (crux, hot mode, cold kernel) came from:
 *   DEFAULT   nothing chose it: crux (0,0), hot mode auto, cold kernel auto
 *   OPTION    -mat_matxtract_crux / _mode / _cold (the predictor never overrides it)
 *   USER      MatXtractSetCrux (the predictor never overrides it)
 *   PREDICTOR predicted and built at the first build (-mat_matxtract_upgrade now)
 *   UPGRADE   predicted, built online once the MatMults spent paid for it (-mat_matxtract_upgrade
 *             auto), and faster than the previous plan when timed against it (the guard)
 *   GUARD     an upgrade was tried and timed slower than the previous plan: the previous was kept */
typedef enum {
  MATXTRACT_CRUX_DEFAULT   = 0,
  MATXTRACT_CRUX_OPTION    = 1,
  MATXTRACT_CRUX_USER      = 2,
  MATXTRACT_CRUX_PREDICTOR = 3,
  MATXTRACT_CRUX_UPGRADE   = 4,
  MATXTRACT_CRUX_GUARD     = 5
} MatXtractCruxSource;

/* What the format of a matxtract matrix looks like (the local diagonal block under MPI). */
typedef struct {
  PetscReal           tau_c, tau_r;   /* crux in use */
  MatXtractCruxSource crux_source;
  PetscInt            hot_rows, hot_cols, hot_nnz, cold_nnz;
  const char         *hot_mode;       /* "none", "du" or "se" */
  size_t              format_bytes;   /* host bytes of the format's SpMV arrays */
  size_t              csr_bytes;      /* bytes of plain CSR of the same block */
  size_t              device_bytes;   /* 0 when the matrix runs on the CPU */
  size_t              build_peak_bytes; /* most device bytes held while building on the GPU (0 on the CPU) */
  PetscLogDouble      build_seconds;  /* the last build (the upload included on the GPU) */
  PetscInt            builds;         /* builds of the format so far (new pattern, settings or upgrade) */
  PetscBool           on_device;      /* MatMult runs on the GPU */
  /* the plan and the predictor */
  MatXtractCruxSource mode_source, cold_source; /* where the requested hot mode and cold kernel came from */
  const char         *hot_mode_requested;       /* "auto", "du" or "se" */
  const char         *cold_kernel;              /* "segment", "merge" or "cusparse" on the GPU, "cpu" on the CPU */
  PetscBool           predicted;      /* features and prediction computed for this pattern */
  PetscReal           pred_tau_c, pred_tau_r; /* the predicted plan's crux (when predicted) */
  const char         *pred_hot_mode, *pred_cold_kernel; /* the predicted plan's requests (when predicted) */
  PetscBool           upgrade_tried;  /* an online upgrade was built for this pattern (kept or not) */
  PetscLogDouble      mult_seconds;   /* measured seconds per MatMult of the plan in use (0: not yet) */
  PetscLogDouble      mult_seconds_predicted; /* predicted seconds per MatMult of the predicted plan (0: none) */
  PetscInt            mults;          /* MatMults on the plan in use so far */
  const char         *model_trained_on; /* what the model in use was trained on */
  PetscBool           plan_settled;   /* nothing more will be predicted, switched or upgraded for this pattern */
  PetscBool           features_on_gpu; /* the features were computed on the GPU (when predicted) */
  PetscLogDouble      predict_seconds; /* host seconds of features + prediction (when predicted; on the GPU: queueing
                                          the feature passes and collecting them, which ran meanwhile) */
  PetscBool           predict_pending; /* the feature passes run on the GPU; a later MatMult collects them */
  /* the third cascade (-mat_matxtract_compress): lossless packing of the cold region */
  const char         *compress;         /* the request: "auto", "on" or "off" */
  PetscBool           compress_packed;  /* the cold region is stored packed (a value or column encoding other than plain) */
  PetscBool           compress_in_use;  /* packed and MatMult reads the pack (GPU: only the segment cold kernel does) */
  const char         *compress_values;  /* "plain", "dict0", "dict8", "dict16" or "colconst" */
  const char         *compress_columns; /* "plain", "delta8" or "delta16" */
  const char         *compress_rows;    /* row pointers: "plain" or "off16" (16-bit offsets per 64 rows) */
  PetscInt            compress_dict;    /* dictionary entries (dict*) or column constants (colconst) */
  PetscBool           compress_fell_back; /* the last value refresh no longer fit the value encoding: plain values */
  PetscInt            compress_row_patterns; /* > 0: the cold region is in row-pattern form (GPU): each row the 1- or
                                                2-byte id of one of this many patterns (columns relative to the row and
                                                values); the encodings above are then plain */
  PetscInt            compress_pattern_entries; /* entries of those patterns together */
  PetscBool           compress_patterns_lost; /* the last value refresh found the patterns no longer hold the values */
  const char         *compress_hot_values; /* GPU, SE hot mode: the hot slots' values "plain", "dict0" (one value) or
                                              "colconst" (one per column): the SE kernel then reads 4 bytes per slot */
  double              hot_bytes_per_slot;  /* what the SE kernel moves per slot (12 plain; 0 without an SE hot region) */
  const char         *compress_note;    /* why the cold region is not packed ("compression off", "not packed (x-hot)", ...); NULL when packed */
  double              packed_bytes_per_nnz; /* bytes of the packed cold region per cold nonzero (row pointers included; = plain when not packed) */
  double              plain_bytes_per_nnz;  /* the same cold region as plain CSR (12 + row pointers) */
  /* the hub split (-mat_matxtract_hub, GPU, all-cold plans) */
  PetscInt            hub_requested;    /* the option's hub columns (0: off; MATXTRACT_HUB_AUTO: auto, the default) */
  PetscInt            hub_columns;      /* hub columns of the split in use (0: none) */
  PetscInt64          hub_nnz;          /* nonzeros in them */
  /* products with k dense columns (MatMatMult, MatTransposeMatMult with a dense B), A B's plan */
  PetscInt            spmm_min_k;       /* GPU: the smallest k for which the SpMM kernels run (0: none up to 2^20
                                           columns: one MatMult-like SpMV per column); CPU: 1 (the host SpMM) */
  PetscInt            spmm_lanes_per_row; /* GPU SpMM cold kernel: lanes per row (0 on the CPU) */
  PetscBool           spmm_hot_tensor_cores; /* GPU SpMM: the hot region (DU) runs on the FP64 tensor cores */
} MatXtractInfo;

/* Register the Mat types (idempotent). Called by PetscDLLibraryRegister_matxtract too. */
PETSC_EXTERN PetscErrorCode MatXtractRegister(void);

/* Fix the crux of A (0 <= tau_r <= tau_c <= 1); takes effect at the next assembly or MatMult. */
PETSC_EXTERN PetscErrorCode MatXtractSetCrux(Mat A, PetscReal tau_c, PetscReal tau_r);
PETSC_EXTERN PetscErrorCode MatXtractGetInfo(Mat A, MatXtractInfo *info);
/* One word for where a plan part came from: "default", "option", "user", "predictor", "upgrade",
 * "guard" ("unknown" outside the enum). */
PETSC_EXTERN const char *MatXtractCruxSourceName(MatXtractCruxSource source);

/* Matrix input for examples and users: a Matrix Market file (.mtx) or a PETSc binary file (any
 * other name but a compressed one: .gz, .bz2, .xz and .zst files are refused with a clear error), or a generator spec ("kron:18:16", "lap2d:1000", ...; see MatXtractGenerateHelp).
 * The Mat gets its type from the options database (MatSetFromOptions), prefix `prefix` (may be
 * NULL), so -mat_type matxtract|aij|aijcusparse works. Rows are split across the ranks of comm. */
PETSC_EXTERN PetscErrorCode MatXtractLoad(MPI_Comm comm, const char *path, const char *prefix, Mat *A);
PETSC_EXTERN PetscErrorCode MatXtractGenerate(MPI_Comm comm, const char *spec, const char *prefix, Mat *A);
/* The same with the generator's seed (>= 0; 0 = the family's default, what MatXtractGenerate uses). */
PETSC_EXTERN PetscErrorCode MatXtractGenerateSeeded(MPI_Comm comm, const char *spec, PetscInt seed, const char *prefix, Mat *A);
PETSC_EXTERN const char    *MatXtractGenerateHelp(void);

/* -f FILE or -gen SPEC from the options database (prefix may be NULL); error if neither. */
PETSC_EXTERN PetscErrorCode MatXtractCreateFromOptions(MPI_Comm comm, const char *prefix, Mat *A);

#endif

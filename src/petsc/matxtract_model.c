/* matxtract_model.c - plan models read from -mat_matxtract_model FILE: read once per process and
 * path (the last one read stays cached until PetscFinalize, so that the blocks of an MPI matrix and
 * its duplicates do not read it again), shared by reference count between the settings naming it. */
#include "matxtract_impl.h"

static MatXtractModel *model_cache           = NULL;
static PetscBool       model_cache_finalizer = PETSC_FALSE;

/* At PetscFinalize: drop the cache's reference. */
static PetscErrorCode MatXtractModelCacheClear(void)
{
  PetscFunctionBegin;
  PetscCall(MatXtractModelRelease(&model_cache));
  model_cache_finalizer = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cache holds m (one reference) instead of what it held. */
static PetscErrorCode MatXtractModelCacheSet(MatXtractModel *m)
{
  PetscFunctionBegin;
  if (!model_cache_finalizer) PetscCall(PetscRegisterFinalize(MatXtractModelCacheClear));
  model_cache_finalizer = PETSC_TRUE;
  PetscCall(MatXtractModelRelease(&model_cache));
  PetscCall(MatXtractModelReference(m));
  model_cache = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractModelReference(MatXtractModel *m)
{
  PetscFunctionBegin;
  if (m) m->refct++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Drop one reference to *m (freeing the model with the last one); *m = NULL. */
PetscErrorCode MatXtractModelRelease(MatXtractModel **m)
{
  PetscFunctionBegin;
  if (*m && --(*m)->refct == 0) {
    mx_model_free(&(*m)->M);
    PetscCall(PetscFree(*m));
  }
  *m = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *m = the model in file `path` (a new reference). A file that cannot be read or is not a valid
 * model is a PETSc error quoting the loader's "FILE:LINE: what is wrong". */
PetscErrorCode MatXtractModelLoad(Mat A, const char *path, MatXtractModel **m)
{
  char            err[PETSC_MAX_PATH_LEN + 256] = "";
  mx_model_status st;
  PetscBool       same = PETSC_FALSE;
  PetscErrorCode  code;

  PetscFunctionBegin;
  *m = NULL;
  if (model_cache) PetscCall(PetscStrcmp(model_cache->path, path, &same));
  if (same) {
    PetscCall(MatXtractModelReference(model_cache));
    *m = model_cache;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(m));
  st = mx_model_read(path, &(*m)->M, err, sizeof err);
  if (st != MX_MODEL_OK) {
    PetscCall(PetscFree(*m));
    code = st == MX_MODEL_ERR_IO ? PETSC_ERR_FILE_OPEN : st == MX_MODEL_ERR_MEM ? PETSC_ERR_MEM : PETSC_ERR_FILE_UNEXPECTED;
    SETERRQ(PetscObjectComm((PetscObject)A), code, "matxtract: -mat_matxtract_model %s is not a usable plan model (%s): %s", path, mx_model_status_name(st), err);
  }
  (*m)->refct = 1;
  PetscCall(PetscStrncpy((*m)->path, path, sizeof (*m)->path));
  PetscCall(MatXtractModelCacheSet(*m));
  PetscCall(PetscInfo(A, "matxtract: read plan model %s (trained on %s): %d trees, %d nodes, %d candidate plans\n", path, (*m)->M.trained_on, (int)(*m)->M.ntrees, (int)(*m)->M.nnodes, (int)(*m)->M.ncandidates));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* matxtract_shadow.c - the shadow of a sequential block: the MatXtract format of its AIJ arrays (host
 * arrays, and a device copy when a GPU is in use) built, refreshed, compressed, split, timed, applied
 * and freed. Mechanisms only: what to build and when is the plan engine's (matxtract_engine.c).
 * PetscScalar is real double in every build that gets past the conversion from AIJ (others
 * are refused there with a clear error), hence the double views of PETSc's arrays below. */
#include "matxtract_impl.h"
#include <petscdevice.h>

#if defined(PETSC_HAVE_CUDA) && defined(MATXTRACT_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
  #include <petscdevice_cuda.h>
  #define MATXTRACT_PETSC_STREAM 1
#endif


/* mx_status -> PETSc error, with what a user needs to act on it. */
PetscErrorCode MatXtractCheckStatus(Mat A, mx_status s, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(s != MX_ERR_OVERFLOW, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "matxtract: %s: the local block (%" PetscInt_FMT " x %" PetscInt_FMT ") has more rows, columns or nonzeros than 32-bit format indices hold; use more MPI ranks or -mat_type aij", what, A->rmap->n, A->cmap->n);
  PetscCheck(s != MX_ERR_MEM, PetscObjectComm((PetscObject)A), PETSC_ERR_MEM, "matxtract: %s: out of host memory", what);
  PetscCheck(s == MX_OK, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "matxtract: %s: invalid argument (crux must satisfy 0 <= tau_r <= tau_c <= 1)", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractCheckDevice(Mat A, int err, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(!err, PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: %s failed on the GPU: %s", what, mx_device_last_error());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSR view of the AIJ arrays; 64-bit PetscInt indices are copied to 32-bit (checked). */
PetscErrorCode MatXtractGetCSR_SeqAIJ(Mat A, mx_csr *csr)
{
  Mat_MatXtract  *x = (Mat_MatXtract *)A->spptr;
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;
  const PetscScalar *aa;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed");
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  PetscCheck(n <= INT32_MAX && A->cmap->n <= INT32_MAX && ia[n] <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "matxtract: the local block has %" PetscInt_FMT " columns and %" PetscInt_FMT " nonzeros; the format holds at most 2^31-1 of each; use more MPI ranks or -mat_type aij", A->cmap->n, ia[n]);
  csr->nrows = (int32_t)n;
  csr->ncols = (int32_t)A->cmap->n;
  csr->val   = (const double *)aa;
#if defined(PETSC_USE_64BIT_INDICES)
  /* made once per pattern: a rebuild (new pattern) drops them in MatXtractFreeShadow together with
   * F, which may borrow them (mx_format_build_borrow); the transpose build after it reuses them */
  if (!x->rowptr32) {
    PetscCall(PetscMalloc1(n + 1, &x->rowptr32)); /* two allocations: MatXtractFreeShadow frees each */
    PetscCall(PetscMalloc1(ia[n], &x->colidx32));
    for (PetscInt i = 0; i <= n; i++) x->rowptr32[i] = (int32_t)ia[i];
    for (PetscInt k = 0; k < ia[n]; k++) x->colidx32[k] = (int32_t)ja[k];
  }
  csr->rowptr = x->rowptr32;
  csr->colidx = x->colidx32;
#else
  (void)x;
  csr->rowptr = ia;
  csr->colidx = ja;
#endif
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stream PETSc's own vector operations use, so our kernels stay ordered with them (the
 * default stream when PETSc has no CUDA or predates PetscGetCurrentCUDAStream). */
static void *MatXtractStream(void)
{
#if defined(MATXTRACT_PETSC_STREAM)
  cudaStream_t stream = NULL;
  if (PetscGetCurrentCUDAStream(&stream)) stream = NULL;
  return (void *)stream;
#else
  return NULL;
#endif
}

/* Drop the formats (host and device, A and A^T); the 32-bit index copies stay (same pattern). */
void MatXtractShadowFreeFormats(Mat_MatXtract *x)
{
  mx_device_free(x->Dprev); /* a rebuild's previous format (only while its guard decides) */
  mx_format_free(&x->Fprev);
  x->Dprev = NULL;
  mx_device_free(x->D);
  mx_device_free(x->Dt);
  x->D  = NULL;
  x->Dt = NULL;
  mx_format_free(&x->F);
  mx_format_free(&x->Ft);
  mx_cold_pack_free(&x->P);
  mx_cold_rowpat_free(&x->RP);
  mx_hot_pack_free(&x->HP);
  x->hot_fell_back = PETSC_FALSE;
  x->packed        = PETSC_FALSE;
  x->rowpat        = PETSC_FALSE;
  x->patterns_lost = PETSC_FALSE;
  x->pack_note    = NULL;
  x->built        = PETSC_FALSE;
  x->built_t      = PETSC_FALSE;
}

/* Whether the CPU MatMult reads the host pack: one with a packed part (values or columns); a pack
 * whose values fell back to plain and whose columns are plain reads like F's plain cold CSR. */
PetscBool MatXtractPackActive(const Mat_MatXtract *x)
{
  return (PetscBool)(x->packed && (x->P.val_enc != MX_VAL_PLAIN || x->P.idx_enc != MX_IDX_PLAIN));
}

/* F's SE values packed on the host (compress on, CPU MatMult): one value or column constants where
 * they hold (mx_hot_pack_build), else plain; out of host memory leaves them plain (-info says so). */
static PetscErrorCode MatXtractCompressHostHot(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (mx_hot_pack_build(&x->F, &x->HP) == MX_ERR_MEM) PetscCall(PetscInfo(A, "matxtract: packing the SE hot values: out of host memory: they stay plain\n"));
  else if (x->HP.enc != MX_VAL_PLAIN) PetscCall(PetscInfo(A, "matxtract: SE hot region values packed: %s, %zu bytes vs %zu plain\n", mx_val_enc_name(x->HP.enc), mx_hot_pack_bytes(&x->F, &x->HP), (size_t)12 * (size_t)x->F.se_nslots));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cold half of the third cascade on the host (compress on, CPU MatMult): F's cold CSR in
 * row-pattern form where it holds it in fewer bytes than any pack could (mx_pack_bytes_floor), else
 * packed by exact bytes (or left plain). Never fatal: out of host memory leaves the cold region
 * plain (pack_note says so). */
static PetscErrorCode MatXtractCompressHostCold(Mat A)
{
  Mat_MatXtract        *x   = (Mat_MatXtract *)A->spptr;
  const mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);
  mx_csr                C   = {x->F.nrows, x->F.ncols, x->F.cold_rowptr, x->F.cold_col, x->F.cold_val};
  mx_status             st;

  PetscFunctionBegin;
  st = mx_cold_rowpat_build(&C, &x->RP);
  if (st == MX_OK && mx_rowpat_pays(x->RP.nrows, x->RP.nnz, x->RP.npat, x->RP.nent)) {
    x->rowpat = PETSC_TRUE;
    PetscCall(PetscInfo(A, "matxtract: cold region in row-pattern form: %d patterns, %d entries, %d-byte ids, %zu bytes vs %zu plain\n", (int)x->RP.npat, (int)x->RP.nent, x->RP.id_bytes, mx_cold_rowpat_bytes(&x->RP), mx_csr_bytes(x->F.nrows, x->F.cold_nnz)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  mx_cold_rowpat_free(&x->RP); /* it cannot hold the cold CSR (MX_ERR_ARG), or does not pay: the pack */
  if (st != MX_ERR_MEM) st = mx_cold_pack_build(&C, &req, &x->P);
  if (st == MX_ERR_MEM) {
    PetscCall(PetscInfo(A, "matxtract: packing the cold region: out of host memory: it stays plain\n"));
    x->pack_note = "not packed (out of host memory)";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatXtractCheckStatus(A, st, "packing the cold region"));
  x->packed = PETSC_TRUE;
  if (!MatXtractPackActive(x)) { /* nothing to gain: no copy kept, F's plain cold CSR is read */
    mx_cold_pack_free(&x->P);
    x->packed    = PETSC_FALSE;
    x->pack_note = "not packed (plain is smallest)";
  } else PetscCall(PetscInfo(A, "matxtract: cold region packed: values %s, columns %s, row pointers %s, %zu bytes vs %zu plain\n", mx_val_enc_name(x->P.val_enc), mx_idx_enc_name(x->P.idx_enc), mx_row_enc_name(x->P.row_enc), mx_cold_pack_bytes(&x->P), mx_csr_bytes(x->F.nrows, x->F.cold_nnz)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Drop everything made for the current pattern. */
PetscErrorCode MatXtractShadowFree(Mat_MatXtract *x)
{
  PetscFunctionBegin;
  MatXtractShadowFreeFormats(x);
  PetscCall(PetscFree(x->rowptr32));
  PetscCall(PetscFree(x->colidx32));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether this matrix's products run on the GPU: -mat_matxtract_device gpu without a usable GPU
 * is an error, auto without one is the CPU path. */
static PetscErrorCode MatXtractUseDevice(Mat A, PetscBool *use)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  *use = MatXtractSettingsWantDevice(&x->set);
  PetscCheck(*use || x->set.device_choice != MATXTRACT_DEVICE_GPU, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "matxtract: -mat_matxtract_device gpu, but no GPU is usable (%s)", mx_device_count() ? "" : "this build has no CUDA or no device is visible");
#if defined(PETSC_HAVE_CUDA)
  if (*use) PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA)); /* PETSc picks this rank's GPU (by local rank) before we allocate */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The format of csr at plan p (crux, hot mode, cold kernel) built on the GPU (mx_device_build: csr
 * is uploaded once and every build step runs there) into *D, its counts into *F. A GPU failure
 * (e.g. out of device memory: the message names the bytes) is an error under -mat_matxtract_device
 * gpu; under auto the matrix stays on the CPU path (*D NULL, AIJ untouched) and -info says why. */
static PetscErrorCode MatXtractBuildOnDevice(Mat A, const mx_csr *csr, const mx_plan *p, mx_format *F, mx_device **D)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (!mx_device_build(csr, p->crux, p->mode, (mx_cold_kernel)p->cold, MX_XHOT_AUTO, F, D)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(x->set.device_choice != MATXTRACT_DEVICE_GPU, PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: building the format on the GPU failed (-mat_matxtract_device gpu): %s", mx_device_last_error());
  PetscCall(PetscInfo(A, "matxtract: building the format on the GPU failed (%s); MatMult runs the CPU kernels (-mat_matxtract_device auto)\n", mx_device_last_error()));
  *D = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 64-bit FNV-1a of A's column indices (the live AIJ arrays): tells a block whose columns MPIAIJ
 * renumbered in place. */
static PetscErrorCode MatXtractColumnFingerprint(Mat A, uint64_t *fp)
{
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;
  uint64_t        h = 1469598103934665603ull;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: MatGetRowIJ failed");
  for (PetscInt k = 0; k < ia[n]; k++) h = (h ^ (uint64_t)ja[k]) * 1099511628211ull;
  *fp = h ^ (uint64_t)A->cmap->n;
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The hub columns the split asks for: -mat_matxtract_hub K, or MX_HUB_MAX_COLS under auto. */
int MatXtractShadowHubColumns(const Mat_MatXtract *x)
{
  return x->set.hub == MATXTRACT_HUB_AUTO ? MX_HUB_MAX_COLS : (int)x->set.hub;
}

/* The hub split (mx_device_hub) of A's CSR with K hub columns, the matrix D holds (K = 0: no split,
 * D's whole-matrix product again): *made tells whether a split was made. A failure leaves D's
 * whole-matrix product; -info says why. */
PetscErrorCode MatXtractShadowHub(Mat A, int K, PetscBool *made)
{
  Mat_MatXtract *x    = (Mat_MatXtract *)A->spptr;
  int            k    = 0;
  int64_t        hnnz = 0;
  mx_csr         csr;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  PetscCall(PetscTime(&t0));
  *made = (PetscBool)!mx_device_hub(x->D, &csr, K);
  if (!*made) {
    PetscCall(PetscInfo(A, "matxtract: the hub split failed (%s): the cold kernel runs the whole matrix\n", mx_device_last_error()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (K == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "building the hub split")); /* its time, for -info */
  PetscCall(PetscTime(&t1));
  mx_device_hub_info(x->D, &k, &hnnz);
  PetscCall(PetscInfo(A, "matxtract: hub split: %d hub columns hold %lld of %d nonzeros (built in %g s)\n", k, (long long)hnnz, (int)csr.rowptr[csr.nrows], (double)(t1 - t0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The format of plan p for the current pattern and values into *F, *D (x's formats untouched): on the
 * GPU when one is in use (*D; a GPU failure under -mat_matxtract_device auto leaves *D NULL and, with
 * host_fallback, the format built on the host instead; without, *F empty), else on the host (where at
 * a crux without hot nonzeros, the default (0,0), F's cold CSR is A's own arrays, or the 32-bit index
 * copies, which live as long as the pattern: no copy). */
PetscErrorCode MatXtractShadowBuildInto(Mat A, const mx_plan *p, PetscBool host_fallback, mx_format *F, mx_device **D)
{
  mx_csr    csr;
  PetscBool use_device;

  PetscFunctionBegin;
  *D = NULL;
  PetscCall(MatXtractUseDevice(A, &use_device));
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  PetscCall(PetscInfo(A, "matxtract: building crux (%g,%g) of %d x %d, %d nonzeros on the %s\n", p->crux.tau_c, p->crux.tau_r, (int)csr.nrows, (int)csr.ncols, (int)csr.rowptr[csr.nrows], use_device ? "GPU" : "CPU"));
  if (use_device) PetscCall(MatXtractBuildOnDevice(A, &csr, p, F, D));
  if (use_device && !*D && !host_fallback) PetscFunctionReturn(PETSC_SUCCESS);
  if (!*D) PetscCall(MatXtractCheckStatus(A, mx_format_build_borrow(&csr, p->crux, p->mode, F), "building the format"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x's format at plan p (the formats in use dropped first), its build time and count. */
PetscErrorCode MatXtractShadowBuild(Mat A, const mx_plan *p)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  MatXtractShadowFreeFormats(x);
  PetscCall(PetscLogEventBegin(MATXTRACT_Build, A, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(MatXtractShadowBuildInto(A, p, PETSC_TRUE, &x->F, &x->D));
  if (MatXtractSettingsWantDevice(&x->set)) PetscCall(MatXtractSetDefaultVecType(A, (PetscBool)(x->D != NULL))); /* the CPU fallback: host vectors */
  PetscCall(PetscTime(&t1));
  PetscCall(PetscLogEventEnd(MATXTRACT_Build, A, 0, 0, 0));
  x->build_seconds = t1 - t0;
  x->nbuilds++;
  if (x->verify_columns) PetscCall(MatXtractColumnFingerprint(A, &x->columns_fingerprint));
  PetscCall(PetscInfo(A, "matxtract: built crux (%g,%g) on the %s in %g s: hot %d x %d, hot nnz %d, cold nnz %d\n", x->F.crux.tau_c, x->F.crux.tau_r, x->D ? "GPU" : "CPU", (double)x->build_seconds, (int)x->F.hot_nrows, (int)x->F.hot_ncols, (int)x->F.hot_nnz, (int)x->F.cold_nnz));
  x->built = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block whose columns MPIAIJ may renumber in place (verify_columns): whether they changed since
 * the build (a value-only state change must then rebuild). */
PetscErrorCode MatXtractShadowColumnsChanged(Mat A, PetscBool *changed)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  uint64_t       fp;

  PetscFunctionBegin;
  *changed = PETSC_FALSE;
  if (!x->verify_columns) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractColumnFingerprint(A, &fp));
  *changed = (PetscBool)(fp != x->columns_fingerprint);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a value refresh of a packed cold region (re-encoded on the GPU by mx_device_refresh_values,
 * on the host by mx_cold_pack_refresh): -info says when the new values no longer fit the value
 * encoding (plain values now, never a wrong product) or when they pack again. */
static PetscErrorCode MatXtractReportRepack(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  mx_val_enc     prev, now;
  int            fell_back;

  PetscFunctionBegin;
  if (x->D) {
    mx_device_pack_info pi;
    if (x->set.compress == MATXTRACT_COMPRESS_OFF || mx_device_compress_info(x->D, &pi)) PetscFunctionReturn(PETSC_SUCCESS);
    if (pi.rowpat_lost) PetscCall(PetscInfo(A, "matxtract: the new values no longer fit the row patterns: %s\n", pi.packed ? "packed" : "plain"));
    if (pi.hot_fell_back) PetscCall(PetscInfo(A, "matxtract: the new values no longer fit the SE hot values' %s encoding: plain values\n", mx_val_enc_name(pi.hot_prev_val_enc)));
    if (!pi.packed && !pi.fell_back) PetscFunctionReturn(PETSC_SUCCESS);
    prev = pi.prev_val_enc, now = pi.val_enc, fell_back = pi.fell_back;
  } else {
    if (x->patterns_lost) PetscCall(PetscInfo(A, "matxtract: the new values no longer fit the row patterns: %s\n", x->packed ? "packed" : "plain"));
    if (x->hot_fell_back) PetscCall(PetscInfo(A, "matxtract: the new values no longer fit the SE hot values' packed encoding: plain values\n"));
    if (!x->packed) PetscFunctionReturn(PETSC_SUCCESS);
    prev = x->P.prev_val_enc, now = x->P.val_enc, fell_back = x->P.fell_back;
  }
  if (fell_back) PetscCall(PetscInfo(A, "matxtract: the new values no longer fit the %s value encoding: plain values\n", mx_val_enc_name(prev)));
  else if (prev != now) PetscCall(PetscInfo(A, "matxtract: the new values are packed as %s (were %s)\n", mx_val_enc_name(now), mx_val_enc_name(prev)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Same pattern, new values: refresh through the gather map, on the device when MatMult runs
 * there (the host copy of the values is then unused: host-vector products are staged through the
 * device too), else on the host. */
PetscErrorCode MatXtractShadowRefresh(Mat A)
{
  Mat_MatXtract     *x = (Mat_MatXtract *)A->spptr;
  const PetscScalar *aa;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MATXTRACT_Refresh, A, 0, 0, 0));
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  if (x->D) {
    const PetscBool split    = MatXtractHubInUse(x); /* before the refresh, which drops it */
    const PetscBool released = (PetscBool)mx_device_hub_plain_released(x->D);
    PetscBool       made;
    if (released) { /* the split ran the products alone: the plain columns back for the refresh and the new split */
      mx_csr csr;
      PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
      csr.val = NULL; /* the values are allocated only: the refresh writes them */
      PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
      PetscCall(MatXtractCheckDevice(A, mx_device_hub_restore_plain(x->D, &csr), "restoring the plain cold CSR"));
    }
    PetscCall(MatXtractCheckDevice(A, mx_device_refresh_values(x->D, (const double *)aa, MatXtractStream()), "value refresh"));
    if (split) PetscCall(MatXtractShadowHub(A, MatXtractShadowHubColumns(x), &made)); /* split the new values again */
    if (released && MatXtractHubInUse(x)) PetscCall(MatXtractShadowReleasePlain(A));
  } else {
    mx_format_refresh_values(&x->F, (const double *)aa);
    x->patterns_lost = PETSC_FALSE;
    x->hot_fell_back = PETSC_FALSE;
    if (x->set.compress == MATXTRACT_COMPRESS_ON) { /* the SE values' encoding chosen again (on the CPU only on packs: MatXtractCompress) */
      const mx_val_enc prev = x->HP.enc;
      mx_hot_pack_free(&x->HP);
      PetscCall(MatXtractCompressHostHot(A));
      x->hot_fell_back = (PetscBool)(prev != MX_VAL_PLAIN && x->HP.enc == MX_VAL_PLAIN);
    }
    if (x->rowpat) { /* the form chosen again for the new values: their patterns, else a pack */
      mx_cold_rowpat_free(&x->RP);
      x->rowpat = PETSC_FALSE;
      PetscCall(MatXtractCompressHostCold(A));
      x->patterns_lost = (PetscBool)!x->rowpat;
    } else if (x->packed && mx_cold_pack_refresh(&x->P, (const double *)aa, x->F.cold_src) != MX_OK) {
      /* out of host memory: the pack lost its values; F's plain cold CSR is right */
      mx_cold_pack_free(&x->P);
      x->packed    = PETSC_FALSE;
      x->pack_note = "not packed (out of host memory at a value refresh)";
      PetscCall(PetscInfo(A, "matxtract: re-encoding the refreshed values: out of host memory: the cold region is plain again\n"));
    }
  }
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatXtractReportRepack(A));
  PetscCall(PetscLogEventEnd(MATXTRACT_Refresh, A, 0, 0, 0));
  PetscCall(PetscInfo(A, "matxtract: values refreshed on the %s (same pattern)\n", x->D ? "GPU" : "CPU"));
  x->built_t = PETSC_FALSE; /* the transpose shadow is rebuilt lazily */
  mx_device_free(x->Dt);
  x->Dt = NULL;
  mx_format_free(&x->Ft);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A^T of a CSR view, as 32-bit CSR (counting sort by column; rows of A^T in ascending order). */
static PetscErrorCode MatXtractTransposeCSR(const mx_csr *A, int32_t **rowptr, int32_t **colidx, double **val)
{
  const int32_t  m = A->nrows, n = A->ncols, nnz = A->rowptr[A->nrows];
  int32_t       *tp = NULL, *ti = NULL, *next = NULL;
  double        *tv = NULL;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1((size_t)n + 1, &tp));
  PetscCall(PetscMalloc2(nnz, &ti, nnz, &tv));
  PetscCall(PetscMalloc1((size_t)n + 1, &next));
  for (int32_t k = 0; k < nnz; k++) tp[A->colidx[k] + 1]++;
  for (int32_t j = 0; j < n; j++) tp[j + 1] += tp[j];
  for (int32_t j = 0; j <= n; j++) next[j] = tp[j];
  for (int32_t i = 0; i < m; i++)
    for (int32_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      int32_t q = next[A->colidx[k]]++;
      ti[q]     = i;
      tv[q]     = A->val[k];
    }
  PetscCall(PetscFree(next));
  *rowptr = tp;
  *colidx = ti;
  *val    = tv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The all-cold format of A^T for MatMultTranspose on the GPU (the device kernels compute A x
 * only), built lazily at the first transpose product after a change of A. */
PetscErrorCode MatXtractShadowSyncTranspose(Mat A)
{
  Mat_MatXtract *x    = (Mat_MatXtract *)A->spptr;
  const mx_plan  cold = {{0.0, 0.0}, x->set.mode, (mx_plan_cold)x->set.cold_kernel};
  mx_csr         csr, csrt;
  int32_t       *tp = NULL, *ti = NULL;
  double        *tv = NULL;

  PetscFunctionBegin;
  if (x->built_t && x->state_t == x->state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MATXTRACT_BuildT, A, 0, 0, 0));
  mx_device_free(x->Dt);
  x->Dt = NULL;
  mx_format_free(&x->Ft);
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  PetscCall(MatXtractTransposeCSR(&csr, &tp, &ti, &tv));
  csrt.nrows  = csr.ncols;
  csrt.ncols  = csr.nrows;
  csrt.rowptr = tp;
  csrt.colidx = ti;
  csrt.val    = tv;
  PetscCall(MatXtractBuildOnDevice(A, &csrt, &cold, &x->Ft, &x->Dt));
  PetscCall(PetscFree(tp));
  PetscCall(PetscFree2(ti, tv));
  PetscCall(PetscLogEventEnd(MATXTRACT_BuildT, A, 0, 0, 0));
  x->built_t = PETSC_TRUE;
  x->state_t = x->state;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = M xx (+ zz) on the GPU if all vectors live there; *done tells whether it ran. */
static PetscErrorCode MatXtractApplyDeviceVectors(Mat A, mx_device *D, PetscLogDouble nnz, Vec xx, Vec zz, Vec yy, PetscBool *done)
{
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  PetscMemType       xm, ym, zm = PETSC_MEMTYPE_DEVICE;

  PetscFunctionBegin;
  PetscCall(VecGetArrayReadAndMemType(xx, &xa, &xm));
  if (zz && zz != yy) PetscCall(VecGetArrayReadAndMemType(zz, &za, &zm));
  if (zz == yy) PetscCall(VecGetArrayAndMemType(yy, &ya, &ym));
  else PetscCall(VecGetArrayWriteAndMemType(yy, &ya, &ym));
  if (zz == yy) za = ya;
  *done = (PetscBool)(PetscMemTypeDevice(xm) && PetscMemTypeDevice(ym) && PetscMemTypeDevice(zm));
  if (*done) {
    PetscCall(MatXtractCheckDevice(A, mx_device_spmv(D, (const double *)xa, (const double *)za, (double *)ya, MatXtractStream()), "MatMult"));
    PetscCall(PetscLogGpuFlops(2.0 * nnz));
  }
  if (zz == yy) PetscCall(VecRestoreArrayAndMemType(yy, &ya));
  else PetscCall(VecRestoreArrayWriteAndMemType(yy, &ya));
  if (zz && zz != yy) PetscCall(VecRestoreArrayReadAndMemType(zz, &za));
  PetscCall(VecRestoreArrayReadAndMemType(xx, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = M xx (+ zz), M = A (F, D) or A^T (Ft, Dt). Device vectors go straight to the GPU kernels;
 * host vectors are staged through D's device buffers; without a device the CPU kernels run on F
 * (which computes A^T itself, so Ft is only built for the GPU). *cpu_seconds: the CPU kernel's
 * time of A xx (0 when it ran on the GPU), for the plan's upgrade rule. */
PetscErrorCode MatXtractShadowApply(Mat A, PetscBool transpose, Vec xx, Vec zz, Vec yy, PetscLogDouble *cpu_seconds)
{
  Mat_MatXtract     *x  = (Mat_MatXtract *)A->spptr;
  mx_device         *D  = transpose ? x->Dt : x->D;
  PetscLogDouble     nnz = (PetscLogDouble)x->F.nnz;
  PetscBool          done = PETSC_FALSE;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;

  PetscFunctionBegin;
  *cpu_seconds = 0.0;
  PetscCall(PetscLogEventBegin(transpose ? MATXTRACT_MultT : MATXTRACT_Mult, A, xx, yy, 0));
  if (D) PetscCall(MatXtractApplyDeviceVectors(A, D, nnz, xx, zz, yy, &done));
  if (!done) {
    PetscCall(VecGetArrayRead(xx, &xa));
    if (zz && zz != yy) PetscCall(VecGetArrayRead(zz, &za));
    if (zz == yy) PetscCall(VecGetArray(yy, &ya));
    else PetscCall(VecGetArrayWrite(yy, &ya));
    if (zz == yy) za = ya;
    const double *xd = (const double *)xa, *zd = (const double *)za; /* PetscScalar is double here */
    double       *yd = (double *)ya;
    if (D) {
      if (!x->staged_info_done) PetscCall(PetscInfo(A, "matxtract: host vectors are staged through device buffers (-vec_type cuda avoids the copies)\n"));
      x->staged_info_done = PETSC_TRUE;
      PetscCall(MatXtractCheckDevice(A, mx_device_spmv_host(D, xd, zd, yd, MatXtractStream()), "MatMult (host vectors)"));
    } else if (!transpose) {
      PetscLogDouble t0, t1;
      PetscCall(PetscTime(&t0));
      /* the cold part by the row-pattern form, else the pack, else plain; the hot part by its packed
       * values, else plain: bitwise equal to mx_spmv / mx_spmv_add */
      mx_spmv_compressed(&x->F, x->rowpat ? &x->RP : NULL, MatXtractPackActive(x) ? &x->P : NULL, &x->HP, xd, zz ? zd : NULL, yd);
      PetscCall(PetscTime(&t1));
      *cpu_seconds = t1 - t0;
    } else {
      if (zz) mx_spmv_t_add(&x->F, xd, zd, yd);
      else mx_spmv_t(&x->F, xd, yd);
    }
    PetscCall(PetscLogFlops(2.0 * nnz));
    if (zz == yy) PetscCall(VecRestoreArray(yy, &ya));
    else PetscCall(VecRestoreArrayWrite(yy, &ya));
    if (zz && zz != yy) PetscCall(VecRestoreArrayRead(zz, &za));
    PetscCall(VecRestoreArrayRead(xx, &xa));
  }
  PetscCall(PetscLogEventEnd(transpose ? MATXTRACT_MultT : MATXTRACT_Mult, A, xx, yy, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A B, or A' B (transpose), for the dense B and C (k columns, their leading dimensions) on the CPU
 * path: the host format's SpMM (mx_spmm: each column bit for bit this path's MatMult of that
 * column, each nonzero read once per 8 columns). */
PetscErrorCode MatXtractShadowApplyDenseCPU(Mat A, PetscBool transpose, Mat B, Mat C)
{
  Mat_MatXtract     *x = (Mat_MatXtract *)A->spptr;
  const PetscScalar *b;
  PetscScalar       *c;
  PetscInt           k, ldb, ldc;
  mx_status          st;

  PetscFunctionBegin;
  PetscCheck(!x->D, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: the host SpMM runs on the CPU path only");
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCheck(k <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "matxtract: %" PetscInt_FMT " dense columns: the SpMM takes at most 2^31 - 1", k);
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(MatDenseGetArrayRead(B, &b));
  PetscCall(MatDenseGetArrayWrite(C, &c));
  PetscCall(PetscLogEventBegin(MATXTRACT_MultDense, A, B, C, 0));
  if (transpose) st = mx_spmm_t(&x->F, (int32_t)k, (const double *)b, (int64_t)ldb, (double *)c, (int64_t)ldc);
  else st = mx_spmm(&x->F, (int32_t)k, (const double *)b, (int64_t)ldb, (double *)c, (int64_t)ldc);
  PetscCheck(st == MX_OK, PETSC_COMM_SELF, PETSC_ERR_MEM, "matxtract: the host SpMM could not allocate its panel of %d columns x %" PetscInt_FMT " rows", k < 8 ? (int)k : 8, A->cmap->n);
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)x->F.nnz * (PetscLogDouble)k));
  PetscCall(PetscLogEventEnd(MATXTRACT_MultDense, A, B, C, 0));
  PetscCall(MatDenseRestoreArrayWrite(C, &c));
  PetscCall(MatDenseRestoreArrayRead(B, &b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *MatXtractSpMMWayName(const mx_spmm_plan *p)
{
  if (p->hub_slabs) return "the hub split's way (its rest, then the hub part in groups of up to 8 columns)";
  if (p->whole) return "the whole matrix all cold (crux (0,0)), a second device beside the hot part";
  if (p->rowpat) return "the cold part's row patterns, all columns at once";
  if (p->pairs_in_place) return "two columns at a time by the SpMV's segment kernel reading both columns of B in place, an odd last column by the SpMV";
  if (p->pairs) return "two columns at a time by the SpMV's cold kernel on the cold form it reads, an odd last column by the SpMV";
  if (!p->kernel) return "one SpMV per column";
  if (p->padded_panels) return "our SpMM kernels on row-major panels of B, the last one padded to a power of two";
  if (p->rest_spmv) return "our SpMM kernels on row-major panels of B up to the last multiple of 8 columns, one SpMV per column left";
  return p->cold_panels ? "our SpMM kernels on row-major panels of B" : "our SpMM kernels on B in place";
}

/* -info, once per k, hub split and way (after the first product, which times the ways; p its plan):
 * the way, the timed choice's times, what of the plan the SpMM reads (hot mode, x-hot and hub columns). */
static PetscErrorCode MatXtractShadowInfoDense(Mat A, mx_device *D, const mx_spmm_plan *p, PetscBool transpose, PetscInt k, int hubK)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall(PetscInfo(A, "matxtract: %s with %" PetscInt_FMT " dense columns on the GPU: %s; timed (us) kernels %.1f, panels %.1f, %" PetscInt_FMT " SpMVs %.1f, hub split's way %.1f, whole matrix all cold %.1f, row patterns %.1f, padded panels %.1f, panels and SpMVs %.1f, pairs %.1f, pairs in place %.1f; hot %s, %d x-hot columns, %d hub columns\n",
                      transpose ? "A' B" : "A B", k, MatXtractSpMMWayName(p), p->way_us[0], p->way_us[1], k, p->way_us[2], p->way_us[3], p->way_us[4], p->way_us[5], p->way_us[6], p->way_us[7], p->way_us[8], p->way_us[9],
                      p->hot_mode == MX_HOT_DU ? "DU" : p->hot_mode == MX_HOT_SE ? "SE" : "none", mx_device_xhot_cols(D), hubK));
  x->spmm_k_seen   = k;
  x->spmm_hub_seen = hubK;
  x->spmm_way_seen = MatXtractSpMMWayName(p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Under a hub split that freed D's plain arrays, the first SpMM of k >= 2 columns uploads them again
 * from A (columns and values, once), so that the whole matrix's ways compete with the split's in the
 * timed choice (mx_device_spmm); from then on the split keeps them. Out of device memory the split's
 * way runs alone (told by -info; not tried again). */
static PetscErrorCode MatXtractShadowDensePlain(Mat A, mx_device *D, PetscInt k)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  mx_csr         csr;

  PetscFunctionBegin;
  if (k < 2 || x->spmm_plain_tried || !mx_device_hub_plain_released(D)) PetscFunctionReturn(PETSC_SUCCESS);
  x->spmm_plain_tried = PETSC_TRUE;
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
  if (mx_device_hub_restore_plain(D, &csr)) PetscCall(PetscInfo(A, "matxtract: the SpMM runs the hub split's way alone: the plain cold CSR stays freed (%s)\n", mx_device_last_error()));
  else PetscCall(PetscInfo(A, "matxtract: the plain cold CSR back on the device for the SpMM (%zu bytes held)\n", mx_device_bytes(D)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Beside a hot part, before the first SpMM of a bucket of k: the whole matrix all cold as a second
 * device, made from A (mx_device_spmm_whole), so that the timed choice times it too; it stays only
 * while a bucket keeps it. Out of device memory the SpMM goes on without it (told by -info; not
 * tried again). */
static PetscErrorCode MatXtractShadowDenseWhole(Mat A, mx_device *D, PetscInt k)
{
  const size_t before = mx_device_bytes(D);
  mx_csr       csr;

  PetscFunctionBegin;
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  if (mx_device_spmm_whole(D, &csr, (int)k)) PetscCall(PetscInfo(A, "matxtract: the SpMM goes on without the whole matrix all cold beside the hot part (%s)\n", mx_device_last_error()));
  else if (mx_device_bytes(D) > before) PetscCall(PetscInfo(A, "matxtract: the whole matrix all cold on the device for the SpMM's timed choice (%zu -> %zu bytes held)\n", before, mx_device_bytes(D)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = A B, or A' B (transpose), for the dense B and C on the GPU (D, or Dt for the transpose, built):
 * mx_device_spmm on the dense matrices' device arrays where both live there, else on their host
 * arrays through device copies. The plan per k (the SpMM kernels or one SpMV per column) is the
 * device layer's (mx_device_spmm_plan); -info names it once per matrix and k, with the times. */
PetscErrorCode MatXtractShadowApplyDenseGPU(Mat A, PetscBool transpose, Mat B, Mat C)
{
  Mat_MatXtract     *x = (Mat_MatXtract *)A->spptr;
  mx_device         *D = transpose ? x->Dt : x->D;
  const PetscScalar *b;
  PetscScalar       *c;
  PetscMemType       bm, cm;
  PetscInt           k, ldb, ldc;
  int                hubK = 0;
  mx_spmm_plan       plan;

  PetscFunctionBegin;
  PetscCheck(D, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matxtract: the GPU SpMM needs the device format");
  PetscCall(MatGetSize(B, NULL, &k));
  if (!transpose) PetscCall(MatXtractShadowDensePlain(A, D, k));
  PetscCheck(k <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "matxtract: %" PetscInt_FMT " dense columns: the SpMM takes at most 2^31 - 1", k);
  if (!transpose && x->F.mode != MX_HOT_NONE) PetscCall(MatXtractShadowDenseWhole(A, D, k)); /* all cold: no whole-matrix way */
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(PetscLogEventBegin(MATXTRACT_MultDense, A, B, C, 0));
  PetscCall(MatDenseGetArrayReadAndMemType(B, &b, &bm));
  PetscCall(MatDenseGetArrayWriteAndMemType(C, &c, &cm));
  if (PetscMemTypeDevice(bm) && PetscMemTypeDevice(cm)) {
    PetscCall(MatXtractCheckDevice(A, mx_device_spmm(D, (int)k, (const double *)b, (long long)ldb, (double *)c, (long long)ldc, MatXtractStream()), "MatMatMult (SpMM)"));
    PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)x->F.nnz * (PetscLogDouble)k));
    PetscCall(MatDenseRestoreArrayWriteAndMemType(C, &c));
    PetscCall(MatDenseRestoreArrayReadAndMemType(B, &b));
  } else { /* a host operand: both through their host arrays */
    PetscCall(MatDenseRestoreArrayWriteAndMemType(C, &c));
    PetscCall(MatDenseRestoreArrayReadAndMemType(B, &b));
    PetscCall(MatDenseGetArrayRead(B, &b));
    PetscCall(MatDenseGetArrayWrite(C, &c));
    PetscCall(MatXtractCheckDevice(A, mx_device_spmm_host(D, (int)k, (const double *)b, (long long)ldb, (double *)c, (long long)ldc, MatXtractStream()), "MatMatMult (SpMM, host columns)"));
    PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)x->F.nnz * (PetscLogDouble)k));
    PetscCall(MatDenseRestoreArrayWrite(C, &c));
    PetscCall(MatDenseRestoreArrayRead(B, &b));
  }
  PetscCall(PetscLogEventEnd(MATXTRACT_MultDense, A, B, C, 0));
  mx_device_hub_info(D, &hubK, NULL);
  PetscCall(MatXtractCheckDevice(A, mx_device_spmm_plan(D, (int)k, &plan), "planning the SpMM"));
  if (k != x->spmm_k_seen || hubK != x->spmm_hub_seen || MatXtractSpMMWayName(&plan) != x->spmm_way_seen) PetscCall(MatXtractShadowInfoDense(A, D, &plan, transpose, k, hubK));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Seconds of one product on the format in use, the median of MATXTRACT_GPU_TIME_REPS with CUDA
 * events on the GPU, of MATXTRACT_TIME_REPS with PetscTime around the CPU kernel (x = 1) on the CPU. */
PetscErrorCode MatXtractShadowTime(Mat A, PetscLogDouble *seconds)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscReal      t[MATXTRACT_TIME_REPS];
  double        *xv, *yv, sec;

  PetscFunctionBegin;
  if (x->D) {
    PetscCheck(!mx_device_time_spmv(x->D, MATXTRACT_GPU_TIME_REPS, &sec), PETSC_COMM_SELF, PETSC_ERR_LIB, "matxtract: timing the format on the GPU failed: %s", mx_device_last_error());
    *seconds = sec;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc2(x->F.ncols, &xv, x->F.nrows, &yv));
  for (int32_t j = 0; j < x->F.ncols; j++) xv[j] = 1.0;
  for (int k = 0; k < MATXTRACT_TIME_REPS; k++) {
    PetscLogDouble t0, t1;
    PetscCall(PetscTime(&t0));
    mx_spmv(&x->F, xv, yv);
    PetscCall(PetscTime(&t1));
    t[k] = (PetscReal)(t1 - t0);
  }
  PetscCall(PetscFree2(xv, yv));
  PetscCall(PetscSortReal(MATXTRACT_TIME_REPS, t));
  *seconds = (PetscLogDouble)t[MATXTRACT_TIME_REPS / 2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the hub split (mx_device_hub, -mat_matxtract_hub) runs x's products. */
PetscBool MatXtractHubInUse(const Mat_MatXtract *x)
{
  int K = 0;

  if (x->D) mx_device_hub_info(x->D, &K, NULL);
  return (PetscBool)(K > 0);
}

/* The cold region (and an SE hot region's values) compressed by request req (the third cascade): on
 * the GPU by mx_device_compress (the segment and merge cold kernels read what it packs), else on the
 * host (the CPU MatMult reads it). *packed: whether anything is packed and read now. Never fatal: a
 * failure (out of memory on either side) leaves the cold region plain, pack_note and -info say why. */
PetscErrorCode MatXtractShadowCompress(Mat A, const mx_pack_request *req, PetscBool *packed)
{
  Mat_MatXtract      *x = (Mat_MatXtract *)A->spptr;
  mx_device_pack_info pi;

  PetscFunctionBegin;
  *packed      = PETSC_FALSE;
  x->pack_note = NULL;
  if (!x->D) {
    PetscCall(MatXtractCompressHostHot(A));
    PetscCall(MatXtractCompressHostCold(A));
    *packed = (PetscBool)(x->rowpat || MatXtractPackActive(x) || x->HP.enc != MX_VAL_PLAIN);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (mx_device_compress(x->D, req)) {
    PetscCall(PetscInfo(A, "matxtract: packing the cold region on the GPU failed (%s): it stays plain\n", mx_device_last_error()));
    x->pack_note = "not packed (packing failed on the GPU: -info says why)";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatXtractCheckDevice(A, mx_device_compress_info(x->D, &pi), "reading the cold region's encodings"));
  /* mx_device_compress packs nothing while x-hot codes the cold CSR: pack info does not tell that
   * apart from a pack where plain is smallest */
  if (!pi.packed) x->pack_note = mx_device_xhot_cols(x->D) > 0 ? "not packed (x-hot, or plain is smallest)" : "not packed (plain is smallest)";
  *packed = (PetscBool)((pi.packed && pi.in_use) || pi.hot_val_enc != MX_VAL_PLAIN);
  if (pi.hot_val_enc != MX_VAL_PLAIN) PetscCall(PetscInfo(A, "matxtract: SE hot region values packed on the GPU: %s, %zu bytes vs %zu plain\n", mx_val_enc_name(pi.hot_val_enc), pi.hot_bytes, pi.hot_plain_bytes));
  if (pi.packed && pi.rowpat) PetscCall(PetscInfo(A, "matxtract: cold region in row-pattern form on the GPU: %d patterns, %d entries, %d-byte ids, %zu bytes vs %zu plain\n", (int)pi.npat, (int)pi.nent, pi.id_bytes, pi.bytes, pi.plain_bytes));
  else if (pi.packed) PetscCall(PetscInfo(A, "matxtract: cold region packed on the GPU: values %s, columns %s, row pointers %s, %zu bytes vs %zu plain\n", mx_val_enc_name(pi.val_enc), mx_idx_enc_name(pi.idx_enc), mx_row_enc_name(pi.row_enc), pi.bytes, pi.plain_bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cold region plain again (the GPU's pack or row-pattern form removed; the host's dropped). */
PetscErrorCode MatXtractShadowUncompress(Mat A)
{
  Mat_MatXtract        *x     = (Mat_MatXtract *)A->spptr;
  const mx_pack_request plain = mx_pack_request_of(MX_COMPRESS_OFF);

  PetscFunctionBegin;
  if (x->D) PetscCall(MatXtractCheckDevice(A, mx_device_compress(x->D, &plain), "removing the pack"));
  mx_cold_pack_free(&x->P);
  mx_cold_rowpat_free(&x->RP);
  mx_hot_pack_free(&x->HP);
  x->packed = PETSC_FALSE;
  x->rowpat = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the GPU's cold kernel reads a pack or row-pattern form now. */
PetscBool MatXtractPackInUse(const Mat_MatXtract *x)
{
  mx_device_pack_info pi;

  if (!x->D || mx_device_compress_info(x->D, &pi)) return PETSC_FALSE;
  return (PetscBool)(pi.packed && pi.in_use);
}

/* While a pack runs the cold products: the plain device arrays it replaces freed where nothing else
 * reads them (mx_device_pack_release_plain: no synchronisation when there is nothing more to free;
 * the device entry points that read them decode them back from the pack first). */
PetscErrorCode MatXtractShadowReleasePackPlain(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  size_t         before, after;

  PetscFunctionBegin;
  if (!x->D) PetscFunctionReturn(PETSC_SUCCESS);
  before = mx_device_pack_plain_released(x->D);
  PetscCall(MatXtractCheckDevice(A, mx_device_pack_release_plain(x->D), "freeing the plain cold arrays under the pack"));
  after = mx_device_pack_plain_released(x->D);
  if (after > before) PetscCall(PetscInfo(A, "matxtract: the pack runs the cold products: %zu bytes of plain cold arrays freed on the device (%zu held now)\n", after - before, mx_device_bytes(x->D)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* While the hub split runs the products alone: the whole matrix's plain device columns and values
 * freed (mx_device_hub_release_plain; the refresh brings them back for the next split). Where they
 * are read by more than the split, nothing is freed and -info says why. */
PetscErrorCode MatXtractShadowReleasePlain(Mat A)
{
  Mat_MatXtract *x      = (Mat_MatXtract *)A->spptr;
  const size_t   before = mx_device_bytes(x->D);

  PetscFunctionBegin;
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
  if (mx_device_hub_release_plain(x->D)) PetscCall(PetscInfo(A, "matxtract: the plain cold CSR stays on the device: %s\n", mx_device_last_error()));
  else PetscCall(PetscInfo(A, "matxtract: the hub split runs the products: the plain cold CSR freed on the device (%zu -> %zu bytes)\n", before, mx_device_bytes(x->D)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

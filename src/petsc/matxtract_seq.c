/* matxtract_seq.c - MATSEQAIJMATXTRACT: SeqAIJ with a MatXtract hot/cold shadow used by MatMult.
 *
 * Pattern (as PETSc's AIJSELL): create SeqAIJ, save the AIJ ops we override, install ours, and call
 * the saved ones. AIJ remains the master copy; the shadow (host format, plus device copy on a GPU)
 * is made to match it by MatXtractSync_SeqAIJ before every product, so nothing stale is ever used:
 *   - MatAssemblyEnd(FINAL) syncs eagerly (the expensive conversion happens at assembly); a
 *     MatConvert from AIJ builds at the first product instead (MatConvert raises the state after);
 *   - MatScale/MatShift/MatZeroEntries/MatCopy/MatAXPY change values without an assembly: the
 *     next product sees a new object state and refreshes values through the gather map;
 *   - a new nonzero pattern (nonzerostate) rebuilds the format.
 * PetscScalar is real double in every build that gets past MatConvert_SeqAIJ_SeqAIJMatXtract (others
 * are refused there with a clear error), hence the double views of PETSc's arrays below. */
#include "matxtract_impl.h"
#include <petscdevice.h>

#if defined(PETSC_HAVE_CUDA) && defined(MATXTRACT_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
  #include <petscdevice_cuda.h>
  #define MATXTRACT_PETSC_STREAM 1
#endif

static const char *const MatXtractHotNames[]    = {"none", "du", "se"};

/* mx_status -> PETSc error, with what a user needs to act on it. */
static PetscErrorCode MatXtractCheckStatus(Mat A, mx_status s, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(s != MX_ERR_OVERFLOW, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "matxtract: %s: the local block (%" PetscInt_FMT " x %" PetscInt_FMT ") has more rows, columns or nonzeros than 32-bit format indices hold; use more MPI ranks or -mat_type aij", what, A->rmap->n, A->cmap->n);
  PetscCheck(s != MX_ERR_MEM, PetscObjectComm((PetscObject)A), PETSC_ERR_MEM, "matxtract: %s: out of host memory", what);
  PetscCheck(s == MX_OK, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "matxtract: %s: invalid argument (crux must satisfy 0 <= tau_r <= tau_c <= 1)", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractCheckDevice(Mat A, int err, const char *what)
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
static void MatXtractFreeFormats(Mat_MatXtract *x)
{
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
  x->pack_pending  = PETSC_FALSE;
  x->rowpat_tried  = PETSC_FALSE;
  x->pack_note    = NULL;
  x->built        = PETSC_FALSE;
  x->built_t      = PETSC_FALSE;
}

/* Whether the CPU MatMult reads the host pack: one with a packed part (values or columns); a pack
 * whose values fell back to plain and whose columns are plain reads like F's plain cold CSR. */
static PetscBool MatXtractPackActive(const Mat_MatXtract *x)
{
  return (PetscBool)(x->packed && (x->P.val_enc != MX_VAL_PLAIN || x->P.idx_enc != MX_IDX_PLAIN));
}

/* The GPU packing's own cost (value statistics and encoding, mx_device_compress), for the amortised
 * pack of compress auto: on an H100 (MX_TRACE_SETUP, tuning/results/h100/setup-trace-2026-11-23d)
 * kron:20:16 PageRank 4.9-7.7 ms (31.4M nonzeros), lap3d:100 2.1-3.5 ms (6.9M) */
#define MATXTRACT_PACK_FIXED_S    1.5e-3
#define MATXTRACT_PACK_NS_PER_NNZ 0.2
/* The fraction of a MatMult the pack is assumed to save until its guard measures it. Measured on an
 * H100 (tuning/results/h100/cold-pack-perf-2026-11-23*): 0.065 kron:20:16 PageRank (column constants),
 * 0.11-0.13 band, unique values, kron and chunglu unweighted; 0.21-0.28 stencils and rgg. With 0.2 a
 * pack waits until the time spent, had it been saving that fraction, pays for it: a 100-iteration
 * PageRank on kron:20:16 no longer pays 10 ms for 1 ms back (packed after 34 MatMults by "spent >=
 * cost"), while a 1000-iteration solve on a stencil keeps all but a few percent of the pack's gain. */
#define MATXTRACT_PACK_GAIN 0.2
/* The row-pattern form's attempt (mx_device_compress with {plain, plain, plain, auto}: row hashes, a
 * sort of the rows, an exact check, the encoding) and its assumed gain, for its own amortised try
 * before the pack's: on an H100 (cold-pack-bench compress_ms, tuning/results/h100/
 * cold-pack-perf-2026-11-26d) 2.0 ms lap3d:150 (23.5M nonzeros), 2.9 ms lap3d27:100 (26.5M); the
 * product then took 0.22-0.34 of the plain segment kernel's time on the 5-, 7- and 27-point
 * stencils: 0.5 is assumed. Where the rows do not repeat the attempt costs about as much and keeps
 * nothing; the pack's own amortisation then goes on. The fixed part, 1.2 ms, is what the attempt
 * costs inside a PETSc solve beyond the per-nonzero part and the guard: CG on lap3d 100^3 (6.94M
 * nonzeros, H100, tuning/results/h100/e2e-2026-11-26e/noise-check-lap3d100, 7 repetitions) spent
 * 16.0 ms on 100 iterations with the attempt after 76 MatMults and 14.4 ms without compression,
 * whose 24 patterned MatMults saved 0.6 ms: 2.2 ms in all, where 0.5 ms fixed estimated 1.46. */
#define MATXTRACT_ROWPAT_FIXED_S    1.2e-3
#define MATXTRACT_ROWPAT_NS_PER_NNZ 0.1
#define MATXTRACT_ROWPAT_GAIN       0.5

/* The guard of the GPU pack (-mat_matxtract_guard): fewer bytes need not be faster (a 2-byte
 * dictionary too large for L1 is a second random gather: kron:20:16 PageRank values, dict16 474 us
 * vs plain 362 us on an H100). The packed product is timed like the plain one was just before; not
 * faster, the pack is removed and MatMult reads the plain CSR. */
static PetscErrorCode MatXtractPackGuard(Mat A, double t_plain)
{
  Mat_MatXtract        *x     = (Mat_MatXtract *)A->spptr;
  const mx_pack_request plain = mx_pack_request_of(MX_COMPRESS_OFF);
  double                t_pack;

  PetscFunctionBegin;
  PetscCheck(!mx_device_time_spmv(x->D, MATXTRACT_GPU_TIME_REPS, &t_pack), PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: timing the packed cold region failed: %s", mx_device_last_error());
  x->build_mult_seconds = PetscMin(t_pack, t_plain); /* the format kept */
  if (t_pack < t_plain) {
    PetscCall(PetscInfo(A, "matxtract: guard: the packed cold region takes %g s per MatMult, plain %g s: pack kept\n", t_pack, t_plain));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(A, "matxtract: guard: the packed cold region takes %g s per MatMult, plain %g s: plain kept\n", t_pack, t_plain));
  PetscCall(MatXtractCheckDevice(A, mx_device_compress(x->D, &plain), "removing the pack"));
  x->pack_note = "not packed (the guard timed the pack slower than plain)";
  PetscFunctionReturn(PETSC_SUCCESS);
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

/* The third cascade (-mat_matxtract_compress auto|on): pack the cold region, on the GPU
 * (mx_device_compress: the row-pattern form where it pays under the segment kernel, unless the
 * amortised attempt already found none, else a pack: D's segment and merge cold kernels read it; the
 * guard times it against plain, whose time t_plain is given, or timed here when 0) or, under on only,
 * on the host (MatXtractCompressHostHot, MatXtractCompressHostCold: the CPU MatMult reads them; auto leaves the CPU path plain, see
 * MatXtractCompressChoice in matxtract_impl.h). Never fatal: a failure (out of memory on either side) leaves the
 * cold region plain, and -info says why. The transpose shadow stays plain. */
static PetscErrorCode MatXtractCompress(Mat A, PetscLogDouble t_plain_known)
{
  Mat_MatXtract  *x   = (Mat_MatXtract *)A->spptr;
  mx_pack_request req = mx_pack_request_of(MX_COMPRESS_AUTO);

  PetscFunctionBegin;
  if (x->rowpat_tried) req.form = MX_FORM_PACK; /* the amortised attempt found no row patterns that pay */
  x->pack_note          = NULL;
  x->build_mult_seconds = 0.0;
  if (x->set.compress == MATXTRACT_COMPRESS_OFF) {
    x->pack_note = "compression off";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!x->D && x->set.compress == MATXTRACT_COMPRESS_AUTO) {
    x->pack_note = "not packed on the CPU (auto packs for the GPU; -mat_matxtract_compress on packs here too)";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (x->D) {
    mx_device_pack_info  pi;
    double               t_plain = t_plain_known;
    const mx_cold_kernel k      = mx_device_cold_kernel(x->D);
    const PetscBool      guard  = (PetscBool)(x->set.guard && (k == MX_COLD_SEGMENT || k == MX_COLD_MERGE)); /* the kernels that read a pack */
    if (guard && !(t_plain > 0)) PetscCheck(!mx_device_time_spmv(x->D, MATXTRACT_GPU_TIME_REPS, &t_plain), PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: timing the plain cold region failed: %s", mx_device_last_error());
    x->build_mult_seconds = t_plain; /* the format as it stands unless a pack is kept */
    if (mx_device_compress(x->D, &req)) {
      PetscCall(PetscInfo(A, "matxtract: packing the cold region on the GPU failed (%s): it stays plain\n", mx_device_last_error()));
      x->pack_note = "not packed (packing failed on the GPU: -info says why)";
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(MatXtractCheckDevice(A, mx_device_compress_info(x->D, &pi), "reading the cold region's encodings"));
    /* mx_device_compress packs nothing while x-hot codes the cold CSR (the cache on and MX_XHOT_COLD):
     * pack info does not tell that apart from a pack where plain is smallest */
    if (!pi.packed) x->pack_note = mx_device_xhot_cols(x->D) > 0 ? "not packed (x-hot, or plain is smallest)" : "not packed (plain is smallest)";
    if (((pi.packed && pi.in_use) || pi.hot_val_enc != MX_VAL_PLAIN) && guard) PetscCall(MatXtractPackGuard(A, t_plain)); /* the cold pack and the hot values alike */
    if (pi.hot_val_enc != MX_VAL_PLAIN && !(x->pack_note && strstr(x->pack_note, "guard"))) PetscCall(PetscInfo(A, "matxtract: SE hot region values packed on the GPU: %s, %zu bytes vs %zu plain\n", mx_val_enc_name(pi.hot_val_enc), pi.hot_bytes, pi.hot_plain_bytes));
    if (pi.packed && !x->pack_note && pi.rowpat) PetscCall(PetscInfo(A, "matxtract: cold region in row-pattern form on the GPU: %d patterns, %d entries, %d-byte ids, %zu bytes vs %zu plain\n", (int)pi.npat, (int)pi.nent, pi.id_bytes, pi.bytes, pi.plain_bytes));
    else if (pi.packed && !x->pack_note) PetscCall(PetscInfo(A, "matxtract: cold region packed on the GPU: values %s, columns %s, row pointers %s, %zu bytes vs %zu plain\n", mx_val_enc_name(pi.val_enc), mx_idx_enc_name(pi.idx_enc), mx_row_enc_name(pi.row_enc), pi.bytes, pi.plain_bytes));
  } else {
    PetscCall(MatXtractCompressHostHot(A));
    PetscCall(MatXtractCompressHostCold(A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the GPU cold kernel changed in place (the predictor's cold kernel): the cold region is packed
 * again from plain, so that the guard times the pack with the kernel that now reads it (a pack can
 * be faster under segment and slower under merge: a 2-byte dictionary). No-op without a device or
 * with compression off. */
PetscErrorCode MatXtractRepack_SeqAIJ(Mat A)
{
  Mat_MatXtract        *x     = (Mat_MatXtract *)A->spptr;
  const mx_pack_request plain = mx_pack_request_of(MX_COMPRESS_OFF);

  PetscFunctionBegin;
  if (!x->D || x->set.compress == MATXTRACT_COMPRESS_OFF || x->pack_pending) PetscFunctionReturn(PETSC_SUCCESS); /* pending: packs for the kernel then in use */
  PetscCall(MatXtractCheckDevice(A, mx_device_compress(x->D, &plain), "removing the pack"));
  x->rowpat_tried = PETSC_FALSE; /* the new kernel may take row patterns (only the segment kernel reads them) */
  PetscCall(MatXtractCompress(A, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a build: under compress auto on the GPU the pack waits (MatXtractPackBeforeMult) until the
 * MatMult time spent pays for it at its assumed gain, so that a solve too short to earn it back
 * never pays it; under on, or on the CPU path, the cold region is packed (or left plain) now. */
static PetscErrorCode MatXtractCompressAtBuild(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  x->pack_pending = (PetscBool)(x->D && x->set.compress == MATXTRACT_COMPRESS_AUTO);
  x->rowpat_tried = PETSC_FALSE;
  if (!x->pack_pending) PetscCall(MatXtractCompress(A, 0.0));
  else {
    x->pack_note          = "not packed yet (auto: packed once the MatMult time spent, saving the pack's assumed gain, would pay for packing)";
    x->build_mult_seconds = 0.0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Estimated seconds of the amortised pack: the packing, and the guard's timed products of the pack
 * (the plain format's time is the plan's, t_cur, already measured). */
PetscLogDouble MatXtractPackSeconds(const Mat_MatXtract *x, PetscLogDouble t_cur)
{
  const PetscLogDouble guard = x->set.guard ? (MATXTRACT_GPU_TIME_REPS + 2) * t_cur : 0.0;

  return MATXTRACT_PACK_FIXED_S + 1e-9 * MATXTRACT_PACK_NS_PER_NNZ * (PetscLogDouble)x->F.cold_nnz + guard;
}

/* Estimated seconds of the row-pattern form's attempt, its guard's products included. */
static PetscLogDouble MatXtractRowpatSeconds(const Mat_MatXtract *x, PetscLogDouble t_cur)
{
  const PetscLogDouble guard = x->set.guard ? (MATXTRACT_GPU_TIME_REPS + 2) * t_cur : 0.0;

  return MATXTRACT_ROWPAT_FIXED_S + 1e-9 * MATXTRACT_ROWPAT_NS_PER_NNZ * (PetscLogDouble)x->F.cold_nnz + guard;
}

/* The amortised row-pattern attempt of MatXtractPackBeforeMult (segment cold kernel, t_cur its time
 * per MatMult): the form kept where it holds the cold CSR in fewer bytes than any pack and its guard
 * times it faster (*kept), else nothing changed. The request packs nothing else: a kept form ends
 * the pending pack, so an SE hot region's values then stay plain (a plan with both is rare: the
 * stencils whose rows repeat run at (0,0)). */
static PetscErrorCode MatXtractTryRowPatterns(Mat A, PetscLogDouble t_cur, PetscBool *kept)
{
  Mat_MatXtract        *x  = (Mat_MatXtract *)A->spptr;
  const mx_pack_request rq = {MX_VAL_PLAIN, MX_IDX_PLAIN, MX_ROW_PLAIN, MX_FORM_AUTO};
  mx_device_pack_info   pi;

  PetscFunctionBegin;
  *kept = PETSC_FALSE;
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
  if (mx_device_compress(x->D, &rq)) {
    PetscCall(PetscInfo(A, "matxtract: trying row patterns on the GPU failed (%s)\n", mx_device_last_error()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatXtractCheckDevice(A, mx_device_compress_info(x->D, &pi), "reading the cold region's encodings"));
  if (!pi.rowpat) {
    PetscCall(PetscInfo(A, "matxtract: the cold rows do not repeat few patterns: the pack's own amortisation goes on\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  x->pack_note = NULL;
  if (x->set.guard) PetscCall(MatXtractPackGuard(A, t_cur));
  else x->build_mult_seconds = t_cur; /* not timed: the plan keeps its measured (plain) time */
  *kept = (PetscBool)(x->pack_note == NULL);
  if (*kept) PetscCall(PetscInfo(A, "matxtract: cold region in row-pattern form on the GPU: %d patterns, %d entries, %d-byte ids, %zu bytes vs %zu plain\n", (int)pi.npat, (int)pi.nent, pi.id_bytes, pi.bytes, pi.plain_bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a MatMult with the pack pending, while a cold kernel that reads the pack is in use: first,
 * under the segment kernel, the row-pattern form, an upgrade predicted to save MATXTRACT_ROWPAT_GAIN
 * of a MatMult for MatXtractRowpatSeconds; then the pack, predicted to save MATXTRACT_PACK_GAIN,
 * each weighed by the upgrade's
 * rule (mx_upgrade_decide: once the time spent, saving that fraction, would have paid for the
 * packing's estimated cost; with -mat_matxtract_expected_mults N, now if the MatMults left can pay
 * for it, else never). The guard then measures what it saves. */
static PetscErrorCode MatXtractPackBeforeMult(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble t_cur, spent, cost;
  mx_cold_kernel k;
  mx_upgrade     d;

  PetscFunctionBegin;
  if (!x->pack_pending) PetscFunctionReturn(PETSC_SUCCESS);
  k = mx_device_cold_kernel(x->D);
  MatXtractPlanTimes(x, &t_cur, &spent);
  if ((k != MX_COLD_SEGMENT && k != MX_COLD_MERGE) || !(t_cur > 0)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!x->rowpat_tried && k == MX_COLD_SEGMENT) {
    PetscBool kept;
    cost = MatXtractRowpatSeconds(x, t_cur);
    d    = mx_upgrade_decide(t_cur, (1.0 - MATXTRACT_ROWPAT_GAIN) * t_cur, cost, spent, (double)x->set.expected_mults);
    if (d == MX_UPGRADE_LATER) PetscFunctionReturn(PETSC_SUCCESS); /* the pack, costlier for less, waits too */
    x->rowpat_tried = PETSC_TRUE;
    if (d == MX_UPGRADE_NOW) {
      PetscCall(PetscInfo(A, "matxtract: trying row patterns after %" PetscInt_FMT " MatMults: %g s spent on them would have saved its estimated %g s at its assumed gain %g\n", (PetscInt)x->plan.mults, (double)spent, (double)cost, MATXTRACT_ROWPAT_GAIN));
      PetscCall(MatXtractTryRowPatterns(A, t_cur, &kept));
      if (kept) {
        x->pack_pending = PETSC_FALSE;
        x->plan.t_mult  = x->build_mult_seconds; /* the format kept */
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      x->pack_note = "not packed yet (auto: packed once the MatMult time spent, saving the pack's assumed gain, would pay for packing)";
    }
  }
  cost = MatXtractPackSeconds(x, t_cur);
  d    = mx_upgrade_decide(t_cur, (1.0 - MATXTRACT_PACK_GAIN) * t_cur, cost, spent, (double)x->set.expected_mults);
  if (d == MX_UPGRADE_LATER) PetscFunctionReturn(PETSC_SUCCESS);
  if (d == MX_UPGRADE_NEVER) {
    PetscCall(PetscInfo(A, "matxtract: not packing the cold region: the %" PetscInt_FMT " expected MatMults cannot pay for it (estimated %g s) at its assumed gain %g\n", x->set.expected_mults, (double)cost, MATXTRACT_PACK_GAIN));
    x->pack_pending = PETSC_FALSE;
    x->pack_note    = "not packed (the expected MatMults cannot pay for packing: -mat_matxtract_expected_mults)";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(A, "matxtract: packing the cold region after %" PetscInt_FMT " MatMults: %g s spent on them would have saved its estimated %g s at its assumed gain %g\n", (PetscInt)x->plan.mults, (double)spent, (double)cost, MATXTRACT_PACK_GAIN));
  x->pack_pending = PETSC_FALSE;
  /* the packing and the guard's products run on the default stream: the user's products still in
   * flight on PETSc's stream finish first */
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
  PetscCall(MatXtractCompress(A, t_cur));
  if (x->build_mult_seconds > 0) x->plan.t_mult = x->build_mult_seconds; /* the format kept */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pending pack now (an online upgrade: the plan it replaces may run packed, and the guard must
 * compare like with like). */
PetscErrorCode MatXtractPackNow_SeqAIJ(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (!x->pack_pending) PetscFunctionReturn(PETSC_SUCCESS);
  x->pack_pending = PETSC_FALSE;
  PetscCall(MatXtractCompress(A, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Drop everything made for the current pattern. */
static PetscErrorCode MatXtractFreeShadow(Mat_MatXtract *x)
{
  PetscFunctionBegin;
  MatXtractFreeFormats(x);
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

/* The hub split's estimated cost and assumed gain per MatMult (-mat_matxtract_hub, amortised as the
 * pack is). Its cost: auto's statistics, then the split built on the GPU and its rest packed. On an
 * H200 (tuning/results/h200/hub-build-2026-11-27b, a warp per row in the builder's row passes) the
 * statistics took 3.8 ms and the build 15.7 ms on kron21 (63.5M nonzeros), the build 9.2-9.9 ms on
 * kron20 (31.4M): 0.30-0.32 ns per nonzero; 0.4 leaves room for slower GPUs (a thread per row took
 * 27 and 58 ms on an H100, tuning/results/h100/e2e-hub-2026-11-26g/gpu-builder). A fixed part: some
 * 40 allocations, 30 launches and 6 host round trips whatever the size, 0.79-0.87 ms on 4K-21K
 * nonzeros (3.8 ms the first split of a process); 1.5 ms, as the pack's, keeps a solve of a few
 * MatMults on a small matrix from splitting. It saves 30-33% of a MatMult on the Kronecker graphs
 * the auto rule admits: the guard's timings on an H200 (158.5 vs 226 us kron20, 321 vs 460 us kron21:
 * tuning/results/h200/e2e-hub-auto-2026-11-27), the bench on an H100 (341 vs 508 us kron21 ones, 360
 * vs 530 PageRank: tuning/results/h100/hub-split-2026-11-26g); 0.30 is assumed until the guard times
 * it. */
#define MATXTRACT_HUB_FIXED_S    1.5e-3
#define MATXTRACT_HUB_NS_PER_NNZ 0.4
#define MATXTRACT_HUB_GAIN       0.30

/* The hub columns the split asks for: -mat_matxtract_hub K, or MX_HUB_MAX_COLS under auto. */
static int MatXtractHubColumns(const Mat_MatXtract *x)
{
  return x->set.hub == MATXTRACT_HUB_AUTO ? MX_HUB_MAX_COLS : (int)x->set.hub;
}

/* The hub split (mx_device_hub) of A's CSR, the matrix D holds: 1 in *made when it was made. A failure
 * leaves D's whole-matrix product (an error under -mat_matxtract_device gpu). */
static PetscErrorCode MatXtractMakeHub(Mat A, PetscBool *made)
{
  Mat_MatXtract *x    = (Mat_MatXtract *)A->spptr;
  int            K    = 0;
  int64_t        hnnz = 0;
  mx_csr         csr;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  PetscCall(PetscTime(&t0));
  *made = (PetscBool)!mx_device_hub(x->D, &csr, MatXtractHubColumns(x));
  if (!*made) {
    PetscCheck(x->set.device_choice != MATXTRACT_DEVICE_GPU, PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: the hub split failed (-mat_matxtract_device gpu): %s", mx_device_last_error());
    PetscCall(PetscInfo(A, "matxtract: the hub split failed (%s): the cold kernel runs the whole matrix\n", mx_device_last_error()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "building the hub split")); /* its time, for -info */
  PetscCall(PetscTime(&t1));
  mx_device_hub_info(x->D, &K, &hnnz);
  PetscCall(PetscInfo(A, "matxtract: hub split: %d hub columns hold %lld of %d nonzeros (built in %g s)\n", K, (long long)hnnz, (int)csr.rowptr[csr.nrows], (double)(t1 - t0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a build: under -mat_matxtract_hub K, on the GPU at an all-cold plan, the split waits
 * (MatXtractHubBeforeMult) until the MatMult time spent pays for it; -info says why not otherwise.
 * Under auto only where the merge kernel runs the matrix (the row-length rule's verdict for
 * power-law rows, or the predictor's) and it has MX_HUB_AUTO_MIN_NNZ nonzeros (the hub part can hold
 * that many); the rule's statistics wait with the split (MatXtractHubBeforeMult). */
static PetscErrorCode MatXtractHubAtBuild(Mat A)
{
  Mat_MatXtract  *x       = (Mat_MatXtract *)A->spptr;
  const PetscBool is_auto = (PetscBool)(x->set.hub == MATXTRACT_HUB_AUTO);

  PetscFunctionBegin;
  x->hub_pending = PETSC_FALSE;
  if (x->set.hub == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (is_auto && (!x->D || x->F.hot_nnz > 0 || x->F.nnz < MX_HUB_AUTO_MIN_NNZ)) PetscFunctionReturn(PETSC_SUCCESS); /* nothing to say of most matrices */
  if (!x->D) PetscCall(PetscInfo(A, "matxtract: -mat_matxtract_hub runs on the GPU only: no split\n"));
  else if (x->F.hot_nnz > 0) PetscCall(PetscInfo(A, "matxtract: -mat_matxtract_hub needs an all-cold plan; crux (%g,%g) has %d hot nonzeros: no split\n", x->F.crux.tau_c, x->F.crux.tau_r, (int)x->F.hot_nnz));
  else if (is_auto && mx_device_cold_kernel(x->D) != MX_COLD_MERGE) PetscCall(PetscInfo(A, "matxtract: -mat_matxtract_hub auto: the cold kernel is %s, not merge (no power-law rows): no split\n", MatXtractColdNames[mx_device_cold_kernel(x->D)]));
  else x->hub_pending = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Under -mat_matxtract_hub auto: whether the rule (mx_hub_pays, on the hub statistics of D's CSR
 * computed on the GPU) admits the split; -info says why not. A failure of the statistics is no split
 * (an error under -mat_matxtract_device gpu), as a failure of the split is. */
static PetscErrorCode MatXtractHubRuleAdmits(Mat A, PetscBool *admits)
{
  Mat_MatXtract *x    = (Mat_MatXtract *)A->spptr;
  int64_t        hnnz = 0, hrows = 0;

  PetscFunctionBegin;
  *admits = PETSC_TRUE;
  if (x->set.hub != MATXTRACT_HUB_AUTO) PetscFunctionReturn(PETSC_SUCCESS);
  if (mx_device_hub_stats(x->D, MX_HUB_MAX_COLS, &hnnz, &hrows)) {
    PetscCheck(x->set.device_choice != MATXTRACT_DEVICE_GPU, PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: the hub statistics failed (-mat_matxtract_device gpu): %s", mx_device_last_error());
    PetscCall(PetscInfo(A, "matxtract: the hub statistics failed (%s): no split\n", mx_device_last_error()));
    *admits = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  *admits = (PetscBool)mx_hub_pays(hnnz, hrows);
  PetscCall(PetscInfo(A, "matxtract: -mat_matxtract_hub auto: the %d most used columns hold %lld nonzeros in %lld rows (%.1f per row; the split needs %d and %d per row): %s\n", MX_HUB_MAX_COLS, (long long)hnnz, (long long)hrows, hrows ? (double)hnnz / (double)hrows : 0.0,
                      MX_HUB_AUTO_MIN_NNZ, MX_HUB_AUTO_MIN_ROW, *admits ? "split" : "no split"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pending hub split, once the MatMult time spent on the plan, had it saved MATXTRACT_HUB_GAIN,
 * would have paid for its estimated cost (with -mat_matxtract_expected_mults: at once if the
 * expected MatMults can pay for it, else never); under -mat_matxtract_guard the split product is
 * timed against the whole-matrix one and kept only if faster. */
static PetscErrorCode MatXtractHubBeforeMult(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble t_cur, spent, cost;
  mx_upgrade     d;
  PetscBool      made, admits;
  double         t_split;

  PetscFunctionBegin;
  if (!x->hub_pending) PetscFunctionReturn(PETSC_SUCCESS);
  MatXtractPlanTimes(x, &t_cur, &spent);
  if (!(t_cur > 0)) PetscFunctionReturn(PETSC_SUCCESS);
  cost = MATXTRACT_HUB_FIXED_S + 1e-9 * MATXTRACT_HUB_NS_PER_NNZ * (PetscLogDouble)x->F.nnz + (x->set.guard ? 2.0 * MATXTRACT_GPU_TIME_REPS * t_cur : 0.0);
  d    = mx_upgrade_decide(t_cur, (1.0 - MATXTRACT_HUB_GAIN) * t_cur, cost, spent, (double)x->set.expected_mults);
  if (d == MX_UPGRADE_LATER) PetscFunctionReturn(PETSC_SUCCESS);
  x->hub_pending = PETSC_FALSE;
  if (d == MX_UPGRADE_NEVER) {
    PetscCall(PetscInfo(A, "matxtract: no hub split: the %" PetscInt_FMT " expected MatMults cannot pay for it (estimated %g s) at its assumed gain %g\n", x->set.expected_mults, (double)cost, MATXTRACT_HUB_GAIN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(A, "matxtract: hub split after %" PetscInt_FMT " MatMults: %g s spent on them would have saved its estimated %g s at its assumed gain %g\n", (PetscInt)x->plan.mults, (double)spent, (double)cost, MATXTRACT_HUB_GAIN));
  /* the split and the guard's products run on the default stream: the products in flight on PETSc's stream finish first */
  PetscCall(MatXtractCheckDevice(A, mx_device_synchronize(), "waiting for the products in flight"));
  PetscCall(MatXtractHubRuleAdmits(A, &admits));
  if (!admits) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractMakeHub(A, &made));
  if (!made || !x->set.guard) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!mx_device_time_spmv(x->D, MATXTRACT_GPU_TIME_REPS, &t_split), PetscObjectComm((PetscObject)A), PETSC_ERR_LIB, "matxtract: timing the hub split failed: %s", mx_device_last_error());
  if (t_split < t_cur) {
    x->plan.t_mult = t_split;
    PetscCall(PetscInfo(A, "matxtract: guard: the hub split runs %g s per MatMult vs %g s: kept\n", t_split, (double)t_cur));
  } else {
    mx_csr csr;
    PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
    PetscCall(MatXtractCheckDevice(A, mx_device_hub(x->D, &csr, 0), "dropping the hub split"));
    PetscCall(PetscInfo(A, "matxtract: guard: the hub split runs %g s per MatMult vs %g s: dropped\n", t_split, (double)t_cur));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Build the format of plan p for the current pattern and values (the formats in use dropped): on
 * the GPU when one is in use, else on the host (where at a crux without hot nonzeros, the default
 * (0,0), F's cold CSR is A's own arrays, or the 32-bit index copies, which live as long as F: no
 * copy). */
PetscErrorCode MatXtractBuildPlan_SeqAIJ(Mat A, const mx_plan *p)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  mx_csr         csr;
  PetscBool      use_device;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  MatXtractFreeFormats(x);
  PetscCall(MatXtractUseDevice(A, &use_device));
  PetscCall(PetscLogEventBegin(MATXTRACT_Build, A, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(MatXtractGetCSR_SeqAIJ(A, &csr));
  PetscCall(PetscInfo(A, "matxtract: building crux (%g,%g) of %d x %d, %d nonzeros on the %s\n", p->crux.tau_c, p->crux.tau_r, (int)csr.nrows, (int)csr.ncols, (int)csr.rowptr[csr.nrows], use_device ? "GPU" : "CPU"));
  if (use_device) PetscCall(MatXtractBuildOnDevice(A, &csr, p, &x->F, &x->D));
  if (use_device) PetscCall(MatXtractSetDefaultVecType(A, (PetscBool)(x->D != NULL))); /* the CPU fallback: host vectors */
  if (!x->D) PetscCall(MatXtractCheckStatus(A, mx_format_build_borrow(&csr, p->crux, p->mode, &x->F), "building the format"));
  PetscCall(MatXtractCompressAtBuild(A));
  PetscCall(MatXtractHubAtBuild(A));
  PetscCall(PetscTime(&t1));
  PetscCall(PetscLogEventEnd(MATXTRACT_Build, A, 0, 0, 0));
  x->build_seconds = t1 - t0;
  x->nbuilds++;
  if (x->verify_columns) PetscCall(MatXtractColumnFingerprint(A, &x->columns_fingerprint));
  PetscCall(PetscInfo(A, "matxtract: built crux (%g,%g) on the %s in %g s: hot %d x %d, hot nnz %d, cold nnz %d, mode %s\n", x->F.crux.tau_c, x->F.crux.tau_r, x->D ? "GPU" : "CPU", (double)x->build_seconds, (int)x->F.hot_nrows, (int)x->F.hot_ncols, (int)x->F.hot_nnz, (int)x->F.cold_nnz, MatXtractHotNames[x->F.mode]));
  x->built = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Build the format for a new pattern or new settings: the pattern's first plan (matxtract_plan.c),
 * then, on the GPU, its time per MatMult when the predictor needs it. */
static PetscErrorCode MatXtractBuild(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  mx_plan        plan;

  PetscFunctionBegin;
  PetscCall(MatXtractFreeShadow(x));
  PetscCall(MatXtractPlanFirst(A, &plan));
  PetscCall(MatXtractBuildPlan_SeqAIJ(A, &plan));
  PetscCall(MatXtractPlanAfterBuild(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block whose columns MPIAIJ may renumber in place (verify_columns): whether they changed since
 * the build (a value-only state change must then rebuild). */
static PetscErrorCode MatXtractColumnsChanged(Mat A, PetscBool *changed)
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
static PetscErrorCode MatXtractRefresh(Mat A)
{
  Mat_MatXtract     *x = (Mat_MatXtract *)A->spptr;
  const PetscScalar *aa;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MATXTRACT_Refresh, A, 0, 0, 0));
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  if (x->D) {
    const PetscBool split = MatXtractHubInUse(x); /* before the refresh, which drops it */
    PetscBool       made;
    PetscCall(MatXtractCheckDevice(A, mx_device_refresh_values(x->D, (const double *)aa, MatXtractStream()), "value refresh"));
    if (split) PetscCall(MatXtractMakeHub(A, &made)); /* split the new values again */
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

/* Make the shadow match A: nothing, values only, or a rebuild. */
PetscErrorCode MatXtractSync_SeqAIJ(Mat A)
{
  Mat_MatXtract   *x = (Mat_MatXtract *)A->spptr;
  PetscObjectState state;
  PetscBool        renumbered = PETSC_FALSE;

  PetscFunctionBegin;
  if (A->structure_only) PetscFunctionReturn(PETSC_SUCCESS); /* MAT_STRUCTURE_ONLY: no values, no format */
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (x->built && state == x->state) PetscFunctionReturn(PETSC_SUCCESS);
  if (x->built && A->nonzerostate == x->nzstate) PetscCall(MatXtractColumnsChanged(A, &renumbered));
  if (x->built && A->nonzerostate == x->nzstate && !renumbered) PetscCall(MatXtractRefresh(A));
  else PetscCall(MatXtractBuild(A));
  x->state   = state;
  x->nzstate = A->nonzerostate;
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
static PetscErrorCode MatXtractSyncTranspose(Mat A)
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
static PetscErrorCode MatXtractApply(Mat A, PetscBool transpose, Vec xx, Vec zz, Vec yy, PetscLogDouble *cpu_seconds)
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

/* Products need values: a structure-only matrix (MAT_STRUCTURE_ONLY) has none and builds no format. */
static PetscErrorCode MatXtractCheckHasValues(Mat A)
{
  PetscFunctionBegin;
  PetscCheck(!A->structure_only, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "matxtract: a structure-only matrix (MAT_STRUCTURE_ONLY) has no values to multiply");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A xx (+ zz) on a synced shadow; the plan may be upgraded (matxtract_plan.c), the cold
 * region packed (the amortised pack) and split (the amortised hub split) first. */
static PetscErrorCode MatXtractMult(Mat A, Vec xx, Vec zz, Vec yy)
{
  PetscLogDouble cpu_seconds;

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  PetscCall(MatXtractPlanBeforeMult(A));
  PetscCall(MatXtractPackBeforeMult(A));
  PetscCall(MatXtractHubBeforeMult(A));
  PetscCall(MatXtractApply(A, PETSC_FALSE, xx, zz, yy, &cpu_seconds));
  PetscCall(MatXtractPlanAfterMult(A, cpu_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SeqAIJMatXtract(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatXtractMult(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SeqAIJMatXtract(Mat A, Vec xx, Vec zz, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatXtractMult(A, xx, zz, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_SeqAIJMatXtract(Mat A, Vec xx, Vec yy)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble cpu_seconds; /* not counted: the plan is chosen for A x */

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  if (x->D) PetscCall(MatXtractSyncTranspose(A));
  if (x->D && !x->Dt) PetscCall((*x->base.multtranspose)(A, xx, yy)); /* A^T's GPU build failed under auto; F is device-only */
  else PetscCall(MatXtractApply(A, PETSC_TRUE, xx, NULL, yy, &cpu_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_SeqAIJMatXtract(Mat A, Vec xx, Vec zz, Vec yy)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscLogDouble cpu_seconds; /* not counted: the plan is chosen for A x */

  PetscFunctionBegin;
  PetscCall(MatXtractCheckHasValues(A));
  PetscCall(MatXtractSync_SeqAIJ(A));
  if (x->D) PetscCall(MatXtractSyncTranspose(A));
  if (x->D && !x->Dt) PetscCall((*x->base.multtransposeadd)(A, xx, zz, yy)); /* A^T's GPU build failed under auto; F is device-only */
  else PetscCall(MatXtractApply(A, PETSC_TRUE, xx, zz, yy, &cpu_seconds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractInstallOps(Mat A);

static PetscErrorCode MatAssemblyEnd_SeqAIJMatXtract(Mat A, MatAssemblyType mode)
{
  Mat_MatXtract   *x = (Mat_MatXtract *)A->spptr;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall((*x->base.assemblyend)(A, mode));
  PetscCall(MatXtractInstallOps(A)); /* AIJ's assembly may reinstall its own (e.g. inode) ops */
  if (mode == MAT_FLUSH_ASSEMBLY) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatXtractSync_SeqAIJ(A));
  /* MatAssemblyEnd() increases the object state once after this returns: the shadow already
   * holds the values of that state. */
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  x->state = state + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SeqAIJMatXtract(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*x->base.duplicate)(A, op, B));
  /* AIJ's duplicate set the type (our create ran) and copied the arrays; settings follow, the
   * shadow is built lazily at B's first product. */
  if (!(*B)->spptr) PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(*B, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, B));
  PetscCall(MatXtractSetSettings_SeqAIJ(*B, &x->set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractViewInfo_SeqAIJ(Mat A, PetscViewer viewer)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  MatXtractInfo  info;

  PetscFunctionBegin;
  PetscCall(MatXtractGetInfo(A, &info));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: crux (tau_c, tau_r) = (%g, %g) from %s\n", (double)info.tau_c, (double)info.tau_r, MatXtractSourceNames[info.crux_source]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: hot region %" PetscInt_FMT " rows x %" PetscInt_FMT " cols, hot nnz %" PetscInt_FMT " (%.1f%%), cold nnz %" PetscInt_FMT ", hot mode %s (requested %s)\n", info.hot_rows, info.hot_cols, info.hot_nnz,
                                   x->F.nnz ? 100.0 * (double)info.hot_nnz / (double)x->F.nnz : 0.0, info.cold_nnz, info.hot_mode, info.hot_mode_requested));
  PetscCall(MatXtractPlanView(A, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: format %zu bytes vs CSR %zu bytes (%.3fx)%s\n", info.format_bytes, info.csr_bytes, info.csr_bytes ? (double)info.format_bytes / (double)info.csr_bytes : 1.0, x->F.cold_borrowed ? "; its cold CSR is the AIJ arrays themselves (no host copy)" : ""));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: built on the %s in %.3g ms (build %" PetscInt_FMT " of this matrix)%s\n", info.on_device ? "GPU" : "CPU", 1e3 * info.build_seconds, info.builds, info.on_device ? "" : " (host builder)"));
  if (info.compress_packed && info.compress_row_patterns > 0) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: cold region in row-pattern form (-mat_matxtract_compress %s): %" PetscInt_FMT " row patterns, %" PetscInt_FMT " entries in all, a %d-byte pattern id per row: %.3g bytes per nonzero vs %.3g plain (%.3fx)%s\n", info.compress, info.compress_row_patterns, info.compress_pattern_entries,
                                     info.compress_row_patterns > 256 ? 2 : 1, info.packed_bytes_per_nnz, info.plain_bytes_per_nnz, info.plain_bytes_per_nnz > 0 ? info.packed_bytes_per_nnz / info.plain_bytes_per_nnz : 1.0,
                                     info.compress_in_use ? "" : "; not read: the cold kernel in use is not the segment kernel"));
  } else if (info.compress_packed) {
    char dict[64] = "";
    if (info.compress_dict) PetscCall(PetscSNPrintf(dict, sizeof dict, " (%" PetscInt_FMT " %s)", info.compress_dict, strcmp(info.compress_values, "colconst") ? "entries" : "column constants"));
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: cold region packed (-mat_matxtract_compress %s): values %s%s, columns %s, row pointers %s: %.3g bytes per nonzero vs %.3g plain (%.3fx)%s%s\n", info.compress, info.compress_values, dict, info.compress_columns, info.compress_rows, info.packed_bytes_per_nnz,
                                     info.plain_bytes_per_nnz, info.plain_bytes_per_nnz > 0 ? info.packed_bytes_per_nnz / info.plain_bytes_per_nnz : 1.0, info.compress_fell_back ? "; the last value refresh fell back to plain values" : "",
                                     info.compress_in_use ? "" : "; not read: the cold kernel in use reads the plain CSR"));
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: cold region %s%s, %.3g bytes per nonzero\n", info.compress_note ? info.compress_note : "not packed", info.compress_fell_back ? " (the last value refresh fell back to plain values)" : "", info.plain_bytes_per_nnz));
  if (info.compress_patterns_lost) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: the last value refresh found the row patterns no longer hold the values\n"));
  if (info.hot_bytes_per_slot > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: SE hot region values %s: %.3g bytes per slot vs 12 plain\n", info.compress_hot_values, info.hot_bytes_per_slot));
  if (info.hub_columns > 0) {
    char req[32] = "auto";
    if (info.hub_requested != MATXTRACT_HUB_AUTO) PetscCall(PetscSNPrintf(req, sizeof req, "%" PetscInt_FMT, info.hub_requested));
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: hub split (-mat_matxtract_hub %s): %" PetscInt_FMT " hub columns hold %" PetscInt64_FMT " nonzeros (%.1f%%), their x values in shared memory, added after the rest's cold kernel\n", req, info.hub_columns, info.hub_nnz,
                                     x->F.nnz ? 100.0 * (double)info.hub_nnz / (double)x->F.nnz : 0.0));
  } else if (info.hub_requested > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: hub split requested (-mat_matxtract_hub %" PetscInt_FMT ") but not in use: it needs the GPU and an all-cold plan (-info says why)\n", info.hub_requested));
  if (info.on_device) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult on the GPU, %zu device bytes (peak while building %zu), cold kernel %s\n", info.device_bytes, info.build_peak_bytes, MatXtractColdNames[mx_device_cold_kernel(x->D)]));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult on the CPU (%s)\n", x->set.device_choice == MATXTRACT_DEVICE_CPU ? "-mat_matxtract_device cpu" : "no usable GPU"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_SeqAIJMatXtract(Mat A, PetscViewer viewer)
{
  Mat_MatXtract    *x = (Mat_MatXtract *)A->spptr;
  PetscBool         ascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  if (x->base.view) PetscCall((*x->base.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii || !A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format == PETSC_VIEWER_ASCII_INFO_DETAIL) PetscCall(MatXtractViewInfo_SeqAIJ(A, viewer)); /* ::ascii_info stays AIJ's */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SeqAIJMatXtract(Mat A, PetscOptionItems *PetscOptionsObject)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscBool      changed;

  PetscFunctionBegin;
  if (x->base.setfromoptions) PetscCall((*x->base.setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatXtractSettingsFromOptions(A, PetscOptionsObject, &x->set, &changed));
  if (changed) x->built = PETSC_FALSE; /* rebuilt at the next assembly or product */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Settings from the MPI type or a duplicate; different settings rebuild the shadow at the next
 * product. */
PetscErrorCode MatXtractSetSettings_SeqAIJ(Mat A, const MatXtractSettings *set)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (!MatXtractSettingsEqual(&x->set, set)) x->built = PETSC_FALSE;
  PetscCall(MatXtractSettingsCopy(set, &x->set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A is a block whose column indices MPIAIJ may renumber in place without a new nonzero state (the
 * off-diagonal block at assembly): a value change then rebuilds only if its columns changed. */
PetscErrorCode MatXtractSetVerifyColumns_SeqAIJ(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (!x->verify_columns) x->built = PETSC_FALSE; /* the next build records the fingerprint */
  x->verify_columns = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractSetCrux_SeqAIJ(Mat A, PetscReal tau_c, PetscReal tau_r)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatXtractSettingsSetCrux(A, &x->set, tau_c, tau_r, MATXTRACT_CRUX_USER));
  x->built = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The compression fields of info (the format built): the cold region's encodings and its bytes per
 * cold nonzero as MatMult reads them vs plain CSR. */
static PetscErrorCode MatXtractPackGetInfo(Mat A, MatXtractInfo *info)
{
  Mat_MatXtract *x     = (Mat_MatXtract *)A->spptr;
  const double   cold  = (double)x->F.cold_nnz;
  const size_t   plain = x->built ? mx_csr_bytes(x->F.nrows, x->F.cold_nnz) : 0;
  size_t         bytes = plain;

  PetscFunctionBegin;
  info->compress              = MatXtractCompressNames[x->set.compress];
  info->compress_packed       = PETSC_FALSE;
  info->compress_in_use       = PETSC_FALSE;
  info->compress_values       = mx_val_enc_name(MX_VAL_PLAIN);
  info->compress_columns      = mx_idx_enc_name(MX_IDX_PLAIN);
  info->compress_rows         = mx_row_enc_name(MX_ROW_PLAIN);
  info->compress_dict         = 0;
  info->compress_fell_back    = PETSC_FALSE;
  info->compress_row_patterns = 0;
  info->compress_pattern_entries = 0;
  info->compress_patterns_lost = PETSC_FALSE;
  info->compress_hot_values   = mx_val_enc_name(MX_VAL_PLAIN);
  info->hot_bytes_per_slot    = 0.0;
  info->compress_note         = x->built ? x->pack_note : "not built";
  if (x->D) {
    mx_device_pack_info pi;
    PetscCall(MatXtractCheckDevice(A, mx_device_compress_info(x->D, &pi), "reading the cold region's encodings"));
    if (pi.packed) {
      info->compress_packed  = PETSC_TRUE;
      info->compress_in_use  = pi.in_use ? PETSC_TRUE : PETSC_FALSE;
      info->compress_values  = mx_val_enc_name(pi.val_enc);
      info->compress_columns = mx_idx_enc_name(pi.idx_enc);
      info->compress_rows    = mx_row_enc_name(pi.row_enc);
      info->compress_dict    = pi.ndict;
      info->compress_row_patterns    = pi.rowpat ? pi.npat : 0;
      info->compress_pattern_entries = pi.rowpat ? pi.nent : 0;
      bytes                  = pi.bytes;
    }
    info->compress_fell_back = pi.fell_back ? PETSC_TRUE : PETSC_FALSE;
    info->compress_patterns_lost = pi.rowpat_lost ? PETSC_TRUE : PETSC_FALSE;
    info->compress_hot_values    = mx_val_enc_name(pi.hot_val_enc);
    info->hot_bytes_per_slot     = pi.hot_plain_bytes ? 12.0 * (double)pi.hot_bytes / (double)pi.hot_plain_bytes : 0.0;
    if (!pi.packed && x->set.compress != MATXTRACT_COMPRESS_OFF && !x->pack_note) info->compress_note = "not packed (plain values and columns)"; /* fell back since the build */
  } else if (x->rowpat) {
    info->compress_packed          = PETSC_TRUE;
    info->compress_in_use          = PETSC_TRUE;
    info->compress_row_patterns    = x->RP.npat;
    info->compress_pattern_entries = x->RP.nent;
    bytes                          = mx_cold_rowpat_bytes(&x->RP);
  } else if (x->packed) {
    info->compress_packed    = MatXtractPackActive(x);
    info->compress_in_use    = info->compress_packed;
    info->compress_values    = mx_val_enc_name(x->P.val_enc);
    info->compress_columns   = mx_idx_enc_name(x->P.idx_enc);
    info->compress_rows      = mx_row_enc_name(x->P.row_enc);
    info->compress_dict      = x->P.ndict;
    info->compress_fell_back = x->P.fell_back ? PETSC_TRUE : PETSC_FALSE;
    if (info->compress_packed) bytes = mx_cold_pack_bytes(&x->P);
    else if (!x->pack_note) info->compress_note = "not packed (plain values and columns)";
  }
  if (!x->D) {
    info->compress_patterns_lost = x->patterns_lost;
    info->compress_hot_values    = mx_val_enc_name(x->HP.enc);
    info->hot_bytes_per_slot     = x->F.mode == MX_HOT_SE && x->F.se_nslots > 0 ? (double)mx_hot_pack_bytes(&x->F, &x->HP) / (double)x->F.se_nslots : 0.0;
  }
  info->packed_bytes_per_nnz = cold > 0 ? (double)bytes / cold : 0.0;
  info->plain_bytes_per_nnz  = cold > 0 ? (double)plain / cold : 0.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractGetInfo_SeqAIJ(Mat A, MatXtractInfo *info)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;

  PetscFunctionBegin;
  if (A->assembled) PetscCall(MatXtractSync_SeqAIJ(A));
  info->tau_c        = x->built ? x->F.crux.tau_c : x->set.crux.tau_c;
  info->tau_r        = x->built ? x->F.crux.tau_r : x->set.crux.tau_r;

  info->hot_rows     = x->F.hot_nrows;
  info->hot_cols     = x->F.hot_ncols;
  info->hot_nnz      = x->F.hot_nnz;
  info->cold_nnz     = x->F.cold_nnz;
  info->hot_mode     = MatXtractHotNames[x->F.mode];
  info->format_bytes = x->built ? mx_format_bytes(&x->F) : 0;
  info->csr_bytes    = mx_csr_bytes(x->F.nrows, x->F.nnz);
  info->device_bytes = x->D ? mx_device_bytes(x->D) : 0;
  info->build_peak_bytes = x->D ? mx_device_build_peak_bytes(x->D) : 0;
  info->build_seconds  = x->build_seconds;
  info->builds         = x->nbuilds;
  info->on_device    = x->D ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MatXtractPlanGetInfo(A, info));
  PetscCall(MatXtractPackGetInfo(A, info));
  {
    int     K    = 0;
    int64_t hnnz = 0;
    mx_device_hub_info(x->D, &K, &hnnz);
    info->hub_requested = x->set.hub;
    info->hub_columns   = (PetscInt)K;
    info->hub_nnz       = (PetscInt64)hnnz;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractComposeAll(Mat A, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijmatxtract_seqaij_C", on ? MatConvert_SeqAIJMatXtract_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqaijmatxtract_C", on ? MatConvert_SeqAIJ_SeqAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_matxtract_C", on ? MatConvert_SeqAIJ_SeqAIJMatXtract : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatXtractSetCrux_C", on ? MatXtractSetCrux_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatXtractGetInfo_C", on ? MatXtractGetInfo_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", on ? MatProductSetFromOptions_MatXtract : NULL));
  PetscCall(MatXtractComposeConverters(A, "seq", on));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SeqAIJMatXtract(Mat A)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  PetscErrorCode (*base_destroy)(Mat) = x->base.destroy;

  PetscFunctionBegin;
  PetscCall(MatXtractFreeShadow(x));
  PetscCall(MatXtractSettingsDestroy(&x->set));
  PetscCall(MatXtractComposeAll(A, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*base_destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* In-place factorizations (MatLUFactor, MatILUFactor, MatCholeskyFactor, MatICCFactor) turn A into
 * a factor: AIJ's replace A's data (MatHeaderMerge keeps A's ops and type name, not its spptr), and
 * a factor has no products for the shadow to serve. So A becomes plain SeqAIJ first (shadow freed,
 * AIJ's ops back), then AIJ factors it: every op and the destroy stay AIJ's. */
static PetscErrorCode MatXtractToAIJForFactor(Mat A)
{
  PetscFunctionBegin;
  PetscCall(PetscInfo(A, "matxtract: in-place factorization: the matrix becomes %s first\n", MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJMatXtract_SeqAIJ(A, MATSEQAIJ, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactor_SeqAIJMatXtract(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->lufactor)(A, row, col, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatILUFactor_SeqAIJMatXtract(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->ilufactor)(A, row, col, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactor_SeqAIJMatXtract(Mat A, IS perm, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->choleskyfactor)(A, perm, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatICCFactor_SeqAIJMatXtract(Mat A, IS row, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(MatXtractToAIJForFactor(A));
  PetscCall((*A->ops->iccfactor)(A, row, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatXtractInstallOps(Mat A)
{
  PetscFunctionBegin;
  A->ops->mult             = MatMult_SeqAIJMatXtract;
  A->ops->multadd          = MatMultAdd_SeqAIJMatXtract;
  A->ops->multtranspose    = MatMultTranspose_SeqAIJMatXtract;
  A->ops->multtransposeadd = MatMultTransposeAdd_SeqAIJMatXtract;
  A->ops->assemblyend      = MatAssemblyEnd_SeqAIJMatXtract;
  A->ops->destroy          = MatDestroy_SeqAIJMatXtract;
  A->ops->duplicate        = MatDuplicate_SeqAIJMatXtract;
  A->ops->view             = MatView_SeqAIJMatXtract;
  A->ops->setfromoptions   = MatSetFromOptions_SeqAIJMatXtract;
  if (A->ops->lufactor) A->ops->lufactor = MatLUFactor_SeqAIJMatXtract;
  if (A->ops->ilufactor) A->ops->ilufactor = MatILUFactor_SeqAIJMatXtract;
  if (A->ops->choleskyfactor) A->ops->choleskyfactor = MatCholeskyFactor_SeqAIJMatXtract;
  if (A->ops->iccfactor) A->ops->iccfactor = MatICCFactor_SeqAIJMatXtract;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqAIJ_SeqAIJMatXtract(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat               B = *newmat;
  Mat_MatXtract    *x;
  MatXtractSettings set;

  PetscFunctionBegin;
  PetscCall(MatXtractConvertBegin(A, reuse, &B));
  if (B->spptr) PetscFunctionReturn(PETSC_SUCCESS); /* already ours (duplicate of a matxtract) */
  PetscCall(MatXtractConvertSettings(&B, reuse, &set));

  PetscCall(PetscNew(&x));
  x->set                   = set; /* takes set's model reference */
  B->spptr                 = x;
  x->base.assemblyend      = B->ops->assemblyend;
  x->base.destroy          = B->ops->destroy;
  x->base.duplicate        = B->ops->duplicate;
  x->base.view             = B->ops->view;
  x->base.setfromoptions   = B->ops->setfromoptions;
  x->base.mult             = B->ops->mult;
  x->base.multadd          = B->ops->multadd;
  x->base.multtranspose    = B->ops->multtranspose;
  x->base.multtransposeadd = B->ops->multtransposeadd;
  x->base.lufactor         = B->ops->lufactor;
  x->base.ilufactor        = B->ops->ilufactor;
  x->base.choleskyfactor   = B->ops->choleskyfactor;
  x->base.iccfactor        = B->ops->iccfactor;
  PetscCall(MatXtractInstallOps(B));
  PetscCall(MatXtractComposeAll(B, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJMATXTRACT));
  PetscCall(MatXtractSetDefaultVecType(B, MatXtractSettingsWantDevice(&x->set)));
  /* no build here: MatConvert raises the object state after this returns, so a shadow built now
   * would be refreshed (all values copied again) at the first product; MatMult, MatView or
   * MatXtractGetInfo build it (as aijcusparse uploads at its first product) */
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqAIJMatXtract_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat            B = *newmat;
  Mat_MatXtract *x;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) { /* B is the SeqAIJ of an earlier MatConvert: values only */
    PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  x = (Mat_MatXtract *)B->spptr;
  PetscCall(MatXtractFreeShadow(x));
  PetscCall(MatXtractSettingsDestroy(&x->set));
  PetscCall(MatXtractComposeAll(B, PETSC_FALSE));
  B->ops->assemblyend    = x->base.assemblyend;
  B->ops->destroy        = x->base.destroy;
  B->ops->duplicate      = x->base.duplicate;
  B->ops->view           = x->base.view;
  B->ops->setfromoptions   = x->base.setfromoptions;
  B->ops->mult             = x->base.mult;
  B->ops->multadd          = x->base.multadd;
  B->ops->multtranspose    = x->base.multtranspose;
  B->ops->multtransposeadd = x->base.multtransposeadd;
  B->ops->lufactor         = x->base.lufactor;
  B->ops->ilufactor        = x->base.ilufactor;
  B->ops->choleskyfactor   = x->base.choleskyfactor;
  B->ops->iccfactor        = x->base.iccfactor;
  PetscCall(PetscFree(B->spptr));
  PetscCall(PetscFree(B->defaultvectype));
  PetscCall(PetscStrallocpy(VECSTANDARD, &B->defaultvectype));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_SeqAIJMatXtract(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAIJMatXtract(A, MATSEQAIJMATXTRACT, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* matxtract_view.c - what a sequential block tells about itself: MatXtractGetInfo and the
 * -mat_view ::ascii_info_detail lines (::ascii_info stays AIJ's). Reads the plan, the levers and the
 * shadow; changes nothing but syncing the shadow with the matrix first. */
#include "matxtract_impl.h"
#include <math.h>

static const char *const MatXtractHotNames[] = {"none", "du", "se"};


const char *MatXtractCruxSourceName(MatXtractCruxSource source)
{
  static const char *const names[] = {"default", "option", "user", "predictor", "upgrade", "guard"};

  return (int)source >= 0 && (size_t)source < sizeof names / sizeof names[0] ? names[source] : "unknown";
}

/* Where a plan part came from, in -mat_view's words. */
static const char *MatXtractSourceText(MatXtractCruxSource s, const char *option)
{
  return s == MATXTRACT_CRUX_OPTION ? option : s == MATXTRACT_CRUX_USER ? "MatXtractSetCrux" : MatXtractCruxSourceName(s);
}

/* The plan's part of MatXtractGetInfo. */
static PetscErrorCode MatXtractPlanGetInfo(Mat A, MatXtractInfo *info)
{
  Mat_MatXtract            *x  = (Mat_MatXtract *)A->spptr;
  const MatXtractPlanState *st = &x->plan;
  PetscLogDouble            t_cur, spent;

  PetscFunctionBegin;
  MatXtractPlanTimes(x, &t_cur, &spent);
  info->crux_source            = x->built ? st->src_crux : x->set.crux_source;
  info->mode_source            = st->src_mode;
  info->cold_source            = st->src_cold;
  info->hot_mode_requested     = mx_plan_mode_name(st->plan.mode);
  info->cold_kernel            = x->D ? MatXtractColdNames[mx_device_cold_kernel(x->D)] : "cpu";
  info->predicted              = st->predicted;
  info->pred_tau_c             = st->predicted ? st->pred_plan.crux.tau_c : 0;
  info->pred_tau_r             = st->predicted ? st->pred_plan.crux.tau_r : 0;
  info->pred_hot_mode          = st->predicted ? mx_plan_mode_name(st->pred_plan.mode) : "";
  info->pred_cold_kernel       = st->predicted ? mx_plan_cold_name(st->pred_plan.cold) : "";
  info->upgrade_tried          = (PetscBool)(x->built && (x->levers[MATXTRACT_LEVER_REBUILD].state == MX_LEVER_KEPT || x->levers[MATXTRACT_LEVER_REBUILD].state == MX_LEVER_FAILED || x->levers[MATXTRACT_LEVER_REBUILD].t_after_s > 0));
  info->mult_seconds           = t_cur;
  info->mult_seconds_predicted = st->t_pred;
  info->mults                  = st->mults;
  info->model_trained_on       = MatXtractSettingsModel(&x->set)->trained_on;
  info->plan_settled           = MatXtractPlanSettled(x);
  info->features_on_gpu        = st->predicted ? st->features_on_gpu : PETSC_FALSE;
  info->predict_seconds        = st->predicted ? st->predict_seconds : 0.0;
  info->predict_pending        = st->predict_pending;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_view ::ascii_info_detail lines about the plan, the predictor and the levers. */
static PetscErrorCode MatXtractPlanView(Mat A, PetscViewer viewer)
{
  Mat_MatXtract            *x  = (Mat_MatXtract *)A->spptr;
  const MatXtractPlanState *st = &x->plan;
  const MatXtractSettings  *set = &x->set;
  PetscLogDouble            t_cur, spent;
  char                      expected[32] = "unknown";

  PetscFunctionBegin;
  MatXtractPlanTimes(x, &t_cur, &spent);
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: plan: crux from %s, hot mode %s from %s, cold kernel %s from %s\n", MatXtractSourceText(st->src_crux, "option -mat_matxtract_crux"), mx_plan_mode_name(st->plan.mode), MatXtractSourceText(st->src_mode, "option -mat_matxtract_mode"), mx_plan_cold_name(st->plan.cold),
                                   MatXtractSourceText(st->src_cold, "option -mat_matxtract_cold")));
  if (set->expected_mults) PetscCall(PetscSNPrintf(expected, sizeof expected, "%" PetscInt_FMT, set->expected_mults));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: predictor %s, upgrade %s, guard %s, expected MatMults %s; model %s, trained on: %s\n", set->predictor ? "on" : "off", MatXtractUpgradeNames[set->upgrade], set->guard ? "on" : "off", expected, set->model ? set->model->path : "embedded",
                                   MatXtractSettingsModel(set)->trained_on));
  if (st->predicted)
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: predicted plan crux (%g, %g) hot mode %s cold kernel %s, %.3gx the time of the plan then in use; features (on the %s) + prediction %.3g ms\n", st->pred_plan.crux.tau_c, st->pred_plan.crux.tau_r, mx_plan_mode_name(st->pred_plan.mode), mx_plan_cold_name(st->pred_plan.cold), exp(st->log_ratio_pred - st->log_ratio_cur), st->features_on_gpu ? "GPU" : "CPU", 1e3 * st->predict_seconds));
  else if (st->predict_pending) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: predicting: the feature passes run on the GPU (%" PetscInt_FMT " MatMults on the plan so far; the next MatMult after they ran collects them)\n", st->mults));
  if (st->t_pred > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult predicted %.4g us for the predicted plan (from the plan then in use, measured)\n", 1e6 * st->t_pred));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult measured %.4g us for the plan in use (%" PetscInt_FMT " MatMults on it; 0: not measured yet)\n", 1e6 * t_cur, st->mults));
  for (int i = 0; i < MATXTRACT_NLEVERS; i++) { /* the plan engine: one line per lever */
    const mx_lever *L = &x->levers[i];
    char            num[128] = "";
    if (!x->built || !L->row) continue;
    if (L->state == MX_LEVER_PENDING && L->cost_s > 0) PetscCall(PetscSNPrintf(num, sizeof num, " (last weighed: cost %.3g ms for %.4g us per MatMult after it; %.3g ms spent on the plan)", 1e3 * L->cost_s, 1e6 * L->t_new_s, 1e3 * spent));
    else if (L->t_after_s > 0) PetscCall(PetscSNPrintf(num, sizeof num, " (guard: %.4g us vs %.4g us before)", 1e6 * L->t_after_s, 1e6 * L->t_before_s));
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: lever %s: %s%s%s%s\n", L->row->name, mx_lever_state_name(L->state), L->why ? ": " : "", L->why ? L->why : "", num));
  }
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

PetscErrorCode MatXtractGetInfo_SeqAIJ(Mat A, MatXtractInfo *info)
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
  info->spmm_min_k            = x->D ? 0 : 1;
  info->spmm_lanes_per_row    = 0;
  info->spmm_hot_tensor_cores = PETSC_FALSE;
  if (x->D) {
    mx_spmm_plan plan;
    PetscCall(MatXtractCheckDevice(A, mx_device_spmm_plan(x->D, MATXTRACT_SPMM_VIEW_K, &plan), "planning the SpMM"));
    info->spmm_min_k            = plan.min_k_kernel;
    info->spmm_lanes_per_row    = plan.lanes_per_row;
    info->spmm_hot_tensor_cores = (PetscBool)(plan.hot_mode == MX_HOT_DU);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatXtractViewInfo_SeqAIJ(Mat A, PetscViewer viewer)
{
  Mat_MatXtract *x = (Mat_MatXtract *)A->spptr;
  MatXtractInfo  info;

  PetscFunctionBegin;
  PetscCall(MatXtractGetInfo(A, &info));
  PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: crux (tau_c, tau_r) = (%g, %g) from %s\n", (double)info.tau_c, (double)info.tau_r, MatXtractSourceText(info.crux_source, "option")));
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
  const PetscBool pairs = (PetscBool)(info.on_device && info.hub_columns == 0 && mx_device_cold_kernel(x->D) != MX_COLD_CUSPARSE); /* the SpMM's pairs, where x-hot does not code a segment kernel's cold part */
  if (info.on_device && info.spmm_min_k > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: products with k dense columns (A B, A' B) on the GPU: one SpMV per column for k < %" PetscInt_FMT ", else the SpMM kernels (cold: %" PetscInt_FMT " lanes per row, 8 columns of B per pass, or a row-major copy of B in panels of 2-64 columns, the last ones also padded to one panel of a power of two or, past the last multiple of 8, one SpMV each, 2 columns on the merge kernel's tiles where the cold kernel is merge and 2 columns of B fit half the L2; hot: %s, 8-column slabs) or one SpMV per column, whichever the first product of each k (each k below 8, then by powers of two) times fastest%s%s%s\n", info.spmm_min_k, info.spmm_lanes_per_row,
                                                                     info.spmm_hot_tensor_cores ? "FP64 tensor cores" : x->F.mode == MX_HOT_SE ? "CUDA cores" : "none", info.hub_columns > 0 ? "; under the hub split also its own way, timed with the others: its rest, then the hub part in groups of up to 8 columns" : x->F.mode != MX_HOT_NONE ? "; beside the hot part also the whole matrix all cold (crux (0,0)), a second device built for that timing and kept only where it is fastest" : "", info.compress_row_patterns > 0 ? "; the row-pattern form of the cold part also for all columns at once" : "", pairs ? "; two columns at a time by the SpMV's cold kernel also timed (below 8 columns, and wherever the rule is one SpMV per column)" : ""));
  else if (info.on_device) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: products with k dense columns (A B, A' B) on the GPU: one SpMV per column (the packed form moves fewer bytes at every k)%s\n", pairs ? ", or two columns at a time by the SpMV's cold kernel on the packed form, whichever the first product of each k (each k below 8, then by powers of two) times fastest" : ""));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: products with k dense columns (A B, A' B): the host SpMM, each nonzero read once per 8 columns\n"));
  if (info.on_device && mx_device_pack_plain_released(x->D)) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: the plain cold arrays the pack replaces are not held on the GPU (%zu bytes freed; decoded from the pack when a refresh or a lever needs them)\n", mx_device_pack_plain_released(x->D)));
  if (!info.on_device) PetscCall(PetscViewerASCIIPrintf(viewer, "MatXtract: MatMult on the CPU (%s)\n", x->set.device_choice == MATXTRACT_DEVICE_CPU ? "-mat_matxtract_device cpu" : "no usable GPU"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

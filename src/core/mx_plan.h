/* mx_plan.h - an execution plan of the MatXtract format (crux + hot mode + cold kernel), what
 * building it costs beyond the default plan, and when an online upgrade to it pays (pure C, no
 * PETSc, no CUDA).
 *
 * The default plan is crux (0,0): no hot region, the cold CSR borrows the input's arrays
 * (mx_format_build_borrow), so it costs the upload and little more. Any plan with tau_r > 0 builds
 * a hot region and pays an extra setup that the predictor estimates per nonzero (mx_setup_model). */
#ifndef MX_PLAN_H
#define MX_PLAN_H

#include "mx_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cold-region GPU kernel. The values equal src/cuda/mx_device.h's mx_cold_kernel (checked by
 * tests/core/test_core_predictor.c and tuning/predictor/label_runner.cu), so a plan converts by a
 * cast; core keeps its own enum because it may not include the CUDA layer's headers. AUTO = let the
 * upload apply the row-length rule (no timing: the predictor's kernel replaces it), TIMED = let the
 * upload time the kernels (the behaviour before the predictor). */
typedef enum {
  MX_PLAN_COLD_AUTO = 0,
  MX_PLAN_COLD_SEGMENT = 1,
  MX_PLAN_COLD_MERGE = 2,
  MX_PLAN_COLD_CUSPARSE = 3,
  MX_PLAN_COLD_TIMED = 4
} mx_plan_cold;
#define MX_PLAN_NCOLD 5

typedef struct {
  mx_crux crux;         /* 0 <= tau_r <= tau_c <= 1 */
  mx_mode_request mode; /* hot region format: auto (exact byte count), du, se */
  mx_plan_cold cold;    /* cold-region kernel */
} mx_plan;

/* MX_OK iff 0 <= tau_r <= tau_c <= 1 (no NaN), mode in {auto, du, se}, cold in {auto .. timed}. */
mx_status mx_plan_check(const mx_plan *p);

/* Names used in model files and reports: "auto" "du" "se"; "auto" "segment" "merge" "cusparse" "timed".
 * The parsers return 0 and set *out, or -1 for an unknown name. */
const char *mx_plan_mode_name(mx_mode_request m);
const char *mx_plan_cold_name(mx_plan_cold c);
int mx_plan_mode_parse(const char *s, mx_mode_request *out);
int mx_plan_cold_parse(const char *s, mx_plan_cold *out);

/* Extra setup of a plan over the default (0,0), per nonzero, linear in the crux:
 *   extra_seconds = 0                                                    if tau_r = 0 (no hot nonzero:
 *                                                                        the borrowed build)
 *                 = 1e-9 * nnz * max(0, ns_const + ns_tau_c*tau_c + ns_tau_r*tau_r)   otherwise.
 * The coefficients are fitted from the build + upload times measured with the labels. */
typedef struct {
  double ns_const, ns_tau_c, ns_tau_r;
} mx_setup_model;

double mx_setup_extra_seconds(const mx_setup_model *s, const mx_plan *p, double nnz);

/* Online upgrade from the current plan to a faster one (ski rental). Buying = paying extra_setup
 * once; renting = each MatMult on the current plan costs (t_cur - t_new) more than on the new one.
 *   expected_mults > 0 (the user says how many MatMults the solve makes, in total):
 *     NOW iff the remaining ones, expected_mults - spent/t_cur, earn the setup back strictly
 *     ((remaining) * (t_cur - t_new) > extra_setup), else NEVER: the offline optimum.
 *   expected_mults <= 0 (unknown): NOW before the MatMult that makes the regret of staying reach the
 *     setup, (spent + t_cur) * (t_cur - t_new) / t_cur >= extra_setup, else LATER. Staying for k
 *     calls then switching costs < 2x min(stay for all N calls, switch at once) for every N: the
 *     deterministic break-even rule of ski rental.
 *   NEVER whenever t_new >= t_cur or an input is not finite, t_cur or t_new <= 0, or extra_setup or
 *   spent < 0.
 * t_cur, t_new: seconds per MatMult; extra_setup: seconds; spent: seconds of MatMult already run on
 * the current plan. The rule "spent >= extra_setup" is 2-competitive too but pays the setup
 * as early when the gain t_cur - t_new is tiny as when it is large; the regret rule waits longer
 * exactly when the gain is small. */
typedef enum { MX_UPGRADE_NEVER = 0, MX_UPGRADE_NOW = 1, MX_UPGRADE_LATER = 2 } mx_upgrade;

mx_upgrade mx_upgrade_decide(double t_cur, double t_new, double extra_setup, double spent, double expected_mults);

#ifdef __cplusplus
}
#endif
#endif

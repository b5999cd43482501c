/* mx_plan.c - plan validity and names, the extra-setup model, and the ski-rental upgrade rule. */
#include <math.h>
#include <string.h>

#include "mx_core_internal.h"
#include "mx_plan.h"

static const char *const mode_names[] = {"auto", "du", "se"};
static const char *const cold_names[MX_PLAN_NCOLD] = {"auto", "segment", "merge", "cusparse", "timed"};

mx_status mx_plan_check(const mx_plan *p) {
  if (!p) return MX_ERR_ARG;
  mx_crux c;
  if (mx_crux_clamp(p->crux, &c) != MX_OK || c.tau_r != p->crux.tau_r) return MX_ERR_ARG;
  if ((int)p->mode < MX_MODE_AUTO || (int)p->mode > MX_MODE_SE) return MX_ERR_ARG;
  if ((int)p->cold < MX_PLAN_COLD_AUTO || (int)p->cold > MX_PLAN_COLD_TIMED) return MX_ERR_ARG;
  return MX_OK;
}

const char *mx_plan_mode_name(mx_mode_request m) {
  return ((int)m >= MX_MODE_AUTO && (int)m <= MX_MODE_SE) ? mode_names[m] : "?";
}

const char *mx_plan_cold_name(mx_plan_cold c) {
  return ((int)c >= 0 && (int)c < MX_PLAN_NCOLD) ? cold_names[c] : "?";
}

int mx_plan_mode_parse(const char *s, mx_mode_request *out) {
  for (int m = MX_MODE_AUTO; s && m <= MX_MODE_SE; m++)
    if (strcmp(s, mode_names[m]) == 0) return *out = (mx_mode_request)m, 0;
  return -1;
}

int mx_plan_cold_parse(const char *s, mx_plan_cold *out) {
  for (int c = 0; s && c < MX_PLAN_NCOLD; c++)
    if (strcmp(s, cold_names[c]) == 0) return *out = (mx_plan_cold)c, 0;
  return -1;
}

/* extra = 0 without hot nonzeros (tau_r = 0), else 1e-9 * nnz * max(0, linear in the crux). */
double mx_setup_extra_seconds(const mx_setup_model *s, const mx_plan *p, double nnz) {
  if (!s || !p || !(p->crux.tau_r > 0.0) || !(nnz > 0.0)) return 0.0;
  const double ns = s->ns_const + s->ns_tau_c * p->crux.tau_c + s->ns_tau_r * p->crux.tau_r;
  return ns > 0.0 ? 1e-9 * nnz * ns : 0.0;
}

/* Break-even ski rental: see mx_plan.h for the rule and its bound. */
mx_upgrade mx_upgrade_decide(double t_cur, double t_new, double extra_setup, double spent, double expected_mults) {
  if (!isfinite(t_cur) || !isfinite(t_new) || !isfinite(extra_setup) || !isfinite(spent) || isnan(expected_mults))
    return MX_UPGRADE_NEVER;
  if (!(t_cur > 0.0) || !(t_new > 0.0) || extra_setup < 0.0 || spent < 0.0 || !(t_new < t_cur)) return MX_UPGRADE_NEVER;
  const double gain = t_cur - t_new; /* saved per MatMult once switched */
  if (expected_mults > 0.0) {
    const double remaining = expected_mults - spent / t_cur;
    return remaining * gain > extra_setup ? MX_UPGRADE_NOW : MX_UPGRADE_NEVER;
  }
  return (spent + t_cur) * gain >= extra_setup * t_cur ? MX_UPGRADE_NOW : MX_UPGRADE_LATER;
}

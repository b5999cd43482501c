#!/usr/bin/env python3
"""test_label_regret.py PREDICTOR_DIR - tuning/predictor/label_regret.py on known labels: a plan's time is
the fastest evaluation at its crux, mode (hot plans only) and cold kernel; regret against the fastest plan;
a plan the labels never timed is counted apart; the percentiles. Exits 1 if a result is wrong."""
import sys

sys.path.insert(0, sys.argv[1])
import label_regret  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


def ev(tc, tr, mode, cold, t, ok=1):
    return {"ok": ok, "tc": tc, "tr": tr, "mode_req": mode, "cold": cold, "t_us": t}


LABELS = {
    "a": {"name": "a", "evals": [ev(0, 0, "auto", "segment", 50.0), ev(0, 0, "auto", "segment", 40.0),
                                 ev(0, 0, "auto", "merge", 32.0), ev(1, 1, "se", "merge", 30.0), ev(1, 1, "du", "merge", 20.0, ok=0)]},
    "b": {"name": "b", "evals": [ev(0, 0, "auto", "segment", 10.0), ev(1, 1, "se", "segment", 12.0)]},
}

expect(label_regret.plan_time(LABELS["a"], [0, 0, "auto", "segment"]) == 40.0, "the fastest of a plan's evaluations")
expect(label_regret.plan_time(LABELS["a"], [0, 0, "se", "merge"]) == 32.0, "at tau_r = 0 the mode does not count")
expect(label_regret.plan_time(LABELS["a"], [1, 1, "du", "merge"]) is None, "a failed evaluation is not a time")
expect(label_regret.plan_time(LABELS["a"], [1, 1, "se", "merge"]) == 30.0, "a hot plan by its mode")
expect(label_regret.best_time(LABELS["a"]) == 30.0, "the best is the fastest OK evaluation")
found, untimed = label_regret.regrets(LABELS, {"a": [[0, 0, "auto", "segment"]], "b": [[1, 1, "se", "segment"]],
                                               "c": [[0, 0, "auto", "segment"]]})
expect(abs(found["a"] - 40.0 / 30.0) < 1e-12 and abs(found["b"] - 1.2) < 1e-12 and "c" not in found,
       "regret = the predicted plan's time / the best; a matrix the labels lack is left out: %s" % found)
found, untimed = label_regret.regrets(LABELS, {"a": [[0.5, 0.5, "se", "merge"]]})
expect(found == {} and untimed == ["a"], "a plan never timed is counted apart")
expect(label_regret.percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5 and abs(label_regret.percentile([1.0, 2.0, 3.0, 4.0], 0.9) - 3.7) < 1e-12,
       "percentiles interpolate as numpy's default")
finish()

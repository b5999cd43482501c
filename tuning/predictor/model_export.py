"""model_export.py - the plan model as plain lists, written as the model file (src/core/mx_predictor.h
describes the format) and as the generated C source src/core/mx_model_default.c (the same arrays).

Pure Python (no numpy, no scikit-learn): from_sklearn() only reads the fitted estimators' public
tree_ arrays, so the placeholder model can be written on a machine without scikit-learn.

Why our own exporter and not m2cgen / emlearn / treelite+tl2cgen: (1) none of them is installed on
the GPU host (tuning/predictor/README.md), (2) they emit code (nested if/else), but the library must
also load a model FILE at run time for another GPU, and one set of arrays evaluated by one C function
(mx_model_eval) serves both, so the embedded model and a loaded file cannot disagree, (3) the
candidate plans and the setup model travel in the same file, which none of them carries.
"""

LEAF = -1
ENSEMBLES = ("sum", "mean", "weighted_median")
MODES = ("auto", "du", "se")
COLDS = ("auto", "segment", "merge", "cusparse")
PLAN_INPUTS = ["plan_tau_c", "plan_tau_r", "plan_mode", "plan_cold"]


class Model:
    """trees: list of (weight, nodes), nodes: list of (feature, threshold, left, right, value) with
    tree-local child indices (LEAF at leaves); candidates: list of (tau_c, tau_r, mode, cold) with
    mode/cold names; setup: (ns_const, ns_tau_c, ns_tau_r); input_names: features + PLAN_INPUTS."""

    def __init__(self, trained_on, ensemble, base_score, trees, candidates, setup, input_names):
        assert ensemble in ENSEMBLES, ensemble
        assert "\n" not in trained_on and trained_on.strip(), "trained_on: one non-empty line"
        assert len(trained_on.strip().encode()) < 256, "trained_on: at most 255 bytes (MX_MODEL_TEXT)"
        assert input_names is None or input_names[-4:] == PLAN_INPUTS, "inputs end with the plan's four"
        self.trained_on, self.ensemble, self.base_score = trained_on.strip(), ensemble, float(base_score)
        self.trees = [(float(w), [(int(f), float(t), int(l), int(r), float(v)) for f, t, l, r, v in nodes])
                      for w, nodes in trees]
        self.candidates = [(float(tc), float(tr), m, c) for tc, tr, m, c in candidates]
        self.setup = tuple(float(x) for x in setup)
        self.input_names = list(input_names) if input_names is not None else None  # needed by the model file only
        for tc, tr, m, c in self.candidates:
            assert 0 <= tr <= tc <= 1 and m in MODES and c in COLDS, (tc, tr, m, c)

    def predict(self, x):
        """Reference evaluation in Python (float32 inputs as scikit-learn and mx_model_eval)."""
        import struct
        x32 = [struct.unpack("f", struct.pack("f", v))[0] for v in x]
        outs = []
        for _, nodes in self.trees:
            n = 0
            while nodes[n][2] != LEAF:
                f, t, l, r, _ = nodes[n]
                n = l if x32[f] <= t else r
            outs.append(nodes[n][4])
        if self.ensemble == "mean":
            return sum(outs) / len(outs)
        if self.ensemble == "sum":
            y = self.base_score
            for (w, _), o in zip(self.trees, outs):
                y += w * o
            return y
        order = sorted(range(len(outs)), key=lambda t: (outs[t], t))
        total = sum(self.trees[t][0] for t in order)
        cum = 0.0
        for t in order:
            cum += self.trees[t][0]
            if cum >= 0.5 * total:
                return outs[t]
        return outs[order[-1]]


def _tree_nodes(tree_):
    """scikit-learn tree_ arrays -> node tuples (scikit-learn marks leaves with children -1, feature -2)."""
    nodes = []
    for n in range(tree_.node_count):
        left, right = int(tree_.children_left[n]), int(tree_.children_right[n])
        if left == LEAF:
            nodes.append((LEAF, 0.0, LEAF, LEAF, float(tree_.value[n][0][0])))
        else:
            nodes.append((int(tree_.feature[n]), float(tree_.threshold[n]), left, right, float(tree_.value[n][0][0])))
    return nodes


def from_sklearn(est, trained_on, candidates, setup, input_names):
    """A fitted RandomForestRegressor / ExtraTreesRegressor (mean), GradientBoostingRegressor (sum,
    base = init_ constant, weight = learning_rate) or AdaBoostRegressor (weighted median)."""
    kind = type(est).__name__
    if kind in ("RandomForestRegressor", "ExtraTreesRegressor"):
        trees = [(1.0, _tree_nodes(t.tree_)) for t in est.estimators_]
        return Model(trained_on, "mean", 0.0, trees, candidates, setup, input_names)
    if kind == "GradientBoostingRegressor":
        base = float(est.init_.constant_.ravel()[0]) if hasattr(est.init_, "constant_") else None
        if base is None:
            raise ValueError("GradientBoostingRegressor: only a constant init_ (DummyRegressor) can be exported")
        trees = [(est.learning_rate, _tree_nodes(stage[0].tree_)) for stage in est.estimators_]
        return Model(trained_on, "sum", base, trees, candidates, setup, input_names)
    if kind == "AdaBoostRegressor":
        n = len(est.estimators_)
        trees = [(float(w), _tree_nodes(t.tree_)) for w, t in zip(est.estimator_weights_[:n], est.estimators_)]
        return Model(trained_on, "weighted_median", 0.0, trees, candidates, setup, input_names)
    raise ValueError("cannot export %s" % kind)


def placeholder(input_names, why):
    """The model to embed while no labels exist: one leaf (0) and one candidate, crux (0,0) with the
    hot mode and cold kernel chosen at upload (auto/auto): exactly the behaviour without a predictor."""
    return Model("nothing (placeholder, no labels measured yet): " + why, "sum", 0.0, [(1.0, [(LEAF, 0.0, LEAF, LEAF, 0.0)])],
                 [(0.0, 0.0, "auto", "auto")], (0.0, 0.0, 0.0), input_names)


def write_model_file(m, path):
    g = repr
    assert m.input_names is not None, "the model file lists the input names"
    with open(path, "w") as f:
        f.write("matxtract-model 1\ntrained_on %s\nensemble %s\nbase_score %s\n" % (m.trained_on, m.ensemble, g(m.base_score)))
        f.write("inputs %d\n" % len(m.input_names))
        for i, name in enumerate(m.input_names):
            f.write("input %d %s\n" % (i, name))
        f.write("trees %d\n" % len(m.trees))
        for t, (w, nodes) in enumerate(m.trees):
            f.write("tree %d %d %s\n" % (t, len(nodes), g(w)))
            for n, (feat, thr, left, right, val) in enumerate(nodes):
                f.write("node %d %d %s %d %d %s\n" % (n, feat, g(thr), left, right, g(val)))
        f.write("candidates %d\n" % len(m.candidates))
        for i, (tc, tr, mode, cold) in enumerate(m.candidates):
            f.write("candidate %d %s %s %s %s\n" % (i, g(tc), g(tr), mode, cold))
        f.write("setup_ns_per_nnz %s %s %s\nend\n" % tuple(g(x) for x in m.setup))


def _c_array(ctype, name, values, per_line=8):
    lines = []
    for k in range(0, len(values), per_line):
        lines.append("    " + ", ".join(values[k:k + per_line]) + ",")
    return "static const %s %s[%d] = {\n%s\n};\n" % (ctype, name, len(values), "\n".join(lines))


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_c_source(m, path, command):
    """src/core/mx_model_default.c: the same arrays as the model file, as static const data."""
    starts, weights, feat, thr, left, right, val = ["0"], [], [], [], [], [], []
    for w, nodes in m.trees:
        weights.append(repr(w))
        for f_, t_, l_, r_, v_ in nodes:
            feat.append(str(f_)), thr.append(repr(t_)), left.append(str(l_)), right.append(str(r_)), val.append(repr(v_))
        starts.append(str(len(feat)))
    cand = ["{{%s, %s}, MX_MODE_%s, MX_PLAN_COLD_%s}" % (repr(tc), repr(tr), mo.upper(), co.upper())
            for tc, tr, mo, co in m.candidates]
    ens = {"sum": "MX_ENSEMBLE_SUM", "mean": "MX_ENSEMBLE_MEAN", "weighted_median": "MX_ENSEMBLE_WEIGHTED_MEDIAN"}[m.ensemble]
    out = []
    out.append("/* mx_model_default.c - GENERATED by tuning/predictor/model_export.py; do not edit, regenerate with:\n"
               " *   %s\n"
               " * The plan model compiled into the library (see mx_predictor.h for the meaning of every array).\n"
               " * trained_on: %s\n"
               " * %d trees, %d nodes, ensemble %s, %d candidate plans. */\n"
               % (command, m.trained_on.replace("*/", "* /"), len(m.trees), len(feat), m.ensemble, len(m.candidates)))
    out.append('#include "mx_predictor.h"\n\n')
    out.append(_c_array("int32_t", "tree_start", starts))
    out.append(_c_array("double", "tree_weight", weights, 4))
    out.append(_c_array("int32_t", "feature", feat, 16))
    out.append(_c_array("double", "threshold", thr, 4))
    out.append(_c_array("int32_t", "left", left, 16))
    out.append(_c_array("int32_t", "right", right, 16))
    out.append(_c_array("double", "value", val, 4))
    out.append(_c_array("mx_plan", "candidates", cand, 2))
    out.append("\nstatic const mx_model default_model = {\n"
               "    .version = MX_MODEL_VERSION,\n    .trained_on = %s,\n    .ensemble = %s,\n    .base_score = %s,\n"
               "    .ntrees = %d,\n    .nnodes = %d,\n    .tree_start = tree_start,\n    .tree_weight = tree_weight,\n"
               "    .feature = feature,\n    .threshold = threshold,\n    .left = left,\n    .right = right,\n"
               "    .value = value,\n    .ncandidates = %d,\n    .candidates = candidates,\n"
               "    .setup = {%s, %s, %s},\n    .owned = 0};\n\n"
               "const mx_model *mx_model_default(void) { return &default_model; }\n"
               % (_c_string(m.trained_on), ens, repr(m.base_score), len(m.trees), len(feat), len(m.candidates),
                  repr(m.setup[0]), repr(m.setup[1]), repr(m.setup[2])))
    with open(path, "w") as f:
        f.write("".join(out))

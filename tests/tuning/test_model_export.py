#!/usr/bin/env python3
"""test_model_export.py PREDICTOR_TOOL PREDICTOR_DIR DEFAULT_C - the committed embedded model is what
the generator makes of it: the embedded model written as a model file (matxtract-predictor
export-default), read back by model_export.read_model_file and written again as a file (read once
more: the same model, every double exact) and as C source (model_export --c-source), whose code from its first
#include on equals src/core/mx_model_default.c's (the five arrays, the node array the evaluation
walks, the candidates and the setup model: no hand edit, no stale generator). The header comments
differ by design (they name the regenerating command). Exits 1 if anything differs."""
import os
import subprocess
import sys
import tempfile

tool, predictor_dir, default_c = sys.argv[1:4]
sys.path.insert(0, predictor_dir)
import model_export  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


def code_of(path):
    """the text from the first #include on (the generated header comment left out)"""
    with open(path) as f:
        text = f.read()
    at = text.find("#include")
    return text[at:] if at >= 0 else ""


with tempfile.TemporaryDirectory() as tmp:
    exported = os.path.join(tmp, "model.txt")
    rc = subprocess.run([tool, "export-default", exported]).returncode
    expect(rc == 0 and os.path.exists(exported), "matxtract-predictor export-default writes the embedded model")
    if rc == 0:
        m = model_export.read_model_file(exported)
        again = os.path.join(tmp, "again.txt")
        model_export.write_model_file(m, again)
        expect(vars(model_export.read_model_file(again)) == vars(m),
               "write_model_file + read_model_file give the same model back (every double exact)")
        c_out = os.path.join(tmp, "default.c")
        model_export.main(["--c-source", exported, c_out, "--command", "test"])
        ours, committed = code_of(c_out), code_of(default_c)
        expect(ours != "" and ours == committed,
               "model_export --c-source of the embedded model reproduces src/core/mx_model_default.c's code "
               "(%d vs %d characters)" % (len(ours), len(committed)))
        expect("mx_model_node node[" in committed and ".node = node" in committed,
               "the committed model has the node array the evaluation walks")
finish()

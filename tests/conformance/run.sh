#!/bin/bash
# run.sh - PETSc's own Mat test suite (src/mat/tests) with -mat_type aij vs -mat_type matxtract.
# The method (mapping, classes, how "used" is detected) is in conformance.py's header; README.md here.
#   bash tests/conformance/run.sh --subset                    the CI subset (subset.txt)
#   bash tests/conformance/run.sh --full --out DIR            every case; DIR/results.txt
#   bash tests/conformance/run.sh --cases 'ex89_*' ex15_1     chosen cases (globs on the case id)
#   bash tests/conformance/run.sh --list [--subset]           the cases and their arguments, nothing run
# Options: --lib PATH (default build/src/libmatxtract.so), --petsc-dir, --examples-dir, --datafilespath,
# -j N (default nproc), --timeout S (60), --extra-args '...', --seq-only, --work DIR (programs and run
# folders; default build-conformance/), --out DIR (results.txt; default the work folder); --help for all.
# Exit: 0 pass, 1 an unexpected DIFF/CRASH/ERROR/TIMEOUT, 77 PETSc's examples not installed, 2 setup error.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
exec python3 "$(dirname "$0")/conformance.py" "$@"

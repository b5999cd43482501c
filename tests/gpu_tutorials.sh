#!/bin/bash
# gpu_tutorials.sh EXAMPLES_DIR BUILD_DIR OUTDIR - unmodified PETSc tutorials on the GPU host, each run
# with -dm_mat_type aijcusparse and with -dm_mat_type matxtract (loaded by -dll_append only), device
# vectors (-dm_vec_type cuda) for both: SNES ex19 (driven cavity, FD-coloring Jacobian re-assembled at
# every Newton step) with Jacobi, KSP ex45 (3D Laplacian) with CG+GAMG and with
# geometric MG. Pass iff every run converges and matxtract's iteration counts equal aijcusparse's
# within roundoff (linear iterations within 2% + 1, nonlinear equal). Writes OUTDIR/tutorials.md (iterations and
# solve time from -log_view) and the logs.
# EXAMPLES_DIR holds ex19.c and ex45.c as PETSc ships them (share/petsc/examples; the GPU host's
# PETSc bundle has none: tuning/gpu_cycle.sh's `tutorials` stage takes them from the carried
# .petsc-examples/ folder, a copy of Debian's libpetsc3.18-dev-examples). Exit 0 pass, 1 fail.
set -uo pipefail
ex=${1:?usage: gpu_tutorials.sh EXAMPLES_DIR BUILD_DIR OUTDIR}
build=${2:?}
out=${3:?}
mkdir -p "$out/bin"
lib=$(cd "$build/src" && pwd)/libmatxtract.so
cflags=$(pkg-config --cflags PETSc) libs="$(pkg-config --libs PETSc) -Wl,-rpath,$(pkg-config --variable=libdir PETSc)"
for t in ex19 ex45; do
  mpicc -O2 -o "$out/bin/$t" "$ex/$t.c" $cflags $libs -lm || { echo "cannot build $t"; exit 1; }
done

# name | program | options
cases=(
  "ex19_jacobi|ex19|-da_refine 4 -snes_converged_reason -ksp_converged_reason -pc_type jacobi -ksp_max_it 2000"
  "ex45_cg_gamg|ex45|-da_grid_x 97 -da_grid_y 97 -da_grid_z 97 -ksp_type cg -pc_type gamg -ksp_converged_reason"
  "ex45_mg|ex45|-da_grid_x 97 -da_grid_y 97 -da_grid_z 97 -ksp_type fgmres -pc_type mg -pc_mg_levels 3 -mg_levels_ksp_type richardson -mg_levels_pc_type jacobi -ksp_converged_reason"
)
status=0
{
  echo "| case | type | nonlinear its | linear its (sum) | solve (s) | converged |"
  echo "| --- | --- | --- | --- | --- | --- |"
} > "$out/tutorials.md"
for c in "${cases[@]}"; do
  IFS='|' read -r name prog opts <<< "$c"
  declare -A lin nl
  for type in aijcusparse matxtract; do
    log=$out/$name.$type.log
    extra=""
    [ $type = matxtract ] && extra="-dll_append $lib -mat_view ::ascii_info_detail"
    # shellcheck disable=SC2086
    "$out/bin/$prog" $opts -dm_mat_type $type -dm_vec_type cuda $extra -log_view > "$log" 2>&1
    rc=$?
    l=$(grep -oE "Linear solve converged due to [A-Z_]+ iterations [0-9]+" "$log" | awk '{s += $NF} END {print s + 0}')
    n=$(grep -oE "Nonlinear solve converged due to [A-Z_]+ iterations [0-9]+" "$log" | awk '{print $NF}' | tail -1)
    solve=$(grep -E "^(SNESSolve|KSPSolve) " "$log" | head -1 | awk '{print $4}')
    conv=yes
    { [ $rc -ne 0 ] || grep -q "DIVERGED" "$log" || [ "$l" = 0 ]; } && conv=no
    [ $conv = no ] && status=1
    lin[$type]=$l
    nl[$type]=${n:--}
    echo "| $name | $type | ${n:--} | $l | ${solve:--} | $conv (exit $rc) |" >> "$out/tutorials.md"
  done
  a=${lin[aijcusparse]} b=${lin[matxtract]}
  if [ "${nl[aijcusparse]}" != "${nl[matxtract]}" ] || [ $(( (a > b ? a - b : b - a) * 50 )) -gt $(( a + 50 )) ]; then
    echo "$name: iterations differ (aijcusparse ${nl[aijcusparse]}/$a, matxtract ${nl[matxtract]}/$b)"
    status=1
  fi
  grep -q "MatXtract: MatMult on the GPU" "$out/$name.matxtract.log" || { echo "$name: matxtract did not run on the GPU"; status=1; }
  unset lin nl
done
cat "$out/tutorials.md"
exit $status

# Environment of every GPU-host script (sourced by tuning/gpu_cycle.sh and tuning/bench/ab_build.sh):
# the PETSc 3.22+CUDA bundle unpacked by gpu_cycle.sh's setup stage, a host-staged MPI (the system
# OpenMPI is not CUDA-aware), mpiexec as root (the device runs as root), nvcc on PATH.
export PETSC_DIR=/opt/petsc-cuda PETSC_ARCH= PKG_CONFIG_PATH=/opt/petsc-cuda/lib/pkgconfig
export PETSC_OPTIONS="${PETSC_OPTIONS:--use_gpu_aware_mpi 0}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH

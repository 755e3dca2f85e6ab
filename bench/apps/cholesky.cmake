# Tiled Cholesky (dpotrf, lower), included by bench/apps/CMakeLists.txt:
#   cholesky_omp     gcc -O2 -fopenmp, variants omp-tasks, omp-persistent, openblas; not linked to weft
#                    (weft/omp_ext.h's weak graph calls need only the include directory)
#   cholesky_weft    native weft, variants weft, weft-persistent
#   cholesky_starpu  StarPU's C API, variant starpu (when StarPU is found)
# All need OpenBLAS (cblas.h) and LAPACKE; the kernels and the check are in cholesky_kernels.h.
if(NOT APPS_OPENBLAS OR NOT APPS_LAPACKE OR NOT APPS_LAPACKE_INCLUDE OR NOT APPS_CBLAS_INCLUDE)
  message(STATUS "bench/apps: OpenBLAS or LAPACKE not found (libopenblas-dev, liblapacke-dev), "
                 "cholesky_* not built")
else()
  set(_chol_includes ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR} ${APPS_CBLAS_INCLUDE}
                     ${APPS_LAPACKE_INCLUDE})
  set(_chol_libs ${APPS_LAPACKE} ${APPS_OPENBLAS} m ${CMAKE_DL_LIBS})

  # --- OpenMP tasks, compiled by GCC (GOMP ABI: libgomp, LLVM libomp and weft's door answer it) ---
  if(OpenMP_C_FOUND AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
    add_executable(cholesky_omp cholesky_omp.c)
    target_include_directories(cholesky_omp PRIVATE ${_chol_includes})
    target_link_libraries(cholesky_omp PRIVATE OpenMP::OpenMP_C ${_chol_libs})
    target_compile_options(cholesky_omp PRIVATE -O2) # last, whatever the build type
  else()
    message(STATUS "bench/apps: cholesky_omp needs gcc with OpenMP (C compiler: ${CMAKE_C_COMPILER_ID}), not built")
  endif()

  # --- native weft -------------------------------------------------------------------------------
  if(TARGET weft::weft)
    add_executable(cholesky_weft cholesky_weft.cpp)
    target_include_directories(cholesky_weft PRIVATE ${_chol_includes})
    target_link_libraries(cholesky_weft PRIVATE weft::weft ${_chol_libs})
    target_compile_options(cholesky_weft PRIVATE -O2)
  else()
    message(STATUS "bench/apps: no weft::weft target, cholesky_weft not built")
  endif()

  # --- StarPU ------------------------------------------------------------------------------------
  if(APPS_STARPU_FOUND)
    add_executable(cholesky_starpu cholesky_starpu.c)
    target_include_directories(cholesky_starpu PRIVATE ${_chol_includes})
    target_link_libraries(cholesky_starpu PRIVATE PkgConfig::APPS_STARPU ${_chol_libs})
    target_compile_options(cholesky_starpu PRIVATE -O2)
  else()
    message(STATUS "bench/apps: StarPU not found (libstarpu-dev), cholesky_starpu not built")
  endif()
endif()

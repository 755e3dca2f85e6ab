# 2-D heat equation (Gauss-Seidel and Jacobi, blocked), included by bench/apps/CMakeLists.txt:
#   heat_omp   plain C, gcc -O2 -fopenmp: libgomp as linked, LLVM libomp or weft's OpenMP door by
#              LD_PRELOAD. Not linked to weft: weft/omp_ext.h (weak graph calls) and weft.h
#              (weft_stats_t) are headers only.
#   heat_weft  native weft (weft.hpp), linked to libweft.
# Both share heat_kernels.h (kernels, serial reference, command line) and app_common.h (RESULT line).
if(OpenMP_C_FOUND AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  add_executable(heat_omp heat_omp.c)
  target_include_directories(heat_omp PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(heat_omp PRIVATE OpenMP::OpenMP_C m ${CMAKE_DL_LIBS})
  target_compile_options(heat_omp PRIVATE -O2) # last, whatever the build type (as micro_omp)
else()
  message(STATUS "bench/apps: heat_omp needs gcc with OpenMP (C compiler: ${CMAKE_C_COMPILER_ID}), not built")
endif()

if(TARGET weft::weft)
  add_executable(heat_weft heat_weft.cpp)
  target_include_directories(heat_weft PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(heat_weft PRIVATE weft::weft m ${CMAKE_DL_LIBS})
  target_compile_options(heat_weft PRIVATE -O2) # last: the same code as heat_omp's kernels
else()
  message(STATUS "bench/apps: no weft::weft target, heat_weft not built")
endif()

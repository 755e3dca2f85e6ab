# CG on the 27-point Poisson matrix (HPCG's shape), bench/apps/cg_*.{c,cpp}:
#   cg_omp   gcc -O2 -fopenmp, one binary for libgomp, LLVM libomp and weft's OpenMP door (not linked
#            to weft: weft/omp_ext.h's graph calls are weak), when OpenMP for C is found and gcc builds it
#   cg_weft  native weft (weft.h / weft.hpp), when the weft::weft target exists
if(OpenMP_C_FOUND AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  add_executable(cg_omp cg_omp.c)
  target_include_directories(cg_omp PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(cg_omp PRIVATE OpenMP::OpenMP_C m ${CMAKE_DL_LIBS})
  target_compile_options(cg_omp PRIVATE -O2) # last, whatever the build type: a gcc -O2 -fopenmp binary
else()
  message(STATUS "bench/apps: cg_omp needs gcc with OpenMP for C (C compiler: ${CMAKE_C_COMPILER_ID}), not built")
endif()

if(TARGET weft::weft)
  add_executable(cg_weft cg_weft.cpp)
  target_include_directories(cg_weft PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(cg_weft PRIVATE weft::weft m ${CMAKE_DL_LIBS})
  target_compile_options(cg_weft PRIVATE -O2)
else()
  message(STATUS "bench/apps: no weft::weft target, cg_weft not built")
endif()

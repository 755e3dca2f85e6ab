# Multi-matvec and dense Jacobi (the taskiter paper's Table 1), bench/apps/matvec_*.{c,cpp}:
#   matvec_omp   gcc -O2 -fopenmp, one binary for libgomp, LLVM libomp and weft's OpenMP door (not
#                linked to weft: weft/omp_ext.h's graph calls are weak), when OpenMP for C is found and
#                gcc builds it
#   matvec_weft  native weft (weft.h / weft.hpp), when the weft::weft target exists
if(OpenMP_C_FOUND AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  add_executable(matvec_omp matvec_omp.c)
  target_include_directories(matvec_omp PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(matvec_omp PRIVATE OpenMP::OpenMP_C m ${CMAKE_DL_LIBS})
  target_compile_options(matvec_omp PRIVATE -O2) # last, whatever the build type: a gcc -O2 -fopenmp binary
else()
  message(STATUS "bench/apps: matvec_omp needs gcc with OpenMP for C (C compiler: ${CMAKE_C_COMPILER_ID}), not built")
endif()

if(TARGET weft::weft)
  add_executable(matvec_weft matvec_weft.cpp)
  target_include_directories(matvec_weft PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(matvec_weft PRIVATE weft::weft m ${CMAKE_DL_LIBS})
  target_compile_options(matvec_weft PRIVATE -O2)
else()
  message(STATUS "bench/apps: no weft::weft target, matvec_weft not built")
endif()

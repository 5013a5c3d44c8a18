# libFuzzer targets for the file readers (tests/fuzz, run by scripts/fuzz).
# NANOSCOPY_FUZZ=ON needs Clang: everything built in this tree (the library,
# and the apps and tests if built) is compiled with coverage instrumentation for
# libFuzzer plus ASan and UBSan (-fsanitize=fuzzer-no-link,address,undefined);
# only the fuzz targets link libFuzzer's main (-fsanitize=fuzzer). UBSan
# findings abort, so that libFuzzer records them as crashes. Included before
# NanoscopyCuda: a fuzz build is CPU-only (NANOSCOPY_CUDA AUTO means OFF here).
option(NANOSCOPY_FUZZ "Build the libFuzzer targets in tests/fuzz (Clang; ASan + UBSan)" OFF)

if(NANOSCOPY_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NANOSCOPY_FUZZ=ON needs Clang with libFuzzer (got ${CMAKE_CXX_COMPILER_ID}): "
      "configure with CC=clang CXX=clang++ (Debian: apt-get install clang libclang-rt-dev), or run scripts/fuzz")
  endif()
  string(TOUPPER "${NANOSCOPY_CUDA}" _nanoscopy_fuzz_cuda)
  if(_nanoscopy_fuzz_cuda STREQUAL "ON")
    message(FATAL_ERROR "NANOSCOPY_FUZZ=ON builds the CPU library only: configure with -DNANOSCOPY_CUDA=OFF")
  endif()
  set(NANOSCOPY_CUDA OFF)  # shadows the cache value (AUTO) for this configure run
  # No CUDA in this build, so plain (C and C++) options.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -gline-tables-only)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

# libFuzzer targets for the file readers (tests/fuzz, run by scripts/fuzz).
# NANOSCOPY_FUZZ=ON needs Clang and turns NANOSCOPY_SANITIZE on: every target is
# built with ASan and UBSan (NanoscopyWarnings.cmake), and the readers of
# untrusted files (nanoscopy_fuzz_coverage below) also get libFuzzer's coverage
# instrumentation (-fsanitize=fuzzer-no-link); only the fuzz targets link
# libFuzzer's main (-fsanitize=fuzzer). The sanitize preset turns it on, so one
# build serves the sanitized test suite and the fuzzers (CI builds it once).
# The numeric code gets no coverage hooks: they would slow the sanitized tests
# (a call per comparison) and the fuzzers never reach it. Included before
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
  set(NANOSCOPY_CUDA OFF)      # shadows the cache values for this configure run
  set(NANOSCOPY_SANITIZE ON)
endif()

# Coverage for libFuzzer on the sources of `target` that read untrusted input: the
# file formats, parameter files, cluster part files, camera maps and calibrations,
# the partial-result files and the filter expressions.
function(nanoscopy_fuzz_coverage target)
  if(NOT NANOSCOPY_FUZZ)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "nanoscopy/(io|params|cluster|core|loc/formats|loc/filter)/|partial\\.cpp$")
  set_property(SOURCE ${sources} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -fsanitize=fuzzer-no-link)
endfunction()

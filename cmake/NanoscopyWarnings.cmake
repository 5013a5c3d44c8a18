add_library(nanoscopy_warnings INTERFACE)
add_library(nanoscopy::warnings ALIAS nanoscopy_warnings)
target_compile_options(nanoscopy_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# GCC 12 (Debian 12's) at -O2/-O3 reports std::string's operator+ as an overlapping memcpy of exabytes
# (-Wrestrict, GCC bug 105329): a false positive inside libstdc++ that failed a Release build with
# NANOSCOPY_WERROR=ON in a dozen files. Switched off there only, not rewritten around in each file.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(nanoscopy_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(NANOSCOPY_WERROR)
  target_compile_options(nanoscopy_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
if(NANOSCOPY_SANITIZE)
  target_compile_options(nanoscopy_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer>)
  # The apps and tests link through nanoscopy::base, whose PUBLIC link carries this.
  target_link_options(nanoscopy_warnings INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=undefined)
endif()

# Command-line, report and test code: CLI11 and JSON templates that run once per command. It compiles for build
# speed, not run speed: -O1 in an optimized build (frc/cli.cpp 23 s at -O3 against 15 s; the fat build's host code
# is 60 % of its 28 min on 2 cores) and -O0 under the sanitizers (where -O1 costs twice the compile time:
# bench_spline.cpp 52 s against 30 s). The numeric code keeps its optimization, so the tools, the benchmarks and
# the sanitized suite run as fast. `sources`: files of `target` (all of them when empty).
function(nanoscopy_cold_code target)
  if(NANOSCOPY_SANITIZE)
    set(level -O0)
  elseif(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    set(level -O1)
  else()
    return()  # Debug, MinSizeRel: as the build type says
  endif()
  if(ARGN)
    set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS ${level})
  else()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${level}>)
  endif()
endfunction()

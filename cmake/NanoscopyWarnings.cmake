add_library(nanoscopy_warnings INTERFACE)
add_library(nanoscopy::warnings ALIAS nanoscopy_warnings)
target_compile_options(nanoscopy_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
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

# Under the sanitizers, the command-line, report and test code compiles at -O0: at -O1 with ASan its CLI11 and JSON
# templates cost twice the compile time (bench_spline.cpp 52 s against 30 s; simulate_cli.cpp 41 against 19) for
# code that runs once per command. The numeric code keeps -O1, so the sanitized suite runs about as fast.
# `sources`: files of `target` (all of them when empty).
function(nanoscopy_sanitized_at_O0 target)
  if(NOT NANOSCOPY_SANITIZE)
    return()
  endif()
  if(ARGN)
    set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -O0)
  else()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
  endif()
endfunction()

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

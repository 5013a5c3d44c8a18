# Man pages for the five tools, made from their --help by help2man at build time (part of `all`) and
# installed gzipped to ${CMAKE_INSTALL_MANDIR}/man1 by `cmake --install` and the .deb: fit2d(1), smre(1),
# sofi(1), frc(1), bench(1), and one page per subcommand as git has them (fit2d-link(1),
# bench-simulate-movie(1), ...), since help2man reads one --help. docs/man/<tool>.h2m adds what --help
# lacks (FILES, more SEE ALSO); the SEE ALSO list of pages is generated here. tests/install/check-install
# renders every page and checks each subcommand a tool lists has its page.
#
# Without help2man (scripts/install-deps installs it), or in a sanitizer or fuzz build (no package; running
# their tools at build time would only add sanitizer noise), the pages are skipped with a configure message.
include(GNUInstallDirs)

option(NANOSCOPY_MAN_PAGES "Generate the tools' man pages with help2man (skipped when it is missing)" ON)
set(NANOSCOPY_HAVE_MAN_PAGES OFF)
if(NOT NANOSCOPY_MAN_PAGES)
  message(STATUS "Man pages: off (NANOSCOPY_MAN_PAGES=OFF)")
  return()
endif()
if(NANOSCOPY_SANITIZE OR NANOSCOPY_FUZZ)
  message(STATUS "Man pages: skipped in a sanitizer or fuzz build")
  return()
endif()
if(CMAKE_CROSSCOMPILING)
  message(STATUS "Man pages: skipped when cross-compiling (help2man runs the tools)")
  return()
endif()
foreach(_tool fit2d smre sofi frc bench)
  if(NOT TARGET ${_tool})
    message(STATUS "Man pages: skipped (this build has no ${_tool})")
    return()
  endif()
endforeach()
find_program(NANOSCOPY_HELP2MAN help2man)
find_program(NANOSCOPY_GZIP gzip)
if(NOT NANOSCOPY_HELP2MAN OR NOT NANOSCOPY_GZIP)
  message(STATUS "Man pages: skipped, help2man or gzip not found "
                 "(apt-get install help2man, or scripts/install-deps; the tools build without them)")
  return()
endif()
set(NANOSCOPY_HAVE_MAN_PAGES ON)

# The pages: tool|subcommand words (space-separated, empty for the tool)|the NAME line.
set(_nanoscopy_man_pages
  "fit2d||localize single molecules in a camera stack, undrift, link and render them"
  "fit2d|merge|merge fit2d part files into one localization file"
  "fit2d|calibrate|astigmatic 3D calibration from a bead z-stack"
  "fit2d|filter|keep the localizations for which an expression holds"
  "fit2d|link|merge the localizations of one blink into one"
  "fit2d|render|render localizations as a super-resolution picture"
  "fit2d|undrift|correct the sample drift of localizations (RCC, fiducial markers)"
  "fit2d|frames|print the number of frames of a stack"
  "smre||denoise and deconvolve images by statistical multi-resolution estimation"
  "smre|merge|merge smre part files into one stack"
  "smre|frames|print the number of frames of a stack"
  "sofi||super-resolution optical fluctuation imaging (SOFI cumulants)"
  "sofi|merge|merge sofi partial sums into the image of the whole stack"
  "sofi|esrrf|eSRRF super-resolution by radial fluctuations, error map and parameter sweep"
  "sofi|frames|print the number of frames of a stack"
  "frc||resolution by Fourier ring correlation"
  "frc|decorr|resolution of one image by decorrelation analysis"
  "bench||simulate the papers' data and measure every nanoscopy backend"
  "bench|simulate|write simulated data with its ground truth"
  "bench|simulate movie|simulate a blinking single-molecule movie with its truth"
  "bench|simulate spots|simulate the fitting paper's ROIs with their truth"
  "bench|simulate blinking|simulate a SOFI stack of blinking emitters with its truth"
  "bench|compare|score localizations against the simulated truth"
  "bench|spline3d|benchmark the 3D spline fitter on pupil-function data against the Cramer-Rao bound"
  "bench|fit2d|benchmark the Gaussian fitter: fits per second and accuracy"
  "bench|roi|benchmark fit2d --roi: per-frame latency"
  "bench|io|benchmark stack I/O: index and read a long TIFF"
  "bench|localize|benchmark fit2d end to end: frames per second"
  "bench|smre|benchmark SMRE: runtime, quality, stack frames per second"
  "bench|sofi|benchmark SOFI: FRC of each variant, frames per second"
  "bench|esrrf|benchmark eSRRF: frames per second and quality against the truth"
  "bench|frc|benchmark FRC: time against image edge on CPU and GPU"
  "bench|decorr|benchmark decorrelation analysis: time per image edge, agreement with FRC"
  "bench|postprocess|benchmark fit2d undrift, link and render against a known truth"
  "bench|render|benchmark fit2d render: time to accumulate localizations")

set(_man_dir ${PROJECT_BINARY_DIR}/man)
file(MAKE_DIRECTORY ${_man_dir}/include)

# Page names per tool, for the generated SEE ALSO lists.
set(_pages)
foreach(_entry IN LISTS _nanoscopy_man_pages)
  string(REPLACE "|" ";" _f "${_entry}")
  list(GET _f 0 _tool)
  list(GET _f 1 _sub)
  set(_page ${_tool})
  if(NOT _sub STREQUAL "")
    string(REPLACE " " "-" _sub_dash "${_sub}")
    set(_page ${_tool}-${_sub_dash})
  endif()
  list(APPEND _pages_${_tool} ${_page})
  list(APPEND _pages ${_page})
endforeach()

set(_man_outputs)
foreach(_entry IN LISTS _nanoscopy_man_pages)
  string(REPLACE "|" ";" _f "${_entry}")
  list(GET _f 0 _tool)
  list(GET _f 1 _sub)
  list(GET _f 2 _name)
  set(_page ${_tool})
  if(NOT _sub STREQUAL "")
    string(REPLACE " " "-" _sub_dash "${_sub}")
    set(_page ${_tool}-${_sub_dash})
  endif()

  # SEE ALSO: a tool's page names its subcommands' pages and the other tools; a subcommand's page its tool's.
  set(_see "")
  if(_sub STREQUAL "")
    foreach(_other IN LISTS _pages_${_tool})
      if(NOT _other STREQUAL _page)
        string(APPEND _see ".BR ${_other} (1),\n")
      endif()
    endforeach()
    foreach(_other fit2d smre sofi frc bench)
      if(NOT _other STREQUAL _tool)
        string(APPEND _see ".BR ${_other} (1),\n")
      endif()
    endforeach()
  else()
    string(APPEND _see ".BR ${_tool} (1)\n(its options \\-\\-params, \\-\\-device and \\-q may follow the subcommand too),\n")
  endif()
  string(APPEND _see "the ${_tool} page of the documentation: ${_tool}.md in docs/ of the source, installed as "
                     "${CMAKE_INSTALL_DOCDIR}/docs/${_tool}.md under the prefix (/usr for the Debian package).\n")
  set(_include ${_man_dir}/include/${_page}.h2m)
  file(WRITE ${_include}.tmp "[SEE ALSO]\n${_see}")
  file(COPY_FILE ${_include}.tmp ${_include} ONLY_IF_DIFFERENT)
  file(REMOVE ${_include}.tmp)
  set(_includes ${_include})
  set(_static ${PROJECT_SOURCE_DIR}/docs/man/${_page}.h2m)
  if(EXISTS ${_static})
    list(APPEND _includes ${_static})
  endif()

  list(JOIN _includes "|" _includes_arg)  # no ";" in a custom command's argument
  set(_out ${_man_dir}/${_page}.1.gz)
  add_custom_command(OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -DHELP2MAN=${NANOSCOPY_HELP2MAN} -DGZIP=${NANOSCOPY_GZIP} -DEXE=$<TARGET_FILE:${_tool}>
            -DPAGE=${_page} "-DSUBCOMMAND=${_sub}" "-DNAME=${_name}" -DVERSION=${PROJECT_VERSION}
            "-DINCLUDES=${_includes_arg}" -DOUT=${_out} -P ${PROJECT_SOURCE_DIR}/cmake/NanoscopyHelp2Man.cmake
    DEPENDS ${_tool} ${_includes} ${PROJECT_SOURCE_DIR}/cmake/NanoscopyHelp2Man.cmake
    COMMENT "Man page ${_page}(1) from ${_tool} --help"
    VERBATIM)
  list(APPEND _man_outputs ${_out})
endforeach()

add_custom_target(man ALL DEPENDS ${_man_outputs})
install(FILES ${_man_outputs} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
list(LENGTH _pages _count)
message(STATUS "Man pages: ${_count} pages by ${NANOSCOPY_HELP2MAN}, installed to ${CMAKE_INSTALL_MANDIR}/man1")

# Run at build time (cmake -P) by NanoscopyManPages.cmake: one man page from a tool's --help.
#   HELP2MAN, GZIP   the programs
#   EXE              the built tool
#   PAGE             the page's name: fit2d, or fit2d-link for `fit2d link` (a subcommand's own page, as git's)
#   SUBCOMMAND       the subcommand words ("link", "simulate movie"), empty for the tool itself
#   NAME             the one-line description of the NAME section
#   VERSION          the project version (not the tool's --version, whose commit would change every page)
#   INCLUDES         help2man --include files (SEE ALSO, FILES, ...), separated by "|"
#   OUT              the page, gzipped (PAGE.1.gz; PAGE.1 beside it)
# A subcommand's page is made through a two-line wrapper named PAGE that runs `EXE SUBCOMMAND "$@"`, so
# help2man titles it PAGE and reads the subcommand's own --help.
cmake_minimum_required(VERSION 3.25)
foreach(var HELP2MAN GZIP EXE PAGE NAME VERSION OUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "NanoscopyHelp2Man.cmake: ${var} is not set")
  endif()
endforeach()

get_filename_component(dir "${OUT}" DIRECTORY)
set(program "${EXE}")
if(SUBCOMMAND)
  set(wrapper_dir "${dir}/wrappers")
  file(MAKE_DIRECTORY "${wrapper_dir}")
  file(WRITE "${wrapper_dir}/${PAGE}.tmp" "#!/bin/sh\nexec '${EXE}' ${SUBCOMMAND} \"$@\"\n")
  file(CHMOD "${wrapper_dir}/${PAGE}.tmp" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
  file(RENAME "${wrapper_dir}/${PAGE}.tmp" "${wrapper_dir}/${PAGE}")
  set(program "${wrapper_dir}/${PAGE}")
endif()

set(include_args)
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
foreach(f IN LISTS INCLUDES)
  list(APPEND include_args "--include=${f}")
endforeach()

string(REGEX REPLACE "\\.gz$" "" page_file "${OUT}")
# --locale=C.UTF-8: the help texts hold UTF-8 (σ, →); in its default locale C, help2man writes each such
# character as "???". Pages in share/man are UTF-8 for man-db.
execute_process(
  COMMAND "${HELP2MAN}" --no-info --locale=C.UTF-8 --section=1 "--name=${NAME}" "--version-string=${VERSION}"
          "--source=nanoscopy ${VERSION}" "--manual=nanoscopy manual" ${include_args}
          "--output=${page_file}.tmp" "${program}"
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${page_file}.tmp")
  message(FATAL_ERROR "help2man failed on ${PAGE} (${rc}): ${err}")
endif()
# help2man says "fit2d-link --help" nowhere, but check it read a help text: an empty one gives no OPTIONS.
file(READ "${page_file}.tmp" text)
if(NOT text MATCHES "\n\\.SH OPTIONS\n")
  file(REMOVE "${page_file}.tmp")
  message(FATAL_ERROR "help2man made no OPTIONS section for ${PAGE}: did `${program} --help` print its help?")
endif()
# The exit codes close every tool's --help (ToolApp's footer): their own section, not a paragraph of EXAMPLES.
string(REPLACE "\n.PP\nExit codes: " "\n.SH \"EXIT STATUS\"\nExit codes: " text "${text}")
file(WRITE "${page_file}" "${text}")
file(REMOVE "${page_file}.tmp")
# gzip -9n as Debian wants man pages (no name or time stamp in the header: the same bytes each build).
execute_process(COMMAND "${GZIP}" -9n -c "${page_file}" OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "gzip failed on ${page_file}")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")

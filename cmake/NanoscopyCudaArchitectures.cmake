# Which GPUs the kernels are built for, chosen before enable_language(CUDA).
#
#   NANOSCOPY_CUDA_TARGETS = auto (default) | native | all
#     native: the GPUs of this machine (nvidia-smi's compute capabilities), the
#             fastest build; the binaries run on those cards (and newer ones of
#             the same major version through PTX).
#     all:    every card from Turing on: sm_75 (T4, Quadro RTX, RTX 20xx), sm_80
#             (A100; its code also runs on sm_86 RTX 30xx / A40 and sm_89
#             RTX 40xx / L40), sm_90 (H100, H200), and sm_100 (B200) and sm_120
#             (RTX 50xx, RTX PRO Blackwell) where the toolkit has them (CUDA ≥
#             12.8), plus the PTX of the newest, which the driver compiles for
#             cards newer still.
#     auto:   native when this machine has an NVIDIA GPU, else all (CI, packaging,
#             a build machine without a GPU).
#   An explicit -DCMAKE_CUDA_ARCHITECTURES=… (or the CUDAARCHS environment
#   variable) wins over all of this.
#
# Sets CMAKE_CUDA_ARCHITECTURES and NANOSCOPY_CUDA_ARCH_REASON (for the
# configure summary). Needs the nvcc version (`nvcc_version`, e.g. 13.0).
set(NANOSCOPY_CUDA_TARGETS auto CACHE STRING "CUDA targets when CMAKE_CUDA_ARCHITECTURES is not given: auto, native or all")
set_property(CACHE NANOSCOPY_CUDA_TARGETS PROPERTY STRINGS auto native all)

function(nanoscopy_all_cuda_architectures nvcc_version out)
  set(real 75 80 90)
  if(nvcc_version VERSION_GREATER_EQUAL 12.8)
    list(APPEND real 100 120)
  endif()
  list(GET real -1 newest)
  list(TRANSFORM real APPEND "-real")
  list(APPEND real "${newest}-virtual")
  set(${out} "${real}" PARENT_SCOPE)
endfunction()

# The compute capabilities of this machine's GPUs as 75, 86, 90 …; empty when
# there is none (or no nvidia-smi to ask).
function(nanoscopy_local_cuda_capabilities out names_out)
  set(caps "")
  set(names "")
  find_program(_nanoscopy_nvidia_smi nvidia-smi)
  if(_nanoscopy_nvidia_smi)
    execute_process(COMMAND ${_nanoscopy_nvidia_smi} --query-gpu=compute_cap,name --format=csv,noheader
      OUTPUT_VARIABLE smi RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 20)
    if(rc EQUAL 0 AND smi)
      string(REPLACE "\n" ";" lines "${smi}")
      foreach(line IN LISTS lines)
        if(line MATCHES "^ *([0-9]+)\\.([0-9]+), *(.*)$")
          list(APPEND caps "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
          list(APPEND names "${CMAKE_MATCH_3} (${CMAKE_MATCH_1}.${CMAKE_MATCH_2})")
        endif()
      endforeach()
    endif()
  endif()
  list(REMOVE_DUPLICATES caps)
  list(REMOVE_DUPLICATES names)
  set(${out} "${caps}" PARENT_SCOPE)
  set(${names_out} "${names}" PARENT_SCOPE)
endfunction()

function(nanoscopy_choose_cuda_architectures nvcc_version)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    set(NANOSCOPY_CUDA_ARCH_REASON "given (CMAKE_CUDA_ARCHITECTURES / CUDAARCHS)" PARENT_SCOPE)
    return()
  endif()
  string(TOLOWER "${NANOSCOPY_CUDA_TARGETS}" mode)
  if(NOT mode MATCHES "^(auto|native|all)$")
    message(FATAL_ERROR "NANOSCOPY_CUDA_TARGETS must be auto, native or all (got '${NANOSCOPY_CUDA_TARGETS}')")
  endif()
  nanoscopy_all_cuda_architectures(${nvcc_version} all_archs)
  if(NOT mode STREQUAL "all")
    nanoscopy_local_cuda_capabilities(caps names)
    if(caps)
      # A card newer than the toolkit knows runs the newest PTX the toolkit makes.
      set(archs "")
      set(newest_known 0)
      foreach(a IN LISTS all_archs)
        if(a MATCHES "^([0-9]+)-real$" AND CMAKE_MATCH_1 GREATER newest_known)
          set(newest_known ${CMAKE_MATCH_1})
        endif()
      endforeach()
      set(top 0)
      foreach(c IN LISTS caps)
        if(c GREATER newest_known)
          list(APPEND archs "${newest_known}-virtual")
        else()
          list(APPEND archs "${c}-real")
          if(c GREATER top)
            set(top ${c})
          endif()
        endif()
      endforeach()
      if(top GREATER 0)
        list(APPEND archs "${top}-virtual")
      endif()
      list(REMOVE_DUPLICATES archs)
      list(JOIN names ", " names_text)
      set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures")
      set(NANOSCOPY_CUDA_ARCH_REASON "native: this machine's GPU(s) ${names_text} [NANOSCOPY_CUDA_TARGETS=${mode}; all cards from Turing on: -DNANOSCOPY_CUDA_TARGETS=all]" PARENT_SCOPE)
      return()
    endif()
    if(mode STREQUAL "native")
      message(FATAL_ERROR "NANOSCOPY_CUDA_TARGETS=native but nvidia-smi reports no GPU on this machine: "
        "use -DNANOSCOPY_CUDA_TARGETS=all (every card from Turing on) or -DCMAKE_CUDA_ARCHITECTURES=86 (say)")
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${all_archs}" CACHE STRING "CUDA architectures")
  if(mode STREQUAL "all")
    set(why "asked for every card")
  else()
    set(why "no GPU visible on this machine")
  endif()
  set(NANOSCOPY_CUDA_ARCH_REASON "all cards from Turing on (${why}) [NANOSCOPY_CUDA_TARGETS=${mode}; only this machine's GPU: native]" PARENT_SCOPE)
endfunction()

# nvcc's --generate-code flags for an architecture list, with one front end
# (cicc) for all the SASS: every -real architecture is assembled (ptxas) from
# the PTX of the lowest, and each -virtual one adds its own PTX. CMake's own
# flags run cicc once per architecture, which in the fat build costs as much as
# the kernels' assembly again; our kernels test no __CUDA_ARCH__ version, so the
# lowest PTX makes the same code. Empty (leave it to CMake) for lists of
# keywords such as native or all-major.
function(nanoscopy_cuda_generate_code archs out)
  set(real "")
  set(virtual "")
  foreach(a IN LISTS archs)
    if(NOT a MATCHES "^([0-9]+)(-real|-virtual)?$")
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
    if(NOT CMAKE_MATCH_2 STREQUAL "-virtual")
      list(APPEND real ${CMAKE_MATCH_1})
    endif()
    if(NOT CMAKE_MATCH_2 STREQUAL "-real")
      list(APPEND virtual ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(flags "")
  if(real)
    list(SORT real COMPARE NATURAL)
    list(GET real 0 lowest)
    # NANOSCOPY_CUDA_PTX_ARCH (a developer's knob): the PTX the SASS is assembled from, e.g. 75 with
    # CMAKE_CUDA_ARCHITECTURES=90-real makes the fat build's sm_90 code in a one-architecture build.
    if(NANOSCOPY_CUDA_PTX_ARCH AND NANOSCOPY_CUDA_PTX_ARCH LESS lowest)
      set(lowest ${NANOSCOPY_CUDA_PTX_ARCH})
    endif()
    set(codes "")
    foreach(r IN LISTS real)
      list(APPEND codes "sm_${r}")
    endforeach()
    if(lowest IN_LIST virtual)
      list(APPEND codes "compute_${lowest}")
      list(REMOVE_ITEM virtual ${lowest})
    endif()
    list(JOIN codes "," codes_text)
    list(APPEND flags "--generate-code=arch=compute_${lowest},code=[${codes_text}]")
  endif()
  foreach(v IN LISTS virtual)
    list(APPEND flags "--generate-code=arch=compute_${v},code=[compute_${v}]")
  endforeach()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

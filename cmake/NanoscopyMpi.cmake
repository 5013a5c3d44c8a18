# MPI (Debian's Open MPI, libopenmpi-dev): AUTO uses it when found, ON requires
# it, OFF leaves it out. Sets NANOSCOPY_HAVE_MPI (0/1). Only lib/nanoscopy/cluster
# sees the MPI headers; a tool started without mpirun never initializes MPI.
set(NANOSCOPY_MPI AUTO CACHE STRING "Build MPI support: AUTO, ON or OFF")
set_property(CACHE NANOSCOPY_MPI PROPERTY STRINGS AUTO ON OFF)
set(NANOSCOPY_HAVE_MPI 0)
if(NOT NANOSCOPY_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(NANOSCOPY_HAVE_MPI 1)
  elseif(NANOSCOPY_MPI STREQUAL "ON")
    message(FATAL_ERROR "NANOSCOPY_MPI=ON but no MPI was found (apt-get install libopenmpi-dev)")
  endif()
endif()

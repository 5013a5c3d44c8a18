# `cmake --install` and `cpack -G DEB`: the five tools and nanoscopy-submit in
# bin/, params/ examples and the SLURM templates in share/nanoscopy/, the README,
# docs, licence and notices in share/doc/nanoscopy/, the man pages in share/man/man1
# (NanoscopyManPages.cmake). No libraries or headers:
# the core library is static and linked into each tool.
include(GNUInstallDirs)

install(TARGETS fit2d smre sofi frc bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS scripts/nanoscopy-submit DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY scripts/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/nanoscopy/slurm
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
install(DIRECTORY params/ DESTINATION ${CMAKE_INSTALL_DATADIR}/nanoscopy/params)
install(FILES README.md LICENSE THIRD_PARTY_NOTICES.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs PATTERN man EXCLUDE)  # docs/man: help2man input

# The CUDA runtime libraries (cuFFT) come from the toolkit, not from Debian:
# keep the toolkit's library folder in the installed tools' RPATH so a CUDA
# build finds them where it was built against them.
if(NANOSCOPY_HAVE_CUDA)
  set_target_properties(fit2d smre sofi frc bench PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
endif()

# The .deb depends on the Debian 12 runtime packages of the libraries the tools
# link (tests/install/check-install checks this list against ldd and dpkg -S).
set(_deb_depends libc6 libstdc++6 libgcc-s1 libgomp1 libtiff6 libhdf5-103-1 libfftw3-double3 libfftw3-single3 libyaml-cpp0.7 libpng16-16)
if(NANOSCOPY_HAVE_MPI)
  list(APPEND _deb_depends libopenmpi3)
endif()
if(NANOSCOPY_HAVE_MATIO)
  list(APPEND _deb_depends libmatio11)
endif()
list(JOIN _deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)

set(CPACK_PACKAGE_NAME nanoscopy)
set(CPACK_PACKAGE_VENDOR "nanoscopy")
set(CPACK_PACKAGE_CONTACT "nanoscopy maintainers <nanoscopy@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/nanoscopy")
if(NANOSCOPY_HAVE_CUDA)
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
 fit2d, smre, sofi, frc and bench, with SLURM templates and parameter examples.
 This build has the CUDA backend: it needs the NVIDIA driver for GPUs and the
 CUDA ${CUDAToolkit_VERSION_MAJOR} runtime's cuFFT (in ${CUDAToolkit_LIBRARY_DIR}).")
else()
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
 fit2d, smre, sofi, frc and bench, with SLURM templates and parameter examples.
 This build computes on the CPU only.")
endif()
set(CPACK_GENERATOR DEB)
include(CPack)

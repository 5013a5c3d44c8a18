# Every dependency comes from a Debian package (see scripts/install-deps).
find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)            # libcli11-dev
find_package(nlohmann_json 3 CONFIG REQUIRED)  # nlohmann-json3-dev
find_package(TIFF REQUIRED)                    # libtiff-dev
find_package(HDF5 REQUIRED COMPONENTS C)       # libhdf5-dev
find_package(yaml-cpp CONFIG REQUIRED)         # libyaml-cpp-dev (Picasso .yaml)
find_package(PNG REQUIRED)                     # libpng-dev (single test images)
find_package(OpenMP)
if(NANOSCOPY_TESTS)
  find_package(doctest CONFIG REQUIRED)        # doctest-dev
endif()

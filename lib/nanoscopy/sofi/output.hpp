// Where sofi's images go, for a run, rank 0 of mpirun and sofi merge alike: the
// optional SMRE of each cumulant image (--post-smre), then the planes and the mean
// as float32 TIFF pages or HDF5 datasets.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/sofi/runner.hpp"
#include "nanoscopy/sofi/problem.hpp"

namespace nanoscopy {

// --post-smre PRM (nothing when `prm` is ""): restores each plane in place with
// SMRE, its PSF sigma the camera's / sqrt(order) on the plane's own grid.
void apply_post_smre(const std::string& prm, const SofiProblem& problem, SofiImages& images, const Device& device,
                     bool quiet, std::ostream& out);

// Writes the planes and the mean (one file, or one per order and the mean, all
// appearing together); returns the files written.
std::vector<std::string> write_sofi_images(const std::string& path, const SofiProblem& problem, const SofiImages& images,
                                           double pixel_size_nm);

// The files write_sofi_images writes for `path` (for the run's plan, before any work).
std::vector<std::string> sofi_image_files(const std::string& path, const SofiProblem& problem);

// Before any work: a wrong extension or a missing directory is found in a second,
// not after the run. `image`: an image (.tif/.tiff/.h5/.hdf5), else partial sums (.h5).
void check_sofi_output(const std::string& path, bool image);

// "a.tif, b.tif": the files written, for the summary.
std::string file_list(const std::vector<std::string>& files);

}  // namespace nanoscopy

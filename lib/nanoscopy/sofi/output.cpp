#include "nanoscopy/sofi/output.hpp"

#include <cmath>
#include <filesystem>
#include <ostream>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/sibling_path.hpp"
#include "nanoscopy/io/hdf5_images.hpp"
#include "nanoscopy/io/image_writer.hpp"
#include "nanoscopy/smre/cli.hpp"
#include "nanoscopy/smre/runner.hpp"

namespace nanoscopy {
namespace {

// Post-SMRE: a SOFI image of order n has the PSF raised to the n-th power, so
// its sigma is the camera PSF's / sqrt(n), in pixels of its own grid (n times
// finer for cross-cumulants).
double post_smre_psf_scale(const SofiPlane& plane) {
  return static_cast<double>(plane.upsample) / std::sqrt(static_cast<double>(plane.order));
}

}  // namespace

void apply_post_smre(const std::string& prm, const SofiProblem& problem, SofiImages& images, const Device& device,
                     bool quiet, std::ostream& out) {
  if (prm.empty()) return;
  for (std::size_t i = 0; i < problem.planes.size(); ++i) {
    auto ro = smre_options_from_file(prm, post_smre_psf_scale(problem.planes[i]), true);
    ro.source = "sofi " + problem.labels[i];
    SmreRunner runner(problem.plane_width(static_cast<int>(i)), problem.plane_height(static_cast<int>(i)), ro,
                      smre_engine_factory(device));
    const auto outcome = runner.run(images.planes[i], 0);
    if (!quiet)
      out << "  post-SMRE of " << problem.labels[i] << ": " << outcome.front().iterations << " iterations"
          << (outcome.front().converged ? "" : " (iteration cap)") << ", PSF sigma " << ro.settings.psf_sigma << " px\n";
  }
}

std::vector<std::string> write_sofi_images(const std::string& path, const SofiProblem& problem, const SofiImages& images,
                                      double pixel_size_nm) {
  const std::string software = std::string("nanoscopy sofi ") + NANOSCOPY_VERSION;
  const std::string ext = std::filesystem::path(path).extension().string();
  const char* kind = problem.moments ? "moment" : "order";
  if (ext == ".h5" || ext == ".hdf5") {
    std::vector<NamedImage> named;
    for (std::size_t i = 0; i < problem.planes.size(); ++i) {
      const auto& pl = problem.planes[i];
      named.push_back({kind + std::to_string(pl.order), problem.plane_width(static_cast<int>(i)),
                       problem.plane_height(static_cast<int>(i)), images.planes[i].data(), problem.labels[i],
                       pixel_size_nm / pl.upsample});
    }
    named.push_back({"mean", problem.width, problem.height, images.mean.data(), "mean image", pixel_size_nm});
    write_hdf5_images(path, named, software);
    return {path};
  }
  if (ext != ".tif" && ext != ".tiff")
    throw UsageError(path, "write .tif/.tiff (one float32 page per order, then the mean) or .h5/.hdf5");
  // Every page is named (ImageJ slice labels): "order 2", ..., "mean".
  auto write_pages = [&](const std::string& file, std::int64_t w, std::int64_t h, std::vector<const float*> pages,
                         double px, const std::vector<std::string>& labels) {
    write_float_pages(file, w, h, pages, px, software, labels);
  };
  if (!problem.planes.front().cross) {
    std::vector<const float*> pages;
    std::vector<std::string> labels = problem.labels;
    for (const auto& plane : images.planes) pages.push_back(plane.data());
    pages.push_back(images.mean.data());
    labels.push_back("mean");
    write_pages(path, problem.width, problem.height, pages, pixel_size_nm, labels);
    return {path};
  }
  // Cross-cumulant grids differ per order: one file each (ImageJ wants one size
  // per stack), appearing together.
  OutputGroup together;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < problem.planes.size(); ++i) {
    const auto& pl = problem.planes[i];
    files.push_back(sibling_path(path, "_" + std::string(kind) + std::to_string(pl.order) + ext));
    write_pages(files.back(), problem.plane_width(static_cast<int>(i)), problem.plane_height(static_cast<int>(i)),
                {images.planes[i].data()}, pixel_size_nm / pl.upsample, {problem.labels[i]});
  }
  files.push_back(sibling_path(path, "_mean" + ext));
  write_pages(files.back(), problem.width, problem.height, {images.mean.data()}, pixel_size_nm, {"mean"});
  together.commit();
  return files;
}

std::vector<std::string> sofi_image_files(const std::string& path, const SofiProblem& problem) {
  const std::string ext = std::filesystem::path(path).extension().string();
  const bool hdf5 = ext == ".h5" || ext == ".hdf5";
  if (hdf5 || problem.planes.empty() || !problem.planes.front().cross) return {path};
  const char* kind = problem.moments ? "moment" : "order";
  std::vector<std::string> files;
  for (const auto& pl : problem.planes) files.push_back(sibling_path(path, "_" + std::string(kind) + std::to_string(pl.order) + ext));
  files.push_back(sibling_path(path, "_mean" + ext));
  return files;
}

void check_sofi_output(const std::string& path, bool image) {
  const std::string ext = std::filesystem::path(path).extension().string();
  const bool hdf5 = ext == ".h5" || ext == ".hdf5";
  if (!hdf5 && (!image || (ext != ".tif" && ext != ".tiff")))
    throw UsageError(path, image ? "write .tif/.tiff (one float32 page per order, then the mean) or .h5/.hdf5"
                                 : "partial sums are written as HDF5 (.h5)");
  AtomicOutput probe(path);  // OutputError when the directory is missing or not writable
}

std::string file_list(const std::vector<std::string>& files) {
  std::string s;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i) s += ", ";
    s += files[i];
  }
  return s;
}

}  // namespace nanoscopy

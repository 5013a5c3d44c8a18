// Per-pixel sCMOS camera maps (Huang et al., Nat. Methods 10, 653, 2013): each
// pixel i has its own offset o_i [ADU], gain g_i [ADU per photoelectron] and
// read-noise variance var_i [ADU²]. The sCMOS likelihood treats
//
//   (D_i − o_i)/g_i + var_i/g_i²  ~  Poisson(μ_i + var_i/g_i²)
//
// with μ_i the model's expected photoelectrons; so the estimator needs, per
// pixel of a ROI, the data in photoelectrons, (D_i − o_i)/g_i, and the variance
// shift var_i/g_i² [photoelectrons²], which it adds to both data and model.
// ("Photons" below means photoelectrons: Qe is recorded, never applied, as in
// core/camera.hpp.)
//
// Files: one HDF5 file with 2-D datasets /offset, /gain, /variance of the same
// size (any numeric type; `bench simulate movie --camera scmos` writes float32),
// or three single-page TIFFs given as "offset.tif,gain.tif,variance.tif".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy {

// Photoelectrons of one pixel: (adu − offset) / gain.
NANOSCOPY_HD float scmos_photons(float adu, float offset, float gain) {
  return (adu - offset) / gain;
}
// The pixel's read-noise variance in photoelectrons², var / gain²: the shift
// added to data and model in the sCMOS Poisson likelihood.
NANOSCOPY_HD float scmos_variance_shift(float variance, float gain) {
  return variance / (gain * gain);
}

struct CameraMaps {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::vector<float> offset;    // ADU, height × width, row-major
  std::vector<float> gain;      // ADU per photoelectron (> 0)
  std::vector<float> variance;  // read-noise variance, ADU² (≥ 0)
  // Where they came from, for messages: "maps.h5" or "offset.tif,gain.tif,variance.tif".
  std::string source;

  std::int64_t pixels() const { return width * height; }

  // InputError naming `source` (and the map's own file) for maps of different
  // sizes, an empty map, a non-finite value, a gain ≤ 0 or a negative variance;
  // the message names the first bad pixel as (x, y).
  void validate() const;

  // InputError naming `source` unless the maps are `width` × `height`, the frame
  // size of `movie` (named in the message).
  void check_frame_size(std::int64_t frame_width, std::int64_t frame_height, const std::string& movie) const;

  // A ROI of `roi_width` × `roi_height` pixels whose top-left pixel is (x0, y0)
  // in the frame, ADU in `adu` (row-major): writes the photoelectrons and the
  // variance shift var/gain² of each pixel (either output may be null).
  // std::out_of_range when the ROI leaves the maps.
  void to_photons(const float* adu, std::int64_t x0, std::int64_t y0, std::int64_t roi_width,
                  std::int64_t roi_height, float* photons, float* variance_shift) const;
  void to_photons(const std::uint16_t* adu, std::int64_t x0, std::int64_t y0, std::int64_t roi_width,
                  std::int64_t roi_height, float* photons, float* variance_shift) const;
};

// Reads and validates camera maps. `spec` is one HDF5 file with /offset, /gain
// and /variance, or three image files "offset,gain,variance" separated by commas
// (TIFF, or HDF5 with a single 2-D dataset each). UsageError (where: `option`)
// for a malformed spec; InputError naming the file for a missing file or
// dataset, a map that is not one 2-D image, different sizes or bad values.
// Every map's size is checked before its pixels are allocated: against `frame` (the movie's frame
// size, when width > 0; InputError naming the map's file and the movie) and against kMaxCameraMapPixels.
inline constexpr std::int64_t kMaxCameraMapPixels = std::int64_t{1} << 28;
struct CameraMapFrame {
  std::int64_t width = 0, height = 0;  // 0: not known
  std::string movie;                   // named in the message
};
CameraMaps read_camera_maps(const std::string& spec, const std::string& option = "--camera-maps",
                            const CameraMapFrame& frame = {});

// Writes the maps as one HDF5 file (float32 /offset, /gain, /variance, with a
// "units" attribute each), atomically; OutputError naming `path` on failure.
void write_camera_maps_hdf5(const std::string& path, const CameraMaps& maps, const std::string& software = "");
// Writes the three maps as single-page float32 TIFFs, atomically.
void write_camera_maps_tiff(const std::string& offset_path, const std::string& gain_path,
                            const std::string& variance_path, const CameraMaps& maps, const std::string& software = "");

}  // namespace nanoscopy

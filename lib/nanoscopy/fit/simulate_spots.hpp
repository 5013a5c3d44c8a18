// Simulated spot ROIs with known truth, after the recipe of the fitting paper
// (Leutenegger & Weber, "Results and Discussion"): a width × height ROI, centre
// ~ N(ROI centre, (size/20)²) per axis, σ ~ U[σ_min, σ_max] (the elliptical
// model: σx and σy each, independently; the astigmatic model: z ~ U[z_min,
// z_max] and σx(z), σy(z) from `astigmatism`), `signal` integrated
// counts, `background` counts spread evenly over the ROI, Gaussian noise of
// variance = pixel value, rounded to non-negative integers. Seeded (std::mt19937_64):
// the same recipe, count and seed give the same pixels on every machine.
#pragma once

#include <cstdint>
#include <vector>

#include "nanoscopy/fit/engine.hpp"

namespace nanoscopy {

struct SpotRecipe {
  int width = 9;
  int height = 9;
  double signal = 400.0;     // integrated counts of the spot
  double background = 40.0;  // total counts over the ROI (background/(width·height) per pixel)
  double centre_sd = -1.0;   // centre spread in px; < 0: width/20 in x and height/20 in y
  double sigma_min = 1.0;
  double sigma_max = 2.0;
  ShapeModel model = ShapeModel::sampled;  // how the truth image is formed
  double z_min = -400.0, z_max = 400.0;    // nm, the astigmatic model's depths
  AstigmaticPsf<double> astigmatism = typical_astigmatic_psf();  // σ in px, z in nm (as FitSettings')
  bool noise = true;                       // false: exact model values (not rounded)
  bool poisson = false;                    // Poisson noise (the MLE's data model) instead of the paper's Gaussian
};

struct SpotTruth {
  double x, y, sigma;  // ROI pixel coordinates, pixel centre at integer index; sigma = σx
  double sigma_y;      // σy: = sigma but for the elliptical and astigmatic models
  double amplitude;    // α of `model`: peak height (sampled) or integrated counts (integrated)
  double background;   // per pixel
  double z = 0;        // nm, the astigmatic model's depth (0 otherwise)
};

struct SimulatedSpots {
  int width = 0, height = 0;
  std::int64_t count = 0;
  std::vector<float> pixels;              // count·width·height values, ROI-major, row-major
  std::vector<std::uint16_t> pixels_u16;  // the same values as uint16 (clamped to 65535)
  std::vector<SpotTruth> truth;

  // A view of the ROIs as a batch: uint16 or float32 pixels, optional guesses.
  RoiBatch batch(PixelType type, const SpotGuess* initial = nullptr) const {
    return RoiBatch{type == PixelType::u16 ? static_cast<const void*>(pixels_u16.data()) : pixels.data(), type, count,
                    width, height, initial};
  }
};

SimulatedSpots simulate_spots(const SpotRecipe& recipe, std::int64_t count, std::uint64_t seed);

}  // namespace nanoscopy

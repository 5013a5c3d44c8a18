// sofi --balanced behind the command line: its options, the orders it needs,
// the deconvolution the user picked (Richardson-Lucy, or SMRE on the device),
// and its files beside the cumulant image: <out>_balanced.tif|.h5 (pages
// balanced, rho, epsilon, density) and the PNG previews <out>_balanced.png and
// <out>_balanced_panel.png (balanced, rho / epsilon, density).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/params/params.hpp"
#include "nanoscopy/sofi/balanced.hpp"

namespace nanoscopy {

struct BalancedOptions {
  bool enabled = false;
  BalancedSettings settings;
  std::string method = "rl";  // "rl" or "smre"
  int iterations = kBalancedRlIterations;  // Richardson-Lucy
  std::string smre_prm;       // smre parameter file ("": smre's defaults); its PSF sigma is replaced
};

// SOFI/balanced and its keys. UsageError: --balanced without an explicit --psf-sigma
// (a default PSF would give plausible-looking but wrong parameters).
BalancedOptions balanced_options_from(const Params& p);

// The orders a balanced run computes: 2..n, n the largest of `orders` (3 or 4).
// UsageError for n < 3 or n > 4, --cross or --moments.
std::vector<int> balanced_orders(const std::vector<int>& orders, bool cross, bool moments);

// Balances the images and writes the balanced files beside `sofi_path` (inside the
// caller's OutputGroup, if any); returns the files written.
// The files write_balanced writes beside `sofi_path` for balanced SOFI up to `order` (for the run's plan).
std::vector<std::string> balanced_files(const std::string& sofi_path, int order);

// The label burned into the top-left corner of the 2 x 2 panel's tile `tile` (0 balanced, 1 rho,
// 2 epsilon, 3 density, in reading order) of `tile_width` pixels: the long name when it fits,
// else a short one; at balanced_panel_label_scale pixels per font cell (io/gray_label.hpp).
const char* balanced_panel_label(int tile, std::int64_t tile_width);
int balanced_panel_label_scale(std::int64_t tile_width);

std::vector<std::string> write_balanced(const std::string& sofi_path, const SofiProblem& problem,
                                        const SofiImages& images, const BalancedOptions& options, const Device& device,
                                        double pixel_size_nm, bool quiet, std::ostream& out);

}  // namespace nanoscopy

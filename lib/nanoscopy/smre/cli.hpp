// smre's work, behind its command line: restore every frame of an image or
// stack (or simulate a test image from a true one first), stream the result to
// a float32 TIFF/HDF5, report convergence, optionally log it as CSV and save
// control images; or print the weights c_s.
#pragma once

#include <iosfwd>
#include <string>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/smre/runner.hpp"
#include "nanoscopy/smre/smre_settings.hpp"

namespace nanoscopy {

// The solver settings the parameters (the paper's listing plus "method/...") say.
SmreSettings smre_settings_from(const Params& p);

// SMRE settings from a parameter file of smre's schema (params/smre.prm).
// `psf_scale` multiplies the PSF sigma (SOFI images have narrower PSFs).
SmreRunOptions smre_options_from_file(const std::string& path, double psf_scale, bool quiet);

// The runner's engine on `device`, through the backend registry (make_smre_engine).
SmreEngineFactory smre_engine_factory(const Device& device);

struct SmreOptions {
  std::string input;          // "" = input data/image
  std::string output;         // "" = output/output image, else <input stem>_smre.tif
  bool print_weights = false;
  std::string size;           // --print-weights without an image: "WxH"
  double fwhm = 0;            // > 0: the PSF given as FWHM (px) instead of sigma
  std::string partial;        // write --frames A:B as a part file (HDF5) for smre merge
};

void run_smre_cli(const SmreOptions& options, ToolContext& ctx, std::ostream& out);

}  // namespace nanoscopy

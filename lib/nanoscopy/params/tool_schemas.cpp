#include "nanoscopy/params/tool_schemas.hpp"

namespace nanoscopy {

Schema smre_schema() {
  Schema s("smre");
  // The docs start from the listing's comments (SMRE paper, Appendix B).
  s.string("input data/image", "", "path to the .tif image to restore");
  s.positive_real("input data/alpha1", 1.2, "enforces the first constraint I = A*x + eps: step of its dual update");
  s.positive_real("input data/alpha2", 0.12, "enforces the second constraint z = x: step of its dual update");
  s.real("input data/gaussian noise", 0, 0, {},
         "estimate of the Gaussian noise standard deviation; if simulate, noise of this std is added to the image");
  s.real("input data/regularization", 1.0, 0, {}, "intensity of regularisation (lambda of R(z) = lambda |z|^2 / 2)");
  s.positive_real("input data/rho1", 6.192, "stabilises the first constraint (penalty weight rho1)");
  s.positive_real("input data/rho2", 1.8, "stabilises the second constraint (penalty weight rho2)");
  s.positive_real("input data/sigma", 3, "PSF spread: standard deviation of the Gaussian PSF in pixels");

  s.string("output/output image", "control.tif", "where should we put the output image? Will be a TIFF image");
  s.boolean("output/control", false, "save preliminary results of the output image");

  s.integer("program flow control/MRdepth", 15, 1, {},
            "largest patch edge length in pixels if not using small dykstra in approximation");
  s.boolean("program flow control/approx", false,
            "do a small dykstra in approximation (incomplete cyclic Dykstra on 32x32 tiles)");
  s.integer("program flow control/maximum iterations", 10000, 1, {}, "maximum number of ADMM iterations");
  s.integer("program flow control/report interval", 1, 1, {}, "report progress every this many iterations");
  s.real("program flow control/tolerance", 1e-3, 0, {},
         "finish when |x_r - x_{r-1}| / sqrt(pixels) < tolerance (0: run to maximum iterations)");

  s.boolean("simulate dataset from real image/simulate", true,
            "if false the input is treated as real data; if true as a test image to which blur and noise are added");
  s.boolean("simulate dataset from real image/time seed", false,
            "if false simulated noise has a constant seed; if true the seed is taken from the clock");
  return s;
}

}  // namespace nanoscopy

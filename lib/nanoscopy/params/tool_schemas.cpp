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

  s.string("output/output image", "",
           "where should we put the output image? TIFF (float32) or .h5; empty: <input>_smre.tif beside the input "
           "(the paper's listing says control.tif)");
  s.boolean("output/control", false, "save preliminary results of the output image");

  s.integer("program flow control/MRdepth", 15, 1, {},
            "largest patch edge length in pixels if not using small dykstra in approximation");
  // Defaults that finish ordinary data in seconds (the listing's own values, approx = false,
  // 10000 iterations, tolerance 1e-3, are in params/smre.prm).
  s.boolean("program flow control/approx", true,
            "do a small dykstra in approximation (incomplete cyclic Dykstra on 32x32 tiles; false: the exact "
            "projection on every square of edge 1..MRdepth, some 50x slower)");
  s.integer("program flow control/maximum iterations", 2000, 1, {},
            "maximum number of ADMM iterations (a frame that reaches it is reported as not converged)");
  s.integer("program flow control/report interval", 10, 1, {},
            "report progress (and save control images) every this many iterations (the listing says 1)");
  s.real("program flow control/tolerance", 5e-3, 0, {},
         "finish when |x_r - x_{r-1}| / sqrt(pixels) < tolerance x the frame's noise sigma: the same data in ADU or "
         "photons stops alike (0: run to maximum iterations)");

  s.boolean("simulate dataset from real image/simulate", false,
            "if false the input is treated as real data; if true as a test image to which blur and noise are added "
            "(the listing says true)");
  s.boolean("simulate dataset from real image/time seed", false,
            "if false simulated noise has a constant seed; if true the seed is taken from the clock");

  // Beyond the listing: choices the paper fixed or left to the code.
  s.choice("method/regularizer", "l2", {"l2", "tv", "l1"},
           "R(z): l2 = lambda |z|^2/2 (the paper's choice for SOFI), tv = isotropic total variation, l1");
  s.real("method/coverage", 0.9, 0.0, 1.0,
         "alpha: probability that pure noise satisfies every constraint (sets the weights c_s)");
  s.choice("method/weights", "monte-carlo", {"monte-carlo", "closed-form"},
           "c_s from the alpha-quantile of the maximum statistic by seeded Monte Carlo (cached), or the per-scale "
           "closed form");
  s.integer("method/weight samples", 500, 20, {}, "noise images of the Monte Carlo quantile");
  s.boolean("method/anscombe", false, "Poisson data: Anscombe transform before, unbiased inverse after (noise 1)");
  s.integer("method/icd sweeps", 0, 0, {}, "ICD sweeps per tile and pass: 1 = the paper's text, 0 = to tolerance");
  s.real("method/dykstra tolerance", 1e-3, 0.0, {},
         "stop a projection when the mean |change| of eps per sweep < this times the noise sigma");
  s.integer("method/dykstra max sweeps", 200, 1, {}, "cap on Dykstra sweeps per projection");
  s.boolean("method/dykstra warm start", true,
            "start each projection from the previous ADMM iteration's Dykstra memory (same limit, far fewer sweeps)");
  s.positive_real("method/gamma", 0.1, "step of the linearized x-update");
  s.integer("method/tv iterations", 10, 1, {}, "Chambolle dual iterations per z-step (tv)");
  s.string("output/log", "", "CSV file for the convergence history (frame, iteration, c1, c2, max ratio, step)");
  return s;
}

}  // namespace nanoscopy

// Each tool's parameters (type, default, range, doc): what --print-params
// prints and what --params files are checked against. smre's (tool_schemas.cpp)
// mirrors the paper's listing; the other tools' are in cli_schemas.cpp.
#pragma once

#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

// smre: every key of the SMRE paper's Appendix B listing (params/smre.prm), with
// the listing's subsection names, keys and defaults:
//   input data/{image, alpha1, alpha2, gaussian noise, regularization, rho1, rho2, sigma}
//   output/{output image, control}
//   program flow control/{MRdepth, approx, maximum iterations, report interval, tolerance}
//   simulate dataset from real image/{simulate, time seed}
//   method/{regularizer, coverage, weights, weight samples, anscombe, icd sweeps, dykstra tolerance,
//           dykstra max sweeps, gamma, tv iterations}, output/log: what the listing leaves to the code
// Defaults are the listing's except where a plain command line should restore
// real data: simulate false, output image <input>_smre.tif, report interval 10.
// Lengths are in pixels; intensities in the image's units.
Schema smre_schema();

const Schema& fit2d_schema();
const Schema& sofi_schema();
const Schema& frc_schema();
const Schema& bench_schema();

}  // namespace nanoscopy

#include "nanoscopy/tools/schemas.hpp"

namespace nanoscopy {
namespace {

// Shared by every tool that streams a stack.
void add_input(Schema& s) {
  s.integer("Input/chunk frames", 256, 1, 1 << 20, "frames read per chunk while streaming (memory ~ chunk x frame size)");
  s.real("Input/pixel size", 0, 0, 1e6, "camera pixel size in nm when the file does not say (0: unknown)");
}

}  // namespace

const Schema& fit2d_schema() {
  static const Schema schema = [] {
    Schema s("fit2d");
    add_input(s);
    s.integer("Fit/max iterations", 20, 1, 1000, "Levenberg-Marquardt iterations before giving up");
    s.real("Fit/max error", 0, 0, {}, "stop when the normalized chi^2 falls below this (0: off)");
    s.real("Fit/min delta", 1e-6, 0, 1, "stop when chi^2 decreases by less than this fraction");
    s.real("Fit/min step", 1e-4, 0, 1, "stop when every parameter step is below this fraction of the parameter");
    s.choice("Fit/model", "sampled", {"sampled", "integrated"},
             "spot shape: sampled Gaussian (the paper's) or pixel-integrated Gaussian (erf)");
    return s;
  }();
  return schema;
}

const Schema& sofi_schema() {
  static const Schema schema = [] {
    Schema s("sofi");
    add_input(s);
    return s;
  }();
  return schema;
}

const Schema& frc_schema() {
  static const Schema schema = [] {
    Schema s("frc");
    add_input(s);
    return s;
  }();
  return schema;
}

const Schema& bench_schema() {
  static const Schema schema = [] {
    Schema s("bench");
    s.integer("seed", 1, 0, {}, "random seed of every simulation");
    s.integer("repeats", 5, 1, 1000, "timed repetitions per cell (the median is reported)");
    return s;
  }();
  return schema;
}

}  // namespace nanoscopy

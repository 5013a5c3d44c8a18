// The backend interface of SMRE: "ADMM iterations on a batch of frames". The
// CPU engine (engine_cpu.cpp) is the reference; the CUDA engine
// (kernels/smre) keeps every array of a batch on the GPU. Both do exactly this
// iteration per active frame (notes/reference.md 4, decisions 1-3):
//   r   = rho1 (I - eps - A x) + u1           (A x from the previous iteration)
//   x'  = x + gamma (A^T r + rho2 (z - x) - u2)
//   Ax' = A x'
//   z   = prox_{R/rho2}(x' + u2/rho2)         (l2, l1: per pixel; tv: Chambolle, warm-started dual)
//   eps = P_G(I - A x' + u1/rho1)             (exact or incomplete Dykstra, q from 0)
//   u1 += alpha1 (I - eps - A x');  u2 += alpha2 (x' - z)
// Start: x = z = I, eps = u1 = u2 = 0 (tv dual p = 0).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "nanoscopy/smre/psf.hpp"
#include "nanoscopy/smre/set_family.hpp"
#include "nanoscopy/smre/smre_settings.hpp"
#include "nanoscopy/smre/weights.hpp"

namespace nanoscopy {

// Everything fixed for a run: padded frame size, A, the set family and its weights.
struct SmreProblem {
  std::int64_t width = 0, height = 0;  // padded frame (multiples of 32)
  PsfKernel psf;
  SetFamily family;
  Weights weights;
  SmreSettings settings;
  std::int64_t pixels() const { return width * height; }
};

// What one iteration did to one frame (means over the padded frame).
struct FrameStats {
  double c1 = 0;    // mean (I - eps - A x)^2 after the iteration
  double c2 = 0;    // mean (x - z)^2
  double step = 0;  // |x_r - x_{r-1}| / sqrt(N)
  int sweeps = 0;   // Dykstra sweeps of this iteration's projection
};

class SmreEngine {
 public:
  virtual ~SmreEngine() = default;
  virtual std::string name() const = 0;  // "cpu (2 threads)", "cuda:0 (NVIDIA H100)"
  // Frames per batch this engine takes.
  virtual std::int64_t capacity() const = 0;
  // Starts a batch of count = frames.size() / pixels() padded frames (<= capacity),
  // with the noise sigma of each.
  virtual void start(std::span<const float> frames, std::span<const double> noise_sigma) = 0;
  // One iteration of every frame whose `active` flag is non-zero (the others stay as
  // they are, so a frame's result does not depend on its batch); fills `stats` of active frames.
  virtual void iterate(std::span<const std::uint8_t> active, std::span<FrameStats> stats) = 0;
  // Current x or eps of every frame of the batch (count * pixels() floats).
  virtual void read_x(std::span<float> out) = 0;
  virtual void read_eps(std::span<float> out) = 0;
};

std::unique_ptr<SmreEngine> make_cpu_smre_engine(const SmreProblem& problem, int threads);

}  // namespace nanoscopy

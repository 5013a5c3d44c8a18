// The detect engine: spot detection (detect.hpp's algorithm) behind one
// interface, host frames in, candidates out. The CPU engine runs detect_cpu;
// the CUDA one (kernels/loc/detect_engine_cuda.hpp) uploads the frames and
// detects on the device, with bit-identical results.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nanoscopy/loc/detect/detect_types.hpp"

namespace nanoscopy {

class DetectEngine {
 public:
  virtual ~DetectEngine() = default;
  // Detects spots in `count` float32 frames (T, Y, X) on the host; `out` is
  // cleared and filled in (frame, y, x) order. InputError for frames smaller
  // than the box.
  virtual void detect(const float* frames_host, std::int64_t first_frame, std::int64_t count, int width, int height,
                      std::vector<Candidate>& out) = 0;
  virtual std::string name() const = 0;  // "cpu (2 threads)", "cuda:0"
};

// detect_cpu on `threads` threads (≤ 0: all). UsageError for invalid settings.
std::unique_ptr<DetectEngine> make_cpu_detect_engine(const DetectSettings& settings, int threads);

}  // namespace nanoscopy

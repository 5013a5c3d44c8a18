// The CPU detect engine: detect_cpu behind the DetectEngine interface.
#include <memory>
#include <string>

#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/detect/engine.hpp"

namespace nanoscopy {
namespace {

class CpuDetectEngine final : public DetectEngine {
 public:
  CpuDetectEngine(const DetectSettings& settings, int threads)
      : settings_(settings), threads_(detect_thread_count(threads)) {
    validate_detect_settings(settings_);
  }
  void detect(const float* frames_host, std::int64_t first_frame, std::int64_t count, int width, int height,
              std::vector<Candidate>& out) override {
    detect_cpu(frames_host, first_frame, count, width, height, settings_, threads_, out);
  }
  std::string name() const override {
    return "cpu (" + std::to_string(threads_) + " thread" + (threads_ == 1 ? "" : "s") + ")";
  }

 private:
  DetectSettings settings_;
  int threads_;
};

}  // namespace

std::unique_ptr<DetectEngine> make_cpu_detect_engine(const DetectSettings& settings, int threads) {
  return std::make_unique<CpuDetectEngine>(settings, threads);
}

}  // namespace nanoscopy

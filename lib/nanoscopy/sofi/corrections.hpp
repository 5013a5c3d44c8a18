// sofi's first pass (--undrift, --bleach-correction exponential): one stream
// over the frame range, before the cumulant pass, that measures what the
// per-frame corrections need, and the corrections themselves:
//   - the mean image of every drift block (--drift-block frames, the last block
//     taking the remainder), handed to the drift estimator as it completes
//     (drift_estimate.hpp); memory: one block mean and the estimator's spectra;
//   - the mean intensity of every frame (8 bytes a frame), for the exponential
//     fit (bleach_fit.hpp).
// The corrections are then a table by stack frame (16 bytes a frame) that the
// cumulant pass looks up for any sequence of the range (--split's halves too).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/sofi/bleach_fit.hpp"
#include "nanoscopy/sofi/drift_estimate.hpp"
#include "nanoscopy/sofi/frame_correction.hpp"

namespace nanoscopy {

class StackReader;

// --bleach-correction: none (one block over the whole range: no centring but
// the overall mean), block (each --block centred on its own mean: the default,
// as bSOFI and pysofi's sub-sequences), exponential (every frame scaled by
// f(0)/f(t) of the fitted decay first, bleach_fit.hpp; the blocks are then centred as well).
enum class BleachCorrection { none, block, exponential };
BleachCorrection parse_bleach_correction(const std::string& text);  // UsageError naming --bleach-correction
const char* to_string(BleachCorrection b);

struct SofiCorrectionSettings {
  bool undrift = false;
  std::int64_t drift_block = 500;  // frames per drift block
  SofiDriftSettings drift;
  BleachCorrection bleach = BleachCorrection::block;
  bool quiet = true;
  int read_threads = 0;  // readers decoding each chunk of the first pass (0: auto)
  // Whether a first pass is needed at all.
  bool any() const { return undrift || bleach == BleachCorrection::exponential; }
};

struct SofiCorrections {
  std::int64_t first = 0;                   // stack frame of frames[0]
  std::vector<SofiFrameCorrection> frames;  // one per frame of the range
  std::optional<SofiDriftEstimator::Result> drift;
  std::optional<BleachFit> bleach;
  std::vector<double> frame_mean;  // the first pass's mean intensity per frame (raw values)
  double seconds = 0;              // the whole first pass

  // The correction of stack frame f (std::out_of_range outside the range).
  const SofiFrameCorrection& at(std::int64_t stack_frame) const;
};

using CorrelationEngineFactory = std::function<std::unique_ptr<CorrelationEngine>(const CorrelationGeometry&)>;

// Streams [range.first, range.last) of the stack once. Throws what reading
// throws, and InputError for NaN/Inf pixels or a range too short for 2 drift blocks.
SofiCorrections measure_sofi_corrections(StackReader& reader, FrameRange::Resolved range,
                                         const SofiCorrectionSettings& settings,
                                         const CorrelationEngineFactory& make_engine);

}  // namespace nanoscopy

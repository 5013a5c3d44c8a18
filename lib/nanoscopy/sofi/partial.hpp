// Partial SOFI sums on disk (sofi --frames A:B --partial part.h5; sofi merge).
//
// One HDF5 file per part. Root attributes: format ("nanoscopy sofi partial 1"),
// stack and parameter fingerprints, the stack's name, the problem options (orders,
// lags, cross, moments, psf_sigma), the sequence (first, step, length), the
// range [begin, end) this part summed, block, width, height, pixel_size_nm, and
// the finished blocks/frames. Datasets (doubles unless noted):
//   /finished/plane<i>   sum over finished blocks of plane i (plane grid, Y x X)
//   /finished/frame_sum  sum of the finished blocks' frames (Y x X)
//   /open/<k>/{shift (float32), frame_sum, terms (T x Y x X)} with attributes
//   frames and tuples: the raw sums of block k, which this part's range cuts
//   (its lag overlap was read past `end`, so tuples never double count).
#pragma once

#include <cstdint>
#include <string>

#include "nanoscopy/sofi/problem.hpp"
#include "nanoscopy/sofi/runner.hpp"

namespace nanoscopy {

struct SofiPartial {
  std::string stack_fingerprint;      // which movie: stack_fingerprint() of the whole stack (attribute movie_fingerprint)
  std::string parameter_fingerprint;  // which parameters (problem, block, pre-SMRE file)
  std::string stack_name;
  SofiProblemOptions options;
  FrameSequence sequence;
  std::int64_t begin = 0, end = 0;
  std::int64_t block = 0;
  std::int64_t width = 0, height = 0;
  double pixel_size_nm = 0;
  SofiAccumulation acc;
};

// Writes atomically (OutputError naming the path).
void write_sofi_partial(const std::string& path, const SofiPartial& part);
// InputError naming the path for a missing, foreign or damaged file.
SofiPartial read_sofi_partial(const std::string& path);

// Merges parts into one accumulation: UsageError/InputError naming the
// offending file when fingerprints differ, ranges overlap or leave a gap. The
// parts may come in any order. Returns the merged partial (range = whole sequence).
SofiPartial merge_sofi_partials(const std::vector<std::string>& paths, int threads);

}  // namespace nanoscopy

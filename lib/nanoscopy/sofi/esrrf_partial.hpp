// eSRRF in parts for clusters (sofi esrrf STACK --frames A:B --partial P.h5; sofi merge P*.h5 -o OUT.tif).
//
// The time points are those of the whole stack (frames 0..F, --frames-per-timepoint, --step); a part sums the
// frames of each time point that fall in its range [A, B). Per time point and output pixel it stores, in double,
// the raw sums of the intensity-weighted RGC x over its n frames: S1 = sum x, S2 = sum x^2, P = sum of the lag-1
// products x_t x_(t-1) inside the part, and its first and last values. Parts of one time point join in frame
// order: n, S1, S2 and P add, and P gains the product across the cut (last of the earlier part x first of the
// later). The merged value: AVG = S1 / n, VAR = S2 / n - m^2, TAC2 = (P - m (2 S1 - x_first - x_last) +
// (n - 1) m^2) / (n - 1) with m = S1 / n; then the macro-pixel correction. One process's image comes from the
// engine's float sums of x - K instead, so a merge equals it to float rounding (test_esrrf: within 1e-5 of the
// image maximum), not bit for bit.
//
// File: HDF5, root attributes format ("nanoscopy esrrf partial 1"), movie_fingerprint, stack, settings (the
// eSRRF settings as text; parts must agree), stack_frames, frames_per_timepoint, step, begin, end, width, height,
// pixel_size_nm; group tp/<i> per time point touched, attributes n, first_frame, last_frame, datasets s1, s2, p,
// first, last (float64, out_height x out_width).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nanoscopy/sofi/esrrf_engine.hpp"

namespace nanoscopy {

struct EsrrfPartSums {
  std::int64_t n = 0;
  std::int64_t first_frame = 0, last_frame = 0;  // stack frames of the first and last value summed
  std::vector<double> s1, s2, p, first, last;
};

// A slot's sums (x - K in float, esrrf_math::TemporalState) over n frames as raw double sums.
EsrrfPartSums esrrf_part_sums(const EsrrfSlotSums& sums, std::int64_t n, std::int64_t first_frame,
                              std::int64_t last_frame);
// Appends `later` (the frames right after `total`'s, same time point) to `total`; `total` may be empty (n = 0).
void esrrf_part_append(EsrrfPartSums& total, const EsrrfPartSums& later);
// The temporal analysis of the joined sums (no macro-pixel correction).
std::vector<float> esrrf_part_finish(const EsrrfPartSums& sums, esrrf_math::Temporal kind);

struct EsrrfPartial {
  std::string stack_fingerprint, stack_name, settings_text;
  EsrrfSettings settings;
  std::int64_t stack_frames = 0, frames_per_timepoint = 0, step = 0;
  std::int64_t begin = 0, end = 0;
  std::int64_t width = 0, height = 0;  // input frame
  double pixel_size_nm = 0;
  std::map<std::int64_t, EsrrfPartSums> time_points;  // by index into esrrf_time_points(0, stack_frames, ...)
};

std::string esrrf_settings_text(const EsrrfSettings& s);
void write_esrrf_partial(const std::string& path, const EsrrfPartial& part);
EsrrfPartial read_esrrf_partial(const std::string& path);
// Whether `path` is an HDF5 file whose format attribute says eSRRF partial (false for anything else).
bool is_esrrf_partial(const std::string& path);

// The parts (any order) joined: InputError naming a file when stacks or settings differ, ranges overlap or
// leave a gap. The result covers [0, stack_frames) and holds every time point.
EsrrfPartial merge_esrrf_partials(const std::vector<std::string>& paths);

}  // namespace nanoscopy

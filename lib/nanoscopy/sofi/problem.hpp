// What a SOFI run computes, flattened into plain arrays that the CPU reference
// and the CUDA kernels both walk.
//
// Every output value is a joint cumulant (or, with `moments`, a central moment)
// of n "variables", each a pixel offset and a time lag relative to a base pixel:
//   auto-cumulant of order n: n variables at offset (0, 0) with distinct lags
//     (lags[0..n)), so shot and read noise drop out (notes/reference.md 5);
//   cross-cumulant of order n: n distinct pixels at zero lag whose centroid is a
//     virtual pixel of an n-times finer grid, times the distance factor
//     exp(sum_{i<j} |r_i - r_j|^2 / (2 n sigma^2)) for a Gaussian PSF of std sigma.
//
// The estimator (one definition, whatever else is asked; docs/sofi.md, "The estimator"):
// within a block of frames [b0, b1) the fluctuations are
//   dF(p, t) = F(p, t) - <F(p)>_block,   <F(p)>_block the mean over ALL b1 - b0 frames,
// (Dertinger et al. 2009; Geissbuehler et al. 2012, bSOFI; pysofi), and an
// estimate of order n with lags l_1..l_n (auto) is the cumulant of the centred
// variables X_i(t) = dF(p + r_i, t + l_i) with every partition containing a
// singleton left out (the variables are taken as centred on the block mean):
//   AC_n = sum over partitions pi of {1..n} without singleton blocks of
//          (-1)^(|pi|-1) (|pi|-1)! prod_{B in pi} < prod_{i in B} X_i(t) >_W,
// where < >_W is the mean over the order's own window W = { t : b0 <= t and
// t + L < b1 }, L = max_i l_i the order's largest lag (cross-cumulants: zero lag,
// the whole block). The window depends on the order and its lags only, never on
// the other orders requested, so each image is the same alone or with others.
// With `moments` (mSOFI) the value is < prod_i X_i(t) >_W.
//
// A cumulant needs the (centred) joint moment of every subset of its variables.
// Those come from "terms": per pixel, the sum over the tuple times t of a
// window of the product over the term's variables of G(p + offset, t + lag), where
// G = F - K is the frame minus the block's shift frame K (its first frame; a
// provisional centre that keeps the double sums free of cancellation). A term
// is stored once per (variables, window), translated so that its first variable
// sits at offset (0, 0); a subset of a combination maps to (term, shift):
// raw_U(p) = R_term(p + shift). Reads outside the frame are clamped to the
// nearest edge pixel.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nanoscopy {

constexpr int kSofiMaxOrder = 6;
constexpr int kSofiMaxCrossOrder = 4;
constexpr int kSofiMaxSubsets = 1 << kSofiMaxOrder;

struct SofiVariable {
  int dx = 0, dy = 0;  // pixel offset from the base pixel
  int lag = 0;         // frames after the tuple's time t
};

// One accumulated product: sum over t in [b0, b1 - window) of
// prod_i G(p + vars[i].offset, t + vars[i].lag) (every lag <= window).
struct SofiTerm {
  int size = 0;
  int window = 0;               // the order's largest lag: tuples t with t + window < b1
  int var[kSofiMaxOrder] = {};  // indices into SofiProblem::variables (sorted)
};

// One estimate: the joint cumulant of `order` variables.
struct SofiCombo {
  int order = 0;
  int window = 0;  // its largest lag L: the moments are means over the block's frames - L tuples
  SofiVariable vars[kSofiMaxOrder];
  double factor = 1;  // distance factor (cross) or 1
  // For every non-empty subset mask of vars: the term holding its product sum and
  // the offset of that term's base pixel: raw_U(p) = R[subset_term[U]](p + subset_shift[U]).
  int subset_term[kSofiMaxSubsets] = {};
  int subset_dx[kSofiMaxSubsets] = {};
  int subset_dy[kSofiMaxSubsets] = {};
};

// One output image: order n on the camera grid (auto) or on an n-times finer grid (cross).
// Output pixel (X, Y) has base pixel (X / upsample, Y / upsample) and sub-position
// s = (Y % upsample) * upsample + X % upsample; its value is the mean over the combos
// [combo_begin[s], combo_begin[s + 1]) of factor * cumulant.
struct SofiPlane {
  int order = 2;
  int upsample = 1;
  bool cross = false;
  int combo_begin[kSofiMaxOrder * kSofiMaxOrder + 1] = {};
};  // plain data: copied to the GPU as bytes (the label lives in SofiProblem::labels)

struct SofiProblemOptions {
  std::vector<int> orders{2, 3, 4};  // 2..6 (auto), 2..4 (cross)
  std::vector<int> lags;             // empty: 0, 1, ..., max order - 1; order n uses lags[0..n)
  bool cross = false;                // cross-cumulants on finer grids instead of auto-cumulants
  bool moments = false;              // central moments (mSOFI) instead of cumulants
  double psf_sigma = 1.5;            // px, PSF standard deviation (cross distance factor)
  bool allow_repeated_lags = false;  // tests only: repeated lags keep the noise in
};

struct SofiProblem {
  std::int64_t width = 0, height = 0;  // camera frame
  int max_lag = 0;                     // the largest window: every tuple t in [b0, b1 - max_lag) counts for all terms
  int min_window = 0;                  // the smallest window: no tuple t >= b1 - min_window counts
  bool moments = false;
  std::vector<SofiVariable> variables;  // distinct variables of all terms
  std::vector<SofiTerm> terms;
  std::vector<SofiCombo> combos;
  std::vector<SofiPlane> planes;  // in the order of options.orders
  std::vector<std::string> labels;  // per plane: "order 2 auto-cumulant, lags 0,1"

  std::int64_t pixels() const { return width * height; }
  std::int64_t plane_width(int p) const { return width * planes[static_cast<std::size_t>(p)].upsample; }
  std::int64_t plane_height(int p) const { return height * planes[static_cast<std::size_t>(p)].upsample; }
  // A text that changes whenever the problem does (partial-file fingerprints).
  std::string describe() const;
};

// "2,3,4": orders and lags as the command line and partial files write them.
std::string join_ints(std::span<const int> values);

// Validates the options (UsageError: order outside 2..6 or 2..4 with cross, lags
// negative, not distinct, or fewer than the largest order) and builds the problem.
SofiProblem make_sofi_problem(std::int64_t width, std::int64_t height, const SofiProblemOptions& options);

}  // namespace nanoscopy

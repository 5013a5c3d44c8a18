// The one table of fit models. Each entry is a model type (models/*.hpp) whose
// `shape` is its ShapeModel key; the CPU engine (engine_cpu.cpp) and the CUDA
// kernels (kernels/fit/fit_kernels.cu) instantiate through dispatch_model and
// for_each_model, so a model added here is fitted on both. Host-side only: the
// choice is made once per batch, the kernels are templates on the model.
//
// What a model type M provides (static, NANOSCOPY_HD; models/gauss2d.hpp is
// the example): shape, name, n_params, param_names; Axis, make_axis(width),
// term(axis, u), fill_terms(axis, centre, n, v, dc, ds); column_centre,
// row_centre, column_width, row_width of p; DataSums (an array `s` of `size`
// sums, with clear, accumulate and accumulate_row); sums(p, X, Y, D) →
// Sums<n_params>; pixel(X, Y, f, df) for the per-pixel estimators
// (estimators/mle.hpp); outside_roi, admissible, from_spot, to_result. Isotropic
// (models/separable.hpp) supplies all but the axis terms for p = (x̄, ȳ, σ).
// The engines call these on a model object made by make_model (a model with
// per-batch constants, models/astigmatic3d.hpp, has them as non-static members
// and a constructor from FitSettings); pixel, sums, the bounds and from_spot may
// then be const members. A 3D model also names z_param, the index of z.
#pragma once

#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/fit/models/astigmatic3d.hpp"
#include "nanoscopy/fit/models/gauss2d.hpp"
#include "nanoscopy/fit/models/gauss2d_elliptical.hpp"
#include "nanoscopy/fit/models/gauss2d_integrated.hpp"

namespace nanoscopy::fit_detail {

template <class... Models>
struct ModelList {};

// ---- the list: one line per model ----
using FitModels = ModelList<Gauss2d,             // ShapeModel::sampled
                            Gauss2dIntegrated,   // ShapeModel::integrated
                            Gauss2dElliptical,   // ShapeModel::elliptical
                            Astigmatic3d>;       // ShapeModel::astigmatic

template <class F, class... Models>
bool dispatch_in(ModelList<Models...>, ShapeModel shape, F& f) {
  return ((Models::shape == shape ? (f(Models{}), true) : false) || ...);
}

template <class F, class... Models>
void for_each_in(ModelList<Models...>, F& f) {
  (f(Models{}), ...);
}

// Calls f(M{}) with the listed model type M whose shape is `shape`, as in
// dispatch_model(s, [&]<class M>(M) { ... }); false when none is listed.
template <class F>
bool dispatch_model(ShapeModel shape, F&& f) {
  return dispatch_in(FitModels{}, shape, f);
}

// The model object of a batch: constructed from the settings where the model
// takes per-batch constants, default-constructed otherwise.
template <class M>
M make_model(const FitSettings& settings) {
  if constexpr (requires { M(settings); })
    return M(settings);
  else
    return M{};
}

// Calls f(M{}) for every listed model type M.
template <class F>
void for_each_model(F&& f) {
  for_each_in(FitModels{}, f);
}

}  // namespace nanoscopy::fit_detail

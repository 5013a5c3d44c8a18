// Evaluation of the tricubic spline PSF (core/spline_psf.hpp) at a voxel
// coordinate: the value and its derivatives d/dx, d/dy, d/dz per voxel.
// Header-only and NANOSCOPY_HD, so the CPU reference and the CUDA fit kernel
// evaluate the same code; the scalar T is float or double (the coefficients
// are float as stored).
//
// Edges as Gpufit's SPLINE_3D: the interval index is clamped to the grid and
// the fraction is not, so a point outside the grid takes the edge interval's
// polynomial continued (finite for any finite input).
//
// The sum is factored per axis (z innermost, Horner), about 170 multiply-adds
// for the value and the three derivatives instead of 4 × 64 terms, and reads
// the interval's 64 coefficients as 16 groups of 4 consecutive floats (z
// powers 0..3 of one (x, y) power pair): float4 loads through the read-only
// cache on the device (the interval starts on a 256-byte boundary when the
// table does).
#pragma once

#include <math.h>

#include "nanoscopy/core/hd.hpp"

namespace nanoscopy {

// A non-owning view of the coefficient table (64 floats per interval, Gpufit
// SPLINE_3D order) and its interval counts; host or device memory.
struct SplineView {
  const float* coefficients = nullptr;
  int size_x = 0, size_y = 0, size_z = 0;
};

namespace spline_detail {

struct Four {
  float c0, c1, c2, c3;
};

NANOSCOPY_HD Four load4(const float* p) {
#if defined(__CUDA_ARCH__)
  const float4 v = __ldg(reinterpret_cast<const float4*>(p));
  return {v.x, v.y, v.z, v.w};
#else
  return {p[0], p[1], p[2], p[3]};
#endif
}

// The interval index of a coordinate clamped to [0, size − 1], and the
// (unclamped) fraction u − index.
template <class T>
NANOSCOPY_HD int interval(T u, int size, T& frac) {
  int i = static_cast<int>(floor(u));
  i = i < 0 ? 0 : i;
  i = i < size ? i : size - 1;
  frac = u - static_cast<T>(i);
  return i;
}

}  // namespace spline_detail

// f and ∂f/∂x, ∂f/∂y, ∂f/∂z (per voxel) at voxel coordinate (x, y, z).
template <class T>
NANOSCOPY_HD void spline_psf_evaluate(const SplineView& s, T x, T y, T z, T& f, T& fx, T& fy, T& fz) {
  using spline_detail::Four;
  T dx, dy, dz;
  const int i = spline_detail::interval(x, s.size_x, dx);
  const int j = spline_detail::interval(y, s.size_y, dy);
  const int k = spline_detail::interval(z, s.size_z, dz);
  const float* c =
      s.coefficients + (static_cast<long long>(i) * s.size_y * s.size_z + static_cast<long long>(j) * s.size_z + k) * 64;
  f = fx = fy = fz = T(0);
  // Outer sum over the x power a from 3 down to 0 (Horner in dx), carrying the
  // value r and its y and z derivatives of the (y, z) polynomial of power a.
  T px = 0, px_d = 0, px_y = 0, px_z = 0;  // Σ_a (…)·dx^a and its x-derivative, Horner
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int a = 3; a >= 0; --a) {
    T r = 0, r_y = 0, r_z = 0;  // Σ_b s_ab dy^b, its dy-derivative, Σ_b s'_ab dy^b
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int b = 3; b >= 0; --b) {
      const Four q = spline_detail::load4(c + a * 16 + b * 4);
      const T c0 = q.c0, c1 = q.c1, c2 = q.c2, c3 = q.c3;
      const T sv = c0 + dz * (c1 + dz * (c2 + dz * c3));
      const T sz = c1 + dz * (T(2) * c2 + dz * (T(3) * c3));
      r_y = r_y * dy + r;  // Horner for the derivative: uses r before its update
      r = r * dy + sv;
      r_z = r_z * dy + sz;
    }
    px_d = px_d * dx + px;
    px = px * dx + r;
    px_y = px_y * dx + r_y;
    px_z = px_z * dx + r_z;
  }
  f = px;
  fx = px_d;
  fy = px_y;
  fz = px_z;
}

// The value alone.
template <class T>
NANOSCOPY_HD T spline_psf_value(const SplineView& s, T x, T y, T z) {
  T f, fx, fy, fz;
  spline_psf_evaluate(s, x, y, z, f, fx, fy, fz);
  return f;
}

// The value at the grid node nearest to voxel coordinate (x, y, z), the node
// index clamped to [0, size − 1] per axis: there the fractions are 0 and the
// polynomial is its constant coefficient, one float read instead of 64. For
// coarse searches (the spline fit's initial z), which need neither fractions
// nor derivatives; the fit's kernel is bound by reading coefficients from L2.
template <class T>
NANOSCOPY_HD T spline_psf_node_value(const SplineView& s, T x, T y, T z) {
  auto node = [](T u, int size) {
    int i = static_cast<int>(floor(u + T(0.5)));
    i = i < 0 ? 0 : i;
    return i < size ? i : size - 1;
  };
  const long long i = node(x, s.size_x), j = node(y, s.size_y), k = node(z, s.size_z);
#if defined(__CUDA_ARCH__)
  return static_cast<T>(__ldg(s.coefficients + ((i * s.size_y + j) * s.size_z + k) * 64));
#else
  return static_cast<T>(s.coefficients[((i * s.size_y + j) * s.size_z + k) * 64]);
#endif
}

}  // namespace nanoscopy

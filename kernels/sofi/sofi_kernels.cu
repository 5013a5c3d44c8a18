// SOFI kernels and their launchers (sofi_kernels.hpp states the geometry).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "nanoscopy/sofi/cumulant_math.hpp"
#include "sofi/sofi_kernels.hpp"

namespace nanoscopy::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kGenericTerms = 8;            // term sums per thread on the generic path
constexpr std::int64_t kMinSegmentFrames = 32;  // a segment re-reads max_lag frames: keep them long
constexpr double kTwo52 = 4503599627370496.0;   // 2^52: (2^52 + v) holds the integer v exactly

// One segment of a chunk: tuples [begin, tuple_end), sums [begin, sum_end),
// frames [begin, frame_end) read.
struct Segment {
  std::int64_t begin, tuple_end, sum_end, frame_end;
};

__device__ __forceinline__ Segment segment_of(std::int64_t first, std::int64_t tuple_end, std::int64_t sum_end,
                                              int max_lag, int s, int segments) {
  const std::int64_t end = tuple_end > sum_end ? tuple_end : sum_end;
  const std::int64_t span = end - first;
  Segment g;
  g.begin = first + span * s / segments;
  const std::int64_t stop = first + span * (s + 1) / segments;
  g.tuple_end = stop < tuple_end ? stop : tuple_end;
  g.sum_end = stop < sum_end ? stop : sum_end;
  const std::int64_t tuple_frames = g.tuple_end > g.begin ? g.tuple_end + max_lag : g.begin;
  g.frame_end = tuple_frames > g.sum_end ? tuple_frames : g.sum_end;
  return g;
}

__device__ __forceinline__ void add_to(double* p, double v, bool atomic) {
  if (atomic)
    atomicAdd(p, v);
  else
    *p += v;
}

__host__ __device__ constexpr int high_bit(int m) {
  int b = 0;
  while (m >> (b + 1)) ++b;
  return b;
}

// ---------------------------------------------------------------- auto path

struct AutoArgs {
  const void* frames;
  std::int64_t pixels, first, tuple_end, sum_end;
  int segments;
  bool atomic;
  const float* shift;
  double* frame_sum;
  double* terms;
  int term_of[kSofiMaxOrder][kSofiMaxSubsets];  // term of (window, subset mask), or -1
};

// PX consecutive pixels of one frame in one load.
template <int PX, SofiSource SRC>
struct Pixels {
  static constexpr bool f32 = SRC == SofiSource::f32;
  using Raw = std::conditional_t<f32, std::conditional_t<PX == 2, float2, float>,
                                 std::conditional_t<PX == 2, unsigned int, unsigned short>>;
  static constexpr std::int64_t elem = f32 ? 4 : 2;

  // The per-pixel constant c that get() subtracts.
  __device__ static double constant(float k) { return SRC == SofiSource::u16_integral_shift ? kTwo52 + k : k; }
  // G = F - K of pixel k of the load, exactly as double(F) - double(K).
  __device__ static double get(Raw r, int k, double c) {
    if constexpr (f32) {
      float v;
      if constexpr (PX == 2)
        v = k == 0 ? r.x : r.y;
      else
        v = r;
      return static_cast<double>(v) - c;
    } else {
      unsigned int v;
      if constexpr (PX == 2)
        v = k == 0 ? (r & 0xffffu) : (r >> 16);
      else
        v = r;
      const double big = __hiloint2double(0x43300000, static_cast<int>(v));  // 2^52 + v
      if constexpr (SRC == SofiSource::u16_integral_shift)
        return big - c;  // (2^52 + v) - (2^52 + K): exact for integral K
      else
        return (big - kTwo52) - c;
    }
  }
};

template <int NV, int PX, SofiSource SRC>
__global__ void __launch_bounds__(kThreads, NV == 2 ? 4 : 1) sofi_auto_kernel(const AutoArgs a) {
  constexpr int NM = 1 << NV;
  constexpr int ML = NV - 1;              // max_lag: lags are 0..NV-1
  constexpr int U = NV <= 3 ? 8 : 4;      // loads in flight per thread
  using Px = Pixels<PX, SRC>;
  const std::int64_t P = a.pixels;
  const std::int64_t p0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * PX;
  if (p0 >= P) return;
  const Segment seg = segment_of(a.first, a.tuple_end, a.sum_end, ML, static_cast<int>(blockIdx.y), a.segments);

  double c[PX], fs[PX], w[PX][NV], acc[PX][NM];
#pragma unroll
  for (int k = 0; k < PX; ++k) {
    c[k] = Px::constant(a.shift[p0 + k]);
    fs[k] = 0;
#pragma unroll
    for (int j = 0; j < NV; ++j) w[k][j] = 0;
#pragma unroll
    for (int m = 0; m < NM; ++m) acc[k][m] = 0;
  }

  // Frame i of the segment (relative to seg.begin, 32-bit: a chunk has far
  // fewer than 2^31 frames) completes tuple i - ML when ML <= i < tuple_stop.
  const int nframes = static_cast<int>(seg.frame_end - seg.begin);
  const int nsum = static_cast<int>(seg.sum_end - seg.begin);
  const int tuple_stop = static_cast<int>(seg.tuple_end - seg.begin) + ML;
  const std::int64_t stride = P / PX;  // one frame in loads
  const typename Px::Raw* ptr = reinterpret_cast<const typename Px::Raw*>(
      static_cast<const char*>(a.frames) + ((seg.begin - a.first) * P + p0) * Px::elem);
  for (int i = 0; i < nframes; i += U, ptr += U * stride) {
    typename Px::Raw r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      r[u] = {};
      if (i + u < nframes) r[u] = __ldg(ptr + u * stride);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int ii = i + u;
      if (ii < nframes) {
        const bool in_sum = ii < nsum;
        const bool in_tuple = ii >= ML && ii < tuple_stop;
#pragma unroll
        for (int k = 0; k < PX; ++k) {
          const double g = Px::get(r[u], k, c[k]);
          if (in_sum) fs[k] += g;
#pragma unroll
          for (int j = 0; j + 1 < NV; ++j) w[k][j] = w[k][j + 1];
          w[k][NV - 1] = g;  // w[k][j] = G(t + j), t = seg.begin + ii - ML
          if (in_tuple) {
            double prod[NM];
#pragma unroll
            for (int m = 1; m < NM; ++m) {
              const int hb = high_bit(m);
              prod[m] = m == (1 << hb) ? w[k][hb] : prod[m ^ (1 << hb)] * w[k][hb];
              acc[k][m] += prod[m];
            }
          }
        }
      }
    }
  }

  if (seg.tuple_end > seg.begin) {
#pragma unroll
    for (int m = 1; m < NM; ++m)
      for (int window = 0; window < NV; ++window) {  // windows are lags: 0..NV-1
        const int term = a.term_of[window][m];
        if (term < 0) continue;
#pragma unroll
        for (int k = 0; k < PX; ++k) add_to(a.terms + static_cast<std::int64_t>(term) * P + p0 + k, acc[k][m], a.atomic);
      }
  }
  if (seg.sum_end > seg.begin) {
#pragma unroll
    for (int k = 0; k < PX; ++k) add_to(a.frame_sum + p0 + k, fs[k], a.atomic);
  }
}

using AutoKernel = void (*)(AutoArgs);

template <int NV, int PX>
AutoKernel auto_kernel_for(SofiSource s) {
  switch (s) {
    case SofiSource::u16_integral_shift: return sofi_auto_kernel<NV, PX, SofiSource::u16_integral_shift>;
    case SofiSource::u16: return sofi_auto_kernel<NV, PX, SofiSource::u16>;
    case SofiSource::f32: return sofi_auto_kernel<NV, PX, SofiSource::f32>;
  }
  return nullptr;
}

AutoKernel auto_kernel_for(int nv, int px, SofiSource s) {
  if (px == 2) {
    switch (nv) {
      case 2: return auto_kernel_for<2, 2>(s);
      case 3: return auto_kernel_for<3, 2>(s);
      case 4: return auto_kernel_for<4, 2>(s);
      default: break;
    }
  } else {
    switch (nv) {
      case 2: return auto_kernel_for<2, 1>(s);
      case 3: return auto_kernel_for<3, 1>(s);
      case 4: return auto_kernel_for<4, 1>(s);
      case 5: return auto_kernel_for<5, 1>(s);
      case 6: return auto_kernel_for<6, 1>(s);
      default: break;
    }
  }
  return nullptr;
}

// ------------------------------------------------------------- generic path

struct GenericArgs {
  const void* frames;
  std::int64_t width, height, first, tuple_end, sum_end, block_end;
  int max_lag, segments, nterms;
  bool atomic;
  const float* shift;
  double* frame_sum;
  double* terms;
  const SofiVariable* variables;
  const SofiTerm* term_defs;
};

template <bool F32>
__device__ __forceinline__ double pixel_value(const void* frames, std::int64_t index) {
  if constexpr (F32)
    return static_cast<double>(__ldg(static_cast<const float*>(frames) + index));
  else
    return static_cast<double>(__ldg(static_cast<const unsigned short*>(frames) + index));
}

template <bool F32>
__global__ void __launch_bounds__(kThreads) sofi_generic_kernel(const GenericArgs a) {
  const std::int64_t W = a.width, H = a.height, P = W * H;
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= P) return;
  const std::int64_t x = p % W, y = p / W;
  const Segment seg = segment_of(a.first, a.tuple_end, a.sum_end, a.max_lag, static_cast<int>(blockIdx.y), a.segments);
  const int t0 = static_cast<int>(blockIdx.z) * kGenericTerms;

  double acc[kGenericTerms];
#pragma unroll
  for (int j = 0; j < kGenericTerms; ++j) acc[j] = 0;
  for (std::int64_t t = seg.begin; t < seg.tuple_end; ++t) {
    const std::int64_t base = (t - a.first) * P;
#pragma unroll
    for (int j = 0; j < kGenericTerms; ++j) {
      if (t0 + j < a.nterms) {
        const SofiTerm* term = a.term_defs + t0 + j;
        if (t + __ldg(&term->window) >= a.block_end) continue;  // outside the term's window
        const int size = __ldg(&term->size);
        double prod = 1.0;  // 1 * G exactly; then the CPU's left-to-right product
        for (int i = 0; i < size; ++i) {
          const SofiVariable* v = a.variables + __ldg(&term->var[i]);
          const std::int64_t q = sofi_math::clamp_index(y + __ldg(&v->dy), H) * W +
                                 sofi_math::clamp_index(x + __ldg(&v->dx), W);
          const double g = pixel_value<F32>(a.frames, base + __ldg(&v->lag) * P + q) -
                           static_cast<double>(__ldg(a.shift + q));
          prod = __dmul_rn(prod, g);
        }
        acc[j] = __dadd_rn(acc[j], prod);
      }
    }
  }
  if (seg.tuple_end > seg.begin) {
#pragma unroll
    for (int j = 0; j < kGenericTerms; ++j)
      if (t0 + j < a.nterms) add_to(a.terms + (t0 + j) * P + p, acc[j], a.atomic);
  }
  if (blockIdx.z == 0 && seg.sum_end > seg.begin) {
    const double k = static_cast<double>(a.shift[p]);
    double s = 0;
    for (std::int64_t f = seg.begin; f < seg.sum_end; ++f) s += pixel_value<F32>(a.frames, (f - a.first) * P + p) - k;
    add_to(a.frame_sum + p, s, a.atomic);
  }
}

// Segments so that the grid holds about two waves of resident blocks, each
// segment at least kMinSegmentFrames long.
int segments_for(std::int64_t blocks, std::int64_t resident_blocks, std::int64_t span) {
  std::int64_t s = (2 * resident_blocks + blocks - 1) / std::max<std::int64_t>(blocks, 1);
  s = std::min(s, span / kMinSegmentFrames);
  return static_cast<int>(std::clamp<std::int64_t>(s, 1, 65535));
}

// ------------------------------------------------------------ finishing

__global__ void __launch_bounds__(kThreads)
    sofi_finish_plane_kernel(const SofiPlane* plane, const SofiCombo* combos, sofi_math::BlockView view,
                             std::int64_t pw, std::int64_t ph, bool moments, double* out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= pw * ph) return;
  out[i] += sofi_math::plane_value(*plane, combos, view, i % pw, i / pw, moments);
}

__global__ void __launch_bounds__(kThreads)
    sofi_mean_frame_kernel(const float* shift, const double* frame_sum, double frames, std::int64_t pixels,
                           double* mean) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= pixels) return;
  mean[i] = __dadd_rn(mean[i], sofi_math::block_frame_total(shift[i], frames, frame_sum[i]));
}

__global__ void __launch_bounds__(kThreads)
    sofi_fill_random_kernel(std::uint16_t* values, std::int64_t count, std::uint64_t seed) {
  const std::int64_t i0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const std::int64_t i = i0 + k;
    if (i >= count) return;
    std::uint64_t z = seed + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    values[i] = static_cast<std::uint16_t>(100 + z % 2000);
  }
}

unsigned int blocks_for(std::int64_t threads) { return static_cast<unsigned int>((threads + kThreads - 1) / kThreads); }

// The generic path over the whole chunk.
SofiLaunchInfo launch_generic(const SofiDevicePlan& plan, const SofiChunkArgs& c, int multiprocessors,
                              cudaStream_t stream) {
  SofiLaunchInfo info;
  const std::int64_t span = std::max(c.tuple_end, c.sum_end) - c.first;
  if (span <= 0 || c.count <= 0 || plan.pixels() <= 0) return info;
  const std::int64_t P = plan.pixels();
  const bool f32 = c.source == SofiSource::f32;
  const auto kernel = f32 ? sofi_generic_kernel<true> : sofi_generic_kernel<false>;
  int per_sm = 0;
  NANOSCOPY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const unsigned int bx = blocks_for(P);
  const int groups = std::max(1, (plan.nterms + kGenericTerms - 1) / kGenericTerms);
  const int segments = segments_for(static_cast<std::int64_t>(bx) * groups,
                                    static_cast<std::int64_t>(std::max(per_sm, 1)) * std::max(multiprocessors, 1), span);
  GenericArgs a{};
  a.frames = c.frames;
  a.width = plan.width;
  a.height = plan.height;
  a.first = c.first;
  a.tuple_end = c.tuple_end;
  a.sum_end = c.sum_end;
  a.block_end = c.block_end;
  a.max_lag = plan.max_lag;
  a.segments = segments;
  a.nterms = plan.nterms;
  a.atomic = segments > 1;
  a.shift = c.shift;
  a.frame_sum = c.frame_sum;
  a.terms = c.terms;
  a.variables = plan.variables;
  a.term_defs = plan.terms;
  kernel<<<dim3(bx, static_cast<unsigned int>(segments), static_cast<unsigned int>(groups)), kThreads, 0, stream>>>(a);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
  info.segments = segments;
  return info;
}

}  // namespace

SofiLaunchInfo launch_sofi_accumulate(const SofiDevicePlan& plan, const SofiChunkArgs& c, int multiprocessors,
                                      cudaStream_t stream) {
  SofiLaunchInfo info;
  const std::int64_t span = std::max(c.tuple_end, c.sum_end) - c.first;
  if (span <= 0 || c.count <= 0 || plan.pixels() <= 0) return info;
  const std::int64_t P = plan.pixels();
  if (plan.auto_nv >= 2) {
    const int nv = plan.auto_nv;
    const int px = (P % 2 == 0 && nv <= 4) ? 2 : 1;
    const AutoKernel kernel = auto_kernel_for(nv, px, c.source);
    if (kernel) {
      // Tuples every window takes: t < block_end - max_lag (the auto kernel's
      // frames t + max_lag then lie in the chunk); the rest is the tail.
      const std::int64_t common_end = std::min(c.tuple_end, c.block_end - plan.max_lag);
      const std::int64_t common_span = std::max(common_end, c.sum_end) - c.first;
      if (common_span > 0) {
        int per_sm = 0;
        NANOSCOPY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
        const unsigned int bx = blocks_for((P + px - 1) / px);
        const int segments = segments_for(
            bx, static_cast<std::int64_t>(std::max(per_sm, 1)) * std::max(multiprocessors, 1), common_span);
        AutoArgs a{};
        a.frames = c.frames;
        a.pixels = P;
        a.first = c.first;
        a.tuple_end = common_end;
        a.sum_end = c.sum_end;
        a.segments = segments;
        a.atomic = segments > 1;
        a.shift = c.shift;
        a.frame_sum = c.frame_sum;
        a.terms = c.terms;
        for (int w = 0; w < kSofiMaxOrder; ++w)
          for (int m = 0; m < kSofiMaxSubsets; ++m) a.term_of[w][m] = plan.term_of[w][m];
        kernel<<<dim3(bx, static_cast<unsigned int>(segments)), kThreads, 0, stream>>>(a);
        NANOSCOPY_CUDA_CHECK_LAUNCH();
        info.segments = segments;
      }
      const std::int64_t tail_begin = std::max(c.first, common_end);
      if (c.tuple_end > tail_begin) {
        // The smaller windows' last tuples: the generic kernel on the chunk
        // from tail_begin on, tuples only (after the auto kernel, same stream).
        const std::int64_t skip = tail_begin - c.first;
        const std::int64_t elem = c.source == SofiSource::f32 ? 4 : 2;
        SofiChunkArgs tail = c;
        tail.frames = static_cast<const char*>(c.frames) + skip * P * elem;
        tail.first = tail_begin;
        tail.count = c.count - skip;
        tail.sum_end = tail_begin;
        const SofiLaunchInfo t = launch_generic(plan, tail, multiprocessors, stream);
        info.segments = std::max(info.segments, t.segments);
      }
      info.auto_path = true;
      info.pixels_per_thread = px;
      return info;
    }
  }
  return launch_generic(plan, c, multiprocessors, stream);
}


void launch_sofi_finish_plane(const SofiDevicePlan& plan, int plane, std::int64_t plane_width,
                              std::int64_t plane_height, const double* terms, const double* frame_sum,
                              std::int64_t frames, double* out, cudaStream_t stream) {
  sofi_math::BlockView view;
  view.terms = terms;
  view.frame_sum = frame_sum;
  view.width = plan.width;
  view.height = plan.height;
  view.frames = static_cast<double>(frames);
  view.inv_frames = 1.0 / static_cast<double>(frames);
  const std::int64_t n = plane_width * plane_height;
  if (n <= 0) return;
  sofi_finish_plane_kernel<<<blocks_for(n), kThreads, 0, stream>>>(plan.planes + plane, plan.combos, view,
                                                                   plane_width, plane_height, plan.moments, out);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_sofi_mean_frame(const float* shift, const double* frame_sum, std::int64_t frames, std::int64_t pixels,
                            double* mean, cudaStream_t stream) {
  if (pixels <= 0) return;
  sofi_mean_frame_kernel<<<blocks_for(pixels), kThreads, 0, stream>>>(shift, frame_sum, static_cast<double>(frames),
                                                                      pixels, mean);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

void launch_sofi_fill_random(std::uint16_t* values, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count <= 0) return;
  sofi_fill_random_kernel<<<blocks_for((count + 3) / 4), kThreads, 0, stream>>>(values, count, seed);
  NANOSCOPY_CUDA_CHECK_LAUNCH();
}

}  // namespace nanoscopy::cuda

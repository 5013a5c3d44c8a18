// The CPU reference of eSRRF (esrrf_engine.hpp): per frame the Robert's cross
// gradients, their half-pixel lattices, then per output pixel the RGC and the
// temporal sums of every slot holding the frame — rows shared among threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "nanoscopy/core/host_buffer.hpp"
#include "nanoscopy/sofi/esrrf_engine.hpp"

namespace nanoscopy {

using namespace esrrf_math;

esrrf_math::RgcTableView EsrrfTable::view() const {
  RgcTableView v;
  v.taps = taps.data();
  v.offset = offset.data();
  v.magnification = magnification;
  v.margin = margin;
  v.sensitivity = sensitivity;
  v.intensity_weighting = intensity_weighting;
  return v;
}

EsrrfTable make_rgc_table(const EsrrfSettings& s) {
  EsrrfTable t;
  const int m = s.magnification;
  t.magnification = m;
  t.sensitivity = static_cast<float>(s.sensitivity);
  t.intensity_weighting = s.intensity_weighting;
  // NanoPyx's float arithmetic for the constants (sigma, 2 sigma + 1, the lattice reach, the margin).
  const float fwhm = static_cast<float>(s.radius);
  const float sigma = fwhm / 2.355f;
  const double tss = 2.0 * static_cast<double>(sigma) * static_cast<double>(sigma);
  const float tso = 2 * sigma + 1;
  const int reach = static_cast<int>(2.0f * fwhm);
  t.margin = static_cast<int>(fwhm * static_cast<float>(m));
  t.offset.push_back(0);
  for (int py = 0; py < m; ++py) {
    for (int px = 0; px < m; ++px) {
      const int cx = (2 * px + 1) / m, cy = (2 * py + 1) / m;
      const double xc = (px + 0.5) / m, yc = (py + 0.5) / m;
      for (int dj = -reach; dj <= reach; ++dj) {
        for (int di = -reach; di <= reach; ++di) {
          const double dx = (cx + di) / 2.0 - xc, dy = (cy + dj) / 2.0 - yc;
          const double d = std::sqrt(dx * dx + dy * dy);
          if (d == 0 || static_cast<float>(d) > tso) continue;
          RgcTap tap;
          tap.di = di;
          tap.dj = dj;
          tap.dx = static_cast<float>(dx);
          tap.dy = static_cast<float>(dy);
          tap.weight = static_cast<float>(std::pow(d * std::exp(-d * d / tss), 4));
          tap.inv_distance = static_cast<float>(1.0 / d);
          t.taps.push_back(tap);
        }
      }
      t.offset.push_back(static_cast<int>(t.taps.size()));
    }
  }
  return t;
}

std::vector<float> cr_magnify(const float* image, std::int64_t w, std::int64_t h, int m) {
  std::vector<float> out(static_cast<std::size_t>(w * m * h * m));
  for (std::int64_t y = 0; y < h * m; ++y)
    for (std::int64_t x = 0; x < w * m; ++x)
      out[static_cast<std::size_t>(y * w * m + x)] = magnified_intensity(image, h, w, m, x, y);
  return out;
}

namespace {

void gradients(const float* frame, std::int64_t w, std::int64_t h, float* gc, float* gr) {
  for (std::int64_t r = 0; r < h; ++r)
    for (std::int64_t c = 0; c < w; ++c) roberts_cross(frame, w, r, c, &gc[r * w + c], &gr[r * w + c]);
}

void lattices(const float* gc, const float* gr, std::int64_t w, std::int64_t h, int m, float* g2c, float* g2r,
              int threads) {
  const std::int64_t lw = 2 * w + 1, lh = 2 * h + 1;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t ky = 0; ky < lh; ++ky)
    for (std::int64_t kx = 0; kx < lw; ++kx)
      lattice_gradient(gc, gr, h, w, m, kx, ky, &g2c[ky * lw + kx], &g2r[ky * lw + kx]);
}

void read_frame(const void* buffer, PixelType type, std::int64_t j, std::int64_t pixels, float* out) {
  if (type == PixelType::u16) {
    const auto* p = static_cast<const std::uint16_t*>(buffer) + j * pixels;
    for (std::int64_t i = 0; i < pixels; ++i) out[i] = static_cast<float>(p[i]);
  } else if (type == PixelType::f32) {
    std::memcpy(out, static_cast<const float*>(buffer) + j * pixels, static_cast<std::size_t>(pixels) * sizeof(float));
  } else {
    throw std::logic_error("esrrf engine: frames must be u16 or f32");
  }
}

class CpuEsrrfEngine final : public EsrrfEngine {
 public:
  CpuEsrrfEngine(const EsrrfGeometry& g, const EsrrfSettings& s, std::int64_t chunk, int threads)
      : g_(g), table_(make_rgc_table(s)), chunk_(std::max<std::int64_t>(chunk, 1)), threads_(std::max(threads, 1)) {
    const std::int64_t px = g.width * g.height;
    frame_.resize(static_cast<std::size_t>(px));
    gc_.resize(frame_.size());
    gr_.resize(frame_.size());
    g2c_.resize(static_cast<std::size_t>((2 * g.width + 1) * (2 * g.height + 1)));
    g2r_.resize(g2c_.size());
    out_pixels_ = g.out_width(table_.magnification) * g.out_height(table_.magnification);
    state_.assign(static_cast<std::size_t>(g.slots) * 5 * static_cast<std::size_t>(out_pixels_), 0.0f);
  }

  std::string name() const override { return "cpu (" + std::to_string(threads_) + " threads)"; }
  std::int64_t chunk_capacity() const override { return chunk_; }
  HostBuffer allocate_host(std::size_t bytes) override { return allocate_plain_host(bytes); }

  void accumulate(const EsrrfChunk& chunk) override {
    if (static_cast<int>(chunk.slots.size()) > g_.slots) throw std::logic_error("esrrf: more slots than planned");
    const std::int64_t px = g_.width * g_.height;
    const int m = table_.magnification;
    const std::int64_t wm = g_.width * m, hm = g_.height * m;
    const RgcTableView view = table_.view();
    for (std::int64_t j = 0; j < chunk.count; ++j) {
      const std::int64_t t = chunk.first + j;
      read_frame(chunk.pixels, chunk.type, j, px, frame_.data());
      gradients(frame_.data(), g_.width, g_.height, gc_.data(), gr_.data());
      lattices(gc_.data(), gr_.data(), g_.width, g_.height, m, g2c_.data(), g2r_.data(), threads_);
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (std::int64_t ym = 0; ym < hm; ++ym) {
        for (std::int64_t xm = 0; xm < wm; ++xm) {
          const float intensity = magnified_intensity(frame_.data(), g_.height, g_.width, m, xm, ym);
          const float x = rgc_pixel(view, g2c_.data(), g2r_.data(), g_.height, g_.width, xm, ym, intensity);
          const std::int64_t i = ym * wm + xm;
          for (std::size_t s = 0; s < chunk.slots.size(); ++s) {
            if (!chunk.slots[s].contains(t)) continue;
            float* base = state_.data() + s * 5 * static_cast<std::size_t>(out_pixels_);
            TemporalState st{base[i], base[out_pixels_ + i], base[2 * out_pixels_ + i], base[3 * out_pixels_ + i],
                             base[4 * out_pixels_ + i]};
            temporal_add(st, x, t == chunk.slots[s].begin);
            base[i] = st.k;
            base[out_pixels_ + i] = st.s1;
            base[2 * out_pixels_ + i] = st.s2;
            base[3 * out_pixels_ + i] = st.p;
            base[4 * out_pixels_ + i] = st.last;
          }
        }
      }
    }
  }

  void read_slot(int slot, EsrrfSlotSums& out) override {
    const auto n = static_cast<std::size_t>(out_pixels_);
    const float* base = state_.data() + static_cast<std::size_t>(slot) * 5 * n;
    out.k.assign(base, base + n);
    out.s1.assign(base + n, base + 2 * n);
    out.s2.assign(base + 2 * n, base + 3 * n);
    out.p.assign(base + 3 * n, base + 4 * n);
    out.last.assign(base + 4 * n, base + 5 * n);
  }

 private:
  EsrrfGeometry g_;
  EsrrfTable table_;
  std::int64_t chunk_;
  int threads_;
  std::int64_t out_pixels_ = 0;
  std::vector<float> frame_, gc_, gr_, g2c_, g2r_, state_;
};

}  // namespace

void esrrf_lattices(const float* frame, std::int64_t w, std::int64_t h, int m, std::vector<float>& g2c,
                    std::vector<float>& g2r) {
  std::vector<float> gc(static_cast<std::size_t>(w * h)), gr(gc.size());
  gradients(frame, w, h, gc.data(), gr.data());
  g2c.assign(static_cast<std::size_t>((2 * w + 1) * (2 * h + 1)), 0.0f);
  g2r.assign(g2c.size(), 0.0f);
  lattices(gc.data(), gr.data(), w, h, m, g2c.data(), g2r.data(), 1);
}

std::vector<float> esrrf_rgc_map(const float* frame, std::int64_t w, std::int64_t h, const EsrrfSettings& s,
                                 int threads) {
  const EsrrfTable table = make_rgc_table(s);
  const RgcTableView view = table.view();
  std::vector<float> g2c, g2r;
  esrrf_lattices(frame, w, h, s.magnification, g2c, g2r);
  const int m = s.magnification;
  std::vector<float> out(static_cast<std::size_t>(w * m * h * m));
#pragma omp parallel for schedule(static) num_threads(std::max(threads, 1))
  for (std::int64_t ym = 0; ym < h * m; ++ym)
    for (std::int64_t xm = 0; xm < w * m; ++xm)
      out[static_cast<std::size_t>(ym * w * m + xm)] =
          rgc_pixel(view, g2c.data(), g2r.data(), h, w, xm, ym, magnified_intensity(frame, h, w, m, xm, ym));
  return out;
}

std::unique_ptr<EsrrfEngine> make_cpu_esrrf_engine(const EsrrfGeometry& geometry, const EsrrfSettings& settings,
                                                   std::int64_t chunk_frames, int threads) {
  return std::make_unique<CpuEsrrfEngine>(geometry, settings, chunk_frames, threads);
}

}  // namespace nanoscopy

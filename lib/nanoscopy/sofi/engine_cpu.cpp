// The CPU reference engine: per pixel, the product of every term over the chunk's
// tuples (problem.hpp), then the cumulant of every output pixel at block end.
#include <algorithm>
#include <cstring>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/sofi/cumulant_math.hpp"
#include "nanoscopy/sofi/engine.hpp"
#include "nanoscopy/sofi/frame_correction.hpp"

namespace nanoscopy {

void PlaneSums::reset(const SofiProblem& problem) {
  blocks = frames = 0;
  planes.assign(problem.planes.size(), {});
  for (std::size_t p = 0; p < problem.planes.size(); ++p)
    planes[p].assign(static_cast<std::size_t>(problem.plane_width(static_cast<int>(p)) *
                                              problem.plane_height(static_cast<int>(p))),
                     0.0);
  frame_sum.assign(static_cast<std::size_t>(problem.pixels()), 0.0);
}

void PlaneSums::add(const PlaneSums& other) {
  blocks += other.blocks;
  frames += other.frames;
  for (std::size_t p = 0; p < planes.size(); ++p)
    for (std::size_t i = 0; i < planes[p].size(); ++i) planes[p][i] += other.planes[p][i];
  for (std::size_t i = 0; i < frame_sum.size(); ++i) frame_sum[i] += other.frame_sum[i];
}

void finish_block_cpu(const SofiProblem& problem, const BlockSums& block, PlaneSums& sums, int threads) {
  if (block.frames < 1 || block.tuples < 1)
    throw InputError("sofi", "block " + std::to_string(block.block) + " has no frames or no lag tuples");
  if (block.tuples != block.frames - problem.max_lag)
    throw InputError("sofi", "block " + std::to_string(block.block) + " has " + std::to_string(block.tuples) +
                                 " lag tuples for " + std::to_string(block.frames) + " frames");
  sofi_math::BlockView view{block.terms.data(), block.frame_sum.data(), problem.width, problem.height,
                            static_cast<double>(block.frames), 1.0 / static_cast<double>(block.frames)};
  for (std::size_t p = 0; p < problem.planes.size(); ++p) {
    const auto& plane = problem.planes[p];
    const std::int64_t w = problem.plane_width(static_cast<int>(p)), h = problem.plane_height(static_cast<int>(p));
    double* out = sums.planes[p].data();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x)
        out[y * w + x] += sofi_math::plane_value(plane, problem.combos.data(), view, x, y, problem.moments);
  }
  const double n = static_cast<double>(block.frames);
  for (std::size_t i = 0; i < sums.frame_sum.size(); ++i)
    sums.frame_sum[i] += sofi_math::block_frame_total(block.shift[i], n, block.frame_sum[i]);
}

namespace {

template <typename T>
void accumulate_rows(const SofiProblem& problem, const T* frames, const SofiChunk& chunk, const float* shift,
                     double* frame_sum, double* terms, int threads) {
  const std::int64_t w = problem.width, h = problem.height, pixels = problem.pixels();
  const auto nvars = problem.variables.size(), nterms = problem.terms.size();
  const std::int64_t tuples = std::max<std::int64_t>(chunk.tuple_end - chunk.first, 0);
  const std::int64_t sums = chunk.sum_end - chunk.first;
  // Term t takes the chunk's tuples j < its_tuples[t]: those with first + j + window < block_end.
  std::vector<std::int64_t> its_tuples(nterms);
  for (std::size_t t = 0; t < nterms; ++t)
    its_tuples[t] = std::clamp<std::int64_t>(chunk.block_end - problem.terms[t].window - chunk.first, 0, tuples);
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> g(nvars), acc(nterms);
    std::vector<std::int64_t> var_offset(nvars);
#pragma omp for schedule(static)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) {
        const std::int64_t p = y * w + x;
        for (std::size_t v = 0; v < nvars; ++v) {
          const auto& var = problem.variables[v];
          const std::int64_t px = sofi_math::clamp_index(x + var.dx, w), py = sofi_math::clamp_index(y + var.dy, h);
          var_offset[v] = py * w + px;
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::int64_t j = 0; j < tuples; ++j) {
          for (std::size_t v = 0; v < nvars; ++v) {
            const std::int64_t q = var_offset[v];
            g[v] = static_cast<double>(frames[(j + problem.variables[v].lag) * pixels + q]) - shift[q];
          }
          for (std::size_t t = 0; t < nterms; ++t) {
            if (j >= its_tuples[t]) continue;
            const auto& term = problem.terms[t];
            double prod = g[static_cast<std::size_t>(term.var[0])];
            for (int i = 1; i < term.size; ++i) prod *= g[static_cast<std::size_t>(term.var[i])];
            acc[t] += prod;
          }
        }
        for (std::size_t t = 0; t < nterms; ++t) terms[static_cast<std::int64_t>(t) * pixels + p] += acc[t];
        double s = 0;
        for (std::int64_t j = 0; j < sums; ++j) s += static_cast<double>(frames[j * pixels + p]) - shift[p];
        frame_sum[p] += s;
      }
  }
}

class CpuSofiEngine final : public SofiEngine {
 public:
  CpuSofiEngine(const SofiProblem& problem, std::int64_t chunk_frames, int threads)
      : problem_(problem), chunk_(chunk_frames), threads_(std::max(threads, 1)) {
    input_.resize(static_cast<std::size_t>(chunk_ * problem_.pixels()));
    block_.shift.assign(static_cast<std::size_t>(problem_.pixels()), 0.0f);
    block_.frame_sum.assign(static_cast<std::size_t>(problem_.pixels()), 0.0);
    block_.terms.assign(problem_.terms.size() * static_cast<std::size_t>(problem_.pixels()), 0.0);
    sums_.reset(problem_);
  }

  std::string name() const override { return "cpu (" + std::to_string(threads_) + " threads)"; }
  std::int64_t chunk_capacity() const override { return chunk_; }
  void* input_buffer(PixelType) override { return input_.data(); }  // float32-sized: holds either type

  void start_block(std::span<const float> shift) override {
    std::copy(shift.begin(), shift.end(), block_.shift.begin());
    std::fill(block_.frame_sum.begin(), block_.frame_sum.end(), 0.0);
    std::fill(block_.terms.begin(), block_.terms.end(), 0.0);
  }

  void accumulate(const SofiChunk& chunk) override {
    if (chunk.count > chunk_) throw std::logic_error("sofi chunk larger than the engine's capacity");
    if (chunk.corrections) {
      if (chunk.type == PixelType::u16)
        correct_frames(reinterpret_cast<const std::uint16_t*>(input_.data()), chunk);
      else if (chunk.type == PixelType::f32)
        correct_frames(input_.data(), chunk);
      else
        throw std::logic_error("sofi engines take uint16 or float32 frames");
      accumulate_rows(problem_, corrected_.data(), chunk, block_.shift.data(), block_.frame_sum.data(),
                      block_.terms.data(), threads_);
      return;
    }
    if (chunk.type == PixelType::u16)
      accumulate_rows(problem_, reinterpret_cast<const std::uint16_t*>(input_.data()), chunk, block_.shift.data(),
                      block_.frame_sum.data(), block_.terms.data(), threads_);
    else if (chunk.type == PixelType::f32)
      accumulate_rows(problem_, input_.data(), chunk, block_.shift.data(), block_.frame_sum.data(),
                      block_.terms.data(), threads_);
    else
      throw std::logic_error("sofi engines take uint16 or float32 frames");
  }

  void finish_block(std::int64_t frames, std::int64_t tuples) override {
    block_.frames = frames;
    block_.tuples = tuples;
    finish_block_cpu(problem_, block_, sums_, threads_);
  }

  void read_block(BlockSums& out) override {
    out.shift = block_.shift;
    out.frame_sum = block_.frame_sum;
    out.terms = block_.terms;
  }

  void read_planes(PlaneSums& out) override {
    out.planes = sums_.planes;
    out.frame_sum = sums_.frame_sum;
  }

 private:
  // The chunk's frames corrected into corrected_ (float32), frame j by chunk.corrections[j].
  template <typename T>
  void correct_frames(const T* frames, const SofiChunk& chunk) {
    const std::int64_t w = problem_.width, h = problem_.height, pixels = problem_.pixels();
    corrected_.resize(static_cast<std::size_t>(chunk.count * pixels));
#pragma omp parallel for schedule(static) num_threads(threads_) collapse(2)
    for (std::int64_t j = 0; j < chunk.count; ++j)
      for (std::int64_t y = 0; y < h; ++y) {
        const T* frame = frames + j * pixels;
        float* out = corrected_.data() + j * pixels + y * w;
        for (std::int64_t x = 0; x < w; ++x)
          out[x] = sofi_math::corrected_pixel(frame, w, h, x, y, chunk.corrections[j]);
      }
  }

  SofiProblem problem_;
  std::int64_t chunk_;
  int threads_;
  std::vector<float> input_;  // chunk_ float32 frames (uint16 chunks use its first half)
  std::vector<float> corrected_;  // the chunk after its per-frame corrections (only when it has some)
  BlockSums block_;
  PlaneSums sums_;
};

}  // namespace

std::unique_ptr<SofiEngine> make_cpu_sofi_engine(const SofiProblem& problem, std::int64_t chunk_frames, int threads) {
  return std::make_unique<CpuSofiEngine>(problem, chunk_frames, threads);
}

}  // namespace nanoscopy

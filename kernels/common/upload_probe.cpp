#include "common/upload_probe.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <thread>

#include "common/owners.hpp"

namespace nanoscopy::cuda {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kProbeSeconds = 0.25;

// Copies on one GPU until kProbeSeconds have passed; returns {bytes copied, seconds}.
struct Copied {
  double bytes = 0;
  double seconds = 0;
};

Copied copy_for_a_while(int gpu, std::size_t bytes, std::barrier<>& start, bool& arrived) {
  DeviceGuard guard(gpu);
  PinnedBuffer<unsigned char> host(bytes);
  DeviceBuffer<unsigned char> device(bytes);
  Stream stream;
  std::fill_n(host.get(), bytes, static_cast<unsigned char>(1));  // touched: no first-use cost in the timing
  NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get()));
  stream.synchronize();
  start.arrive_and_wait();
  arrived = true;
  Copied c;
  const auto t0 = Clock::now();
  while (c.seconds < kProbeSeconds) {
    for (int k = 0; k < 4; ++k)
      NANOSCOPY_CUDA_CHECK(cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get()));
    stream.synchronize();
    c.bytes += 4.0 * static_cast<double>(bytes);
    c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return c;
}

}  // namespace

double measure_upload_bandwidth(const std::vector<int>& gpus, std::size_t bytes) {
  if (gpus.empty() || bytes == 0) return 0;
  std::barrier<> start(static_cast<std::ptrdiff_t>(gpus.size()));
  std::vector<Copied> copied(gpus.size());
  std::vector<std::exception_ptr> errors(gpus.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    threads.emplace_back([&, i] {
      bool arrived = false;
      try {
        copied[i] = copy_for_a_while(gpus[i], bytes, start, arrived);
      } catch (...) {
        errors[i] = std::current_exception();
        if (!arrived) start.arrive_and_drop();  // the others do not wait for a thread that failed before the start
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  double total = 0, longest = 0;
  for (const auto& c : copied) {
    total += c.bytes;
    longest = std::max(longest, c.seconds);
  }
  return longest > 0 ? total / longest : 0;
}

}  // namespace nanoscopy::cuda

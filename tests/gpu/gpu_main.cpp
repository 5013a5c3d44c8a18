// The GPU test program: exits 77 (CTest SKIP) when this build has no CUDA
// backend or the machine has no usable GPU, else runs every tests/gpu case.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"

int main(int argc, char** argv) {
  std::string why;
  const auto gpus = nanoscopy::list_gpus(&why);
  if (gpus.empty()) {
    std::printf("SKIP: no GPU tests run: %s\n", why.c_str());
    return 77;
  }
  for (const auto& g : gpus)
    std::printf("GPU %d: %s (sm_%d%d, %.1f GiB)\n", g.index, g.name.c_str(), g.cc_major, g.cc_minor,
                static_cast<double>(g.total_memory) / (1 << 30));
  doctest::Context context(argc, argv);
  return context.run();
}

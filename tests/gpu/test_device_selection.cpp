#include <doctest/doctest.h>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/error.hpp"

using namespace nanoscopy;

TEST_CASE("a GPU is selected for cuda, cuda:0 and auto") {
  const auto gpus = list_gpus();
  REQUIRE(!gpus.empty());
  CHECK(select_device(DeviceRequest::parse("cuda"), true).kind == DeviceKind::cuda);
  CHECK(select_device(DeviceRequest::parse("cuda:0"), true).gpus == std::vector<int>{0});
  CHECK(select_device(DeviceRequest::parse("auto"), true).kind == DeviceKind::cuda);
  CHECK(select_device(DeviceRequest::parse("cuda:all"), true).gpus.size() == gpus.size());
  CHECK_THROWS_AS(select_device(DeviceRequest::parse("cuda:" + std::to_string(gpus.size())), true), DeviceError);
  CHECK(gpus[0].free_memory > 0);
}

// Device-resident timing of a fit backend, for bench: on a GPU the batch is
// uploaded once and only the fit is timed with device events. Defined in the
// backend registry.
#pragma once

#include <optional>
#include <span>

#include "nanoscopy/backend/device.hpp"
#include "nanoscopy/fit/engine.hpp"

namespace nanoscopy {

// Median seconds per call with the data already on `device` (its first GPU);
// nullopt for the CPU, where there is no such distinction. `out` receives the
// results of the last call.
std::optional<double> time_device_resident_fit(const Device& device, const FitSettings& settings,
                                               const RoiBatch& batch, int repeats, std::span<FitResult> out);

}  // namespace nanoscopy

// Each tool's parameters (type, default, range, doc): what --print-params
// prints and what --params files are checked against. smre's lives beside the
// parameter reader (params/tool_schemas.hpp) because it mirrors the paper's listing.
#pragma once

#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

const Schema& fit2d_schema();
const Schema& sofi_schema();
const Schema& frc_schema();
const Schema& bench_schema();

}  // namespace nanoscopy

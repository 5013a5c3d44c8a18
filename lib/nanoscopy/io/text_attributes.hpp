// Name/value text pairs written as attributes on an HDF5 file's root group: how
// part files (fit2d/smre --partial) record where their frames came from.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nanoscopy {

using TextAttributes = std::vector<std::pair<std::string, std::string>>;

}  // namespace nanoscopy

// Picasso 0.11's embedded metadata: a root dataset /metadata holding, as one string, the JSON
// list of the info objects that the .yaml beside the file holds as documents (io.py,
// _write_metadata_dataset). Picasso's load_info reads the .yaml first and /metadata only when
// there is no .yaml; so do we.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>

namespace nanoscopy::detail {

// The text of /metadata in the open HDF5 `file` (a scalar string, variable or fixed length);
// nullopt when the file has none. InputError naming `path` when it is there but not one string.
std::optional<std::string> read_picasso_metadata_dataset(hid_t file, const std::string& path);

}  // namespace nanoscopy::detail

// Output names derived from another file: "dir/movie.tif" + "_locs.hdf5" ->
// "dir/movie_locs.hdf5" (the stem keeps its directory, loses its extension).
#pragma once

#include <filesystem>
#include <string>

namespace nanoscopy {

inline std::string sibling_path(const std::filesystem::path& path, const std::string& suffix) {
  return (path.parent_path() / (path.stem().string() + suffix)).string();
}

}  // namespace nanoscopy

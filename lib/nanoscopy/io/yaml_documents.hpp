// Internal: the YAML documents of a file (Picasso's .yaml beside a .raw movie or
// a localization table), read as YAML::LoadAllFromFile reads them. Not a public
// header: it pulls in yaml-cpp, which only nanoscopy_core's own sources see.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>
#include <vector>

namespace nanoscopy::detail {

// Throws YAML::BadFile (unreadable) and YAML::ParserException (invalid) as
// LoadAllFromFile does, and InputError naming `path` for a stream that
// yaml-cpp 0.7 would read forever: LoadAll returns empty documents without
// end, until memory runs out, when a document starts with a stray ',' (found by
// tests/fuzz).
std::vector<YAML::Node> load_yaml_documents(const std::string& path);

// The same, with every failure as one InputError: "cannot read <what>" for an
// unreadable file, "path:line: not valid YAML: ..." for a parse error.
std::vector<YAML::Node> read_yaml_documents(const std::string& path, const std::string& what);

// The first document (a map) of a movie's metadata file: its scalar entries in
// file order (nested maps and lists are skipped there), and the whole document
// as YAML text. InputError naming `path` when the file is unreadable, not YAML,
// or its first document is not a map.
struct MovieMetadata {
  std::vector<std::pair<std::string, std::string>> scalars;
  std::string yaml;
};
MovieMetadata movie_metadata(const std::string& path);

}  // namespace nanoscopy::detail

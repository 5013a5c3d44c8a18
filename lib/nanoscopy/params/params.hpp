// Parameter files and typed schemas.
//
// Files: the deal.II ParameterHandler text format of the SMRE paper's listing
//   subsection Name
//     set key with spaces = value   # comment
//     subsection Nested ... end
//   end
// or JSON with the same tree ({"Name": {"key with spaces": value, ...}}).
// A parameter's path joins sections and key with '/': "Name/key with spaces";
// top-level keys have no '/'.
//
// Each tool declares a Schema (type, default, range, one-line doc per key).
// Precedence: default < parameter file < command line.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nanoscopy {

// Where a value came from, for error messages ("smre.prm:12", "command line --psf").
struct ParamSource {
  std::string file;  // file path, or "command line"
  int line = 0;      // 1-based line in the file; 0 when not applicable
  std::string describe() const;  // "file:line" or "file"
};

struct ParamEntry {
  std::string value;   // as written (JSON values rendered as text: true, 3, 1e-3, "name" -> name)
  ParamSource source;
};

// A parsed file: path -> entry, in file order not needed.
using ParamTree = std::map<std::string, ParamEntry>;

// Parsers; throw UsageError naming file:line and the problem (unbalanced
// subsection/end, a line that is neither, missing '=', duplicate key, bad JSON).
ParamTree parse_prm(const std::string& text, const std::string& file);
ParamTree parse_json(const std::string& text, const std::string& file);
// Reads a file; JSON if it ends in .json or starts with '{', else PRM.
// Missing/unreadable file: UsageError naming it.
ParamTree load_param_file(const std::string& path);

enum class ParamType { boolean, integer, real, string, choice };

struct ParamSpec {
  std::string path;            // "subsection/key"
  ParamType type = ParamType::real;
  std::string default_value;   // as text, valid for the type
  std::optional<double> min;   // inclusive bounds for integer/real
  std::optional<double> max;
  std::vector<std::string> choices;  // for choice
  std::string doc;             // one line
};

class Params;

class Schema {
 public:
  explicit Schema(std::string tool) : tool_(std::move(tool)) {}
  const std::string& tool() const { return tool_; }

  Schema& add(ParamSpec spec);  // throws std::logic_error on duplicate path or invalid default
  // Convenience adders.
  Schema& boolean(const std::string& path, bool def, const std::string& doc);
  Schema& integer(const std::string& path, std::int64_t def, std::optional<double> min, std::optional<double> max,
                  const std::string& doc);
  Schema& real(const std::string& path, double def, std::optional<double> min, std::optional<double> max,
               const std::string& doc);
  Schema& string(const std::string& path, const std::string& def, const std::string& doc);
  Schema& choice(const std::string& path, const std::string& def, std::vector<std::string> choices,
                 const std::string& doc);

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamSpec* find(const std::string& path) const;

  // The valid path closest to `path` (edit distance, case-insensitive), for
  // "unknown key 'sigm', did you mean 'sigma'?".
  std::string closest(const std::string& path) const;

  // Defaults, then the tree: unknown keys and bad values are UsageErrors naming
  // file:line, the key and (for unknown keys) the closest valid one.
  Params resolve(const ParamTree& tree) const;
  Params defaults() const;

  // Every parameter with its default and doc, grouped by subsection: a valid
  // parameter file to start from. format "prm" or "json".
  void print(std::ostream& out, const std::string& format) const;

 private:
  std::string tool_;
  std::vector<ParamSpec> specs_;
};

// Resolved, validated values.
class Params {
 public:
  explicit Params(const Schema& schema);

  // Overrides one value (e.g. from the command line), validated like a file value.
  void set(const std::string& path, const std::string& value, const ParamSource& source);

  bool get_bool(const std::string& path) const;
  std::int64_t get_int(const std::string& path) const;
  double get_real(const std::string& path) const;
  std::string get_string(const std::string& path) const;  // string and choice
  const ParamSource& source(const std::string& path) const;  // default: file "default"

  // The values in effect, for provenance (bench JSON, Picasso yaml).
  void print(std::ostream& out, const std::string& format) const;

 private:
  const ParamSpec& spec(const std::string& path) const;  // throws std::logic_error for a path not in the schema
  const Schema* schema_;
  std::map<std::string, ParamEntry> values_;
};

}  // namespace nanoscopy

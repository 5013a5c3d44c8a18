// Parameter files and typed schemas.
//
// Files: the deal.II ParameterHandler text format of the SMRE paper's listing
//   subsection Name
//     set key with spaces = value   # comment
//     subsection Nested ... end
//   end
// ('#' starts a comment anywhere, a trailing '\' joins the next line, keywords
// may also be upper case: SET, SUBSECTION, END), or JSON with the same tree
// ({"Name": {"key with spaces": value, ...}}; // and /* */ comments allowed; an
// array of scalars is read as the comma-separated list "a, b, c").
// A parameter's path joins sections and key with '/': "Name/key with spaces";
// top-level keys have no '/'. Names and keys are case-sensitive and may not
// contain '/'.
//
// Each tool declares a Schema (type, default, range, one-line doc per key).
// Precedence: default < parameter file < command line.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nanoscopy {

// Where a value came from, for error messages ("smre.prm:12", "command line --psf").
struct ParamSource {
  std::string file;              // file path, or "command line ..." or "default"
  int line = 0;                  // 1-based line in the file; 0 when not applicable
  std::string describe() const;  // "file:line" or "file"
  // Where an error about the value points: the option as the user typed it ("--undrift-pixel"), the
  // parameter file's line, or `fallback` (the option's name) for a default.
  std::string named(const std::string& fallback) const;
};

struct ParamEntry {
  std::string value;  // as written (JSON values rendered as text: true, 3, 1e-3, "name" -> name)
  ParamSource source;
};

// A parsed file: path -> entry (sorted by path; each entry knows its line).
using ParamTree = std::map<std::string, ParamEntry>;

// Parsers; throw UsageError whose where() is "file:line" and whose message names
// the problem (unbalanced subsection/end, a line that is neither, missing '=',
// empty key, duplicate key, bad JSON). `file` is only used in messages.
ParamTree parse_prm(const std::string& text, const std::string& file);
ParamTree parse_json(const std::string& text, const std::string& file);
// Reads a file; JSON if it ends in .json or starts with '{', else PRM.
// Missing/unreadable file: UsageError naming it.
ParamTree load_param_file(const std::string& path);

enum class ParamType { boolean, integer, real, string, choice };

// Accepted text per type (case-insensitive where it says so):
//   boolean  true/false, yes/no, on/off, 1/0 (case-insensitive); held as true/false
//   integer  optional sign and decimal digits, within int64
//   real     a finite decimal number (1, -2.5, 1e-3); inf and nan are rejected
//   string   any UTF-8 text without '#', control characters, surrounding spaces or a
//            trailing '\' (so that every value can be written back to a .prm file)
//   choice   one of `choices` (case-insensitive); held in the schema's spelling
struct ParamSpec {
  std::string path;  // "subsection/key"
  ParamType type = ParamType::real;
  std::string default_value;  // as text, valid for the type
  std::optional<double> min;  // bounds for integer/real, inclusive unless *_exclusive
  std::optional<double> max;
  bool min_exclusive = false;  // (min, ...: e.g. a strictly positive width
  bool max_exclusive = false;
  std::vector<std::string> choices;  // for choice
  std::string doc;                   // one line
};

// "boolean", "integer in [1, inf)", "real in (0, inf)", "one of: a, b", "string".
std::string describe_type(const ParamSpec& spec);

class Params;

class Schema {
 public:
  explicit Schema(std::string tool) : tool_(std::move(tool)) {}
  const std::string& tool() const { return tool_; }

  // Throws std::logic_error on a duplicate or malformed path, a path that is
  // both a key and a subsection, an invalid default or bounds, or a doc with a
  // line break.
  Schema& add(ParamSpec spec);
  // Convenience adders (bounds inclusive).
  Schema& boolean(const std::string& path, bool def, const std::string& doc);
  Schema& integer(const std::string& path, std::int64_t def, std::optional<double> min, std::optional<double> max,
                  const std::string& doc);
  Schema& real(const std::string& path, double def, std::optional<double> min, std::optional<double> max,
               const std::string& doc);
  // A real in (0, inf).
  Schema& positive_real(const std::string& path, double def, const std::string& doc);
  Schema& string(const std::string& path, const std::string& def, const std::string& doc);
  Schema& choice(const std::string& path, const std::string& def, std::vector<std::string> choices,
                 const std::string& doc);

  // Another name for a parameter (other tools' spelling, e.g. ThunderSTORM's
  // "Camera/offset" for "Camera/Baseline"): accepted in files and set(), never printed.
  Schema& alias(const std::string& alias_path, const std::string& path);
  // The parameter an alias names, or `path` itself.
  const std::string& canonical(const std::string& path) const;

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamSpec* find(const std::string& path) const;

  // The valid path closest to `path` for "unknown parameter 'sgma' (did you
  // mean 'sigma'?)": case-insensitive edit distance over the full path and over
  // the last component alone (a key put in the wrong subsection). Empty when no
  // path is close enough to be a plausible typo.
  std::string closest(const std::string& path) const;

  // Defaults, then the tree: unknown keys and bad values are UsageErrors naming
  // file:line, the key and (for unknown keys) the closest valid one. The first
  // problem in file order is reported.
  Params resolve(const ParamTree& tree) const;
  Params defaults() const;

  // Every parameter with its default, type and doc, grouped by subsection: a
  // valid parameter file to start from. format "prm" or "json" (JSON with //
  // comments, which parse_json accepts); anything else: std::invalid_argument.
  void print(std::ostream& out, const std::string& format) const;

 private:
  friend class Params;
  std::string tool_;
  std::vector<ParamSpec> specs_;
  std::map<std::string, std::size_t> index_;  // path -> position in specs_
  std::map<std::string, std::string> aliases_;
};

// Resolved, validated values. Holds its own copy of the schema.
class Params {
 public:
  explicit Params(const Schema& schema);

  // Overrides one value (e.g. from the command line), validated like a file value:
  // UsageError(source.describe(), ...) for an unknown path or a bad value.
  void set(const std::string& path, const std::string& value, const ParamSource& source);

  // Typed access; std::logic_error for a path not in the schema or of another
  // type (get_real also reads integers; get_string reads strings and choices).
  bool get_bool(const std::string& path) const;
  std::int64_t get_int(const std::string& path) const;
  double get_real(const std::string& path) const;
  std::string get_string(const std::string& path) const;
  const std::string& text(const std::string& path) const;  // any type, in canonical text
  const ParamSource& source(const std::string& path) const;  // default: file "default", line 0

  const Schema& schema() const { return *schema_; }

  // The values in effect, in the layout of Schema::print, each comment also
  // naming where a non-default value came from (for provenance).
  void print(std::ostream& out, const std::string& format) const;
  // The values in effect as a typed JSON object tree (booleans, numbers, strings).
  nlohmann::json to_json() const;

 private:
  const ParamSpec& spec(const std::string& path) const;  // throws std::logic_error for a path not in the schema
  std::shared_ptr<const Schema> schema_;
  std::map<std::string, ParamEntry> values_;  // canonical text (see ParamSpec)
};

}  // namespace nanoscopy

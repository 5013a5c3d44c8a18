// Schema declaration, lookup with typo suggestions, and validated Params.
#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/params/param_detail.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {
namespace {

using param_detail::to_lower;

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string last_component(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// How many edits still look like a typo of a name this long.
std::size_t typo_limit(std::size_t length) {
  return std::max<std::size_t>(2, length / 3);
}

std::string unknown_message(const Schema& schema, const std::string& path) {
  for (const auto& spec : schema.specs())
    if (spec.path.size() > path.size() && spec.path.compare(0, path.size(), path) == 0 && spec.path[path.size()] == '/')
      return quote_value(path) + " is a subsection, not a parameter (e.g. '" + spec.path + "')";
  std::string message = "unknown parameter " + quote_value(path);
  const std::string suggestion = schema.closest(path);
  if (suggestion.empty()) return message + " (--print-params lists the valid ones)";
  message += " (did you mean '" + suggestion + "'?";
  if (to_lower(suggestion) == to_lower(path)) message += " names are case-sensitive";
  return message + ")";
}

}  // namespace

Schema& Schema::add(ParamSpec spec) {
  const std::string& path = spec.path;
  auto fail = [&](const std::string& why) { throw std::logic_error("schema " + tool_ + ": '" + path + "': " + why); };
  if (path.empty() || path.front() == '/' || path.back() == '/' || path.find("//") != std::string::npos)
    fail("malformed path");
  if (param_detail::trim(path) != path) fail("path with surrounding spaces");
  for (std::size_t start = 0; start <= path.size();) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (param_detail::trim(part) != part || part.find('#') != std::string::npos || part.find('=') != std::string::npos)
      fail("a path component has surrounding spaces, '#' or '='");
    start = end + 1;
  }
  if (index_.count(path)) fail("declared twice");
  for (const auto& other : specs_) {
    const auto& a = other.path.size() < path.size() ? other.path : path;
    const auto& b = other.path.size() < path.size() ? path : other.path;
    if (b.compare(0, a.size(), a) == 0 && b[a.size()] == '/')
      fail("both a key and a subsection ('" + other.path + "')");
  }
  if (spec.doc.find_first_of("\r\n") != std::string::npos) fail("doc must be one line");
  if (spec.type == ParamType::choice && spec.choices.empty()) fail("choice without choices");
  if (spec.min && spec.max && *spec.min > *spec.max) fail("min > max");
  const auto canonical = param_detail::canonical_value(spec, spec.default_value);
  if (!canonical) fail("invalid default: " + param_detail::invalid_value_message(spec, spec.default_value));
  spec.default_value = *canonical;
  index_.emplace(path, specs_.size());
  specs_.push_back(std::move(spec));
  return *this;
}

Schema& Schema::boolean(const std::string& path, bool def, const std::string& doc) {
  ParamSpec spec;
  spec.path = path;
  spec.type = ParamType::boolean;
  spec.default_value = def ? "true" : "false";
  spec.doc = doc;
  return add(std::move(spec));
}

Schema& Schema::integer(const std::string& path, std::int64_t def, std::optional<double> min, std::optional<double> max,
                        const std::string& doc) {
  ParamSpec spec;
  spec.path = path;
  spec.type = ParamType::integer;
  spec.default_value = std::to_string(def);
  spec.min = min;
  spec.max = max;
  spec.doc = doc;
  return add(std::move(spec));
}

Schema& Schema::real(const std::string& path, double def, std::optional<double> min, std::optional<double> max,
                     const std::string& doc) {
  ParamSpec spec;
  spec.path = path;
  spec.type = ParamType::real;
  spec.default_value = param_detail::format_number(def);
  spec.min = min;
  spec.max = max;
  spec.doc = doc;
  return add(std::move(spec));
}

Schema& Schema::positive_real(const std::string& path, double def, const std::string& doc) {
  ParamSpec spec;
  spec.path = path;
  spec.type = ParamType::real;
  spec.default_value = param_detail::format_number(def);
  spec.min = 0.0;
  spec.min_exclusive = true;
  spec.doc = doc;
  return add(std::move(spec));
}

Schema& Schema::string(const std::string& path, const std::string& def, const std::string& doc) {
  ParamSpec spec;
  spec.path = path;
  spec.type = ParamType::string;
  spec.default_value = def;
  spec.doc = doc;
  return add(std::move(spec));
}

Schema& Schema::choice(const std::string& path, const std::string& def, std::vector<std::string> choices,
                       const std::string& doc) {
  ParamSpec spec;
  spec.path = path;
  spec.type = ParamType::choice;
  spec.default_value = def;
  spec.choices = std::move(choices);
  spec.doc = doc;
  return add(std::move(spec));
}

const ParamSpec* Schema::find(const std::string& path) const {
  const auto it = index_.find(path);
  return it == index_.end() ? nullptr : &specs_[it->second];
}

std::string Schema::closest(const std::string& path) const {
  // No name is this long: a huge key (a damaged file) is no typo, and its edit distances would take minutes.
  if (path.size() > 256) return {};
  const std::string full = to_lower(path);
  const std::string key = to_lower(last_component(path));
  const ParamSpec* best = nullptr;
  std::tuple<std::size_t, std::size_t, std::size_t> best_score{};
  for (const auto& spec : specs_) {
    const std::size_t d_full = edit_distance(full, to_lower(spec.path));
    const std::size_t d_key = edit_distance(key, to_lower(last_component(spec.path)));
    if (d_full > typo_limit(full.size()) && d_key > typo_limit(key.size())) continue;
    // Closest by either measure, then by the whole path, then exact case.
    const auto score = std::make_tuple(std::min(d_full, d_key), d_full, edit_distance(path, spec.path));
    if (!best || score < best_score) {
      best = &spec;
      best_score = score;
    }
  }
  return best ? best->path : std::string();
}

Params Schema::defaults() const {
  return Params(*this);
}

Schema& Schema::alias(const std::string& alias_path, const std::string& path) {
  if (!find(path)) throw std::logic_error("alias " + alias_path + " names unknown parameter " + path);
  if (find(alias_path) || aliases_.count(alias_path)) throw std::logic_error("alias " + alias_path + " is taken");
  aliases_[alias_path] = path;
  return *this;
}

const std::string& Schema::canonical(const std::string& path) const {
  const auto it = aliases_.find(path);
  return it == aliases_.end() ? path : it->second;
}

Params Schema::resolve(const ParamTree& tree) const {
  std::vector<const ParamTree::value_type*> entries;
  entries.reserve(tree.size());
  for (const auto& entry : tree) entries.push_back(&entry);
  std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
    return std::tie(a->second.source.file, a->second.source.line) <
           std::tie(b->second.source.file, b->second.source.line);
  });
  Params params(*this);
  std::map<std::string, const ParamTree::value_type*> seen;  // canonical path -> first entry
  for (const auto* entry : entries) {
    const auto [it, fresh] = seen.emplace(canonical(entry->first), entry);
    if (!fresh)
      throw UsageError(entry->second.source.describe(),
                       "'" + entry->first + "' sets the same parameter as '" + it->second->first + "' at " +
                           it->second->second.source.describe());
    params.set(entry->first, entry->second.value, entry->second.source);
  }
  return params;
}

Params::Params(const Schema& schema) : schema_(std::make_shared<const Schema>(schema)) {
  for (const auto& spec : schema_->specs())
    values_[spec.path] = ParamEntry{spec.default_value, ParamSource{"default", 0}};
}

void Params::set(const std::string& given_path, const std::string& value, const ParamSource& source) {
  const std::string& path = schema_->canonical(given_path);
  const ParamSpec* spec = schema_->find(path);
  if (!spec) throw UsageError(source.describe(), unknown_message(*schema_, path));
  const auto canonical = param_detail::canonical_value(*spec, value);
  if (!canonical) throw UsageError(source.describe(), param_detail::invalid_value_message(*spec, value));
  values_[path] = ParamEntry{*canonical, source};
}

const ParamSpec& Params::spec(const std::string& path) const {
  const ParamSpec* spec = schema_->find(path);
  if (!spec) throw std::logic_error("parameter '" + path + "' is not in the " + schema_->tool() + " schema");
  return *spec;
}

namespace {

[[noreturn]] void wrong_type(const ParamSpec& spec, const char* wanted) {
  throw std::logic_error("parameter '" + spec.path + "' is " + describe_type(spec) + ", not " + wanted);
}

}  // namespace

bool Params::get_bool(const std::string& path) const {
  const auto& s = spec(path);
  if (s.type != ParamType::boolean) wrong_type(s, "boolean");
  return values_.at(path).value == "true";
}

std::int64_t Params::get_int(const std::string& path) const {
  const auto& s = spec(path);
  if (s.type != ParamType::integer) wrong_type(s, "integer");
  return *param_detail::parse_int(values_.at(path).value);
}

double Params::get_real(const std::string& path) const {
  const auto& s = spec(path);
  if (s.type == ParamType::integer) return static_cast<double>(*param_detail::parse_int(values_.at(path).value));
  if (s.type != ParamType::real) wrong_type(s, "real");
  return *param_detail::parse_real(values_.at(path).value);
}

std::string Params::get_string(const std::string& path) const {
  const auto& s = spec(path);
  if (s.type != ParamType::string && s.type != ParamType::choice) wrong_type(s, "string");
  return values_.at(path).value;
}

const std::string& Params::text(const std::string& path) const {
  spec(path);
  return values_.at(path).value;
}

const ParamSource& Params::source(const std::string& path) const {
  spec(path);
  return values_.at(path).source;
}

}  // namespace nanoscopy

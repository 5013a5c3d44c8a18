// Listings of a schema's defaults or of the values in effect, as .prm or as
// JSON with // comments; both read back through load_param_file.
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>

#include "nanoscopy/params/param_detail.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {
namespace param_detail {
namespace {

struct Node {
  std::vector<const ParamSpec*> keys;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> children;  // in order of first appearance
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/', start)) {
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  parts.push_back(path.substr(start));
  return parts;
}

Node build_tree(const Schema& schema) {
  Node root;
  for (const auto& spec : schema.specs()) {
    const auto parts = split_path(spec.path);
    Node* node = &root;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      auto it = std::find_if(node->children.begin(), node->children.end(),
                             [&](const auto& child) { return child.first == parts[i]; });
      if (it == node->children.end()) {
        node->children.emplace_back(parts[i], std::make_unique<Node>());
        it = std::prev(node->children.end());
      }
      node = it->second.get();
    }
    node->keys.push_back(&spec);
  }
  return root;
}

std::string json_string(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_value(const ParamSpec& spec, const std::string& text) {
  switch (spec.type) {
    case ParamType::boolean:
    case ParamType::integer:
      return text;  // canonical: true/false, decimal digits
    case ParamType::real:
      return format_number(*parse_real(text));
    case ParamType::string:
    case ParamType::choice:
      return json_string(text);
  }
  return json_string(text);
}

using Text = std::function<std::string(const ParamSpec&)>;

void print_prm(std::ostream& out, const Node& node, int depth, const Text& value, const Text& comment) {
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  std::size_t width = 0;
  for (const auto* spec : node.keys) width = std::max(width, split_path(spec->path).back().size());
  for (const auto* spec : node.keys) {
    std::string key = split_path(spec->path).back();
    key.resize(width, ' ');
    const std::string v = value(*spec);
    out << indent << "# " << comment(*spec) << '\n'
        << indent << "set " << key << " =" << (v.empty() ? "" : " ") << v << '\n';
  }
  bool first = node.keys.empty();
  for (const auto& [name, child] : node.children) {
    if (!first) out << '\n';
    first = false;
    out << indent << "subsection " << name << '\n';
    print_prm(out, *child, depth + 1, value, comment);
    out << indent << "end\n";
  }
}

void print_json(std::ostream& out, const Node& node, int depth, const Text& value, const Text& comment) {
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  const std::size_t items = node.keys.size() + node.children.size();
  std::size_t written = 0;
  for (const auto* spec : node.keys) {
    out << indent << "// " << comment(*spec) << '\n'
        << indent << json_string(split_path(spec->path).back()) << ": " << json_value(*spec, value(*spec))
        << (++written < items ? ",\n" : "\n");
  }
  for (const auto& [name, child] : node.children) {
    out << indent << json_string(name) << ": {\n";
    print_json(out, *child, depth + 1, value, comment);
    out << indent << '}' << (++written < items ? ",\n" : "\n");
  }
}

}  // namespace

void print_listing(std::ostream& out, const std::string& format, const Schema& schema, const std::string& title,
                   const Text& value, const Text& comment) {
  const Node root = build_tree(schema);
  if (format == "prm") {
    out << "# " << title << '\n' << "# " << std::string(title.size(), '-') << '\n';
    if (!root.keys.empty() || !root.children.empty()) out << '\n';
    print_prm(out, root, 0, value, comment);
  } else if (format == "json") {
    out << "// " << title << "\n{\n";
    print_json(out, root, 1, value, comment);
    out << "}\n";
  } else {
    throw std::invalid_argument("parameter listing format must be prm or json, not '" + format + "'");
  }
}

}  // namespace param_detail

namespace {

std::string default_comment(const ParamSpec& spec) {
  return spec.doc + " [" + describe_type(spec) +
         "; default: " + (spec.default_value.empty() ? std::string("(empty)") : spec.default_value) + "]";
}

}  // namespace

void Schema::print(std::ostream& out, const std::string& format) const {
  param_detail::print_listing(
      out, format, *this, "Listing of Parameters for " + tool_ + " (defaults)",
      [](const ParamSpec& spec) { return spec.default_value; }, default_comment);
}

void Params::print(std::ostream& out, const std::string& format) const {
  param_detail::print_listing(
      out, format, *schema_, "Parameters in effect for " + schema_->tool(),
      [this](const ParamSpec& spec) { return values_.at(spec.path).value; },
      [this](const ParamSpec& spec) {
        std::string text = default_comment(spec);
        const ParamSource& from = values_.at(spec.path).source;
        if (from.file != "default") text.insert(text.size() - 1, "; from " + from.describe());
        return text;
      });
}

nlohmann::json Params::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& spec : schema_->specs()) {
    const auto parts = param_detail::split_path(spec.path);
    nlohmann::json* node = &root;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) node = &(*node)[parts[i]];
    const std::string& text = values_.at(spec.path).value;
    nlohmann::json& slot = (*node)[parts.back()];
    switch (spec.type) {
      case ParamType::boolean:
        slot = text == "true";
        break;
      case ParamType::integer:
        slot = *param_detail::parse_int(text);
        break;
      case ParamType::real:
        slot = *param_detail::parse_real(text);
        break;
      case ParamType::string:
      case ParamType::choice:
        slot = text;
        break;
    }
  }
  return root;
}

}  // namespace nanoscopy

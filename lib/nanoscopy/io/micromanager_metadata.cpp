#include "nanoscopy/io/micromanager_metadata.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace nanoscopy::detail {
namespace {

using Json = nlohmann::ordered_json;

// A value as Picasso keeps it: strings as they are, numbers and booleans as
// JSON writes them, objects and lists as compact JSON.
std::string value_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

double positive_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && std::isfinite(v) && v > 0 ? v : 0.0;
}

}  // namespace

MicroManagerMetadata parse_micromanager_metadata(std::string_view json) {
  MicroManagerMetadata out;
  // Metadata are an extra: a damaged tag must not stop the pixels from being read.
  const Json doc = Json::parse(json.begin(), json.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return out;
  for (const auto& [key, value] : doc.items()) {
    if (key == "scopeDataKeys") continue;
    const bool wrapped = value.is_object() && value.contains("PropVal");  // Micro-Manager 1.4
    out.values.emplace_back(key, value_text(wrapped ? value.at("PropVal") : value));
  }
  for (const auto& [key, text] : out.values) {
    if (key == "Camera") out.camera = text;
    if (key == "PixelSizeUm") out.pixel_size_um = positive_number(text);
  }
  return out;
}

void apply_micromanager_metadata(const MicroManagerMetadata& metadata, StackInfo& info) {
  if (metadata.values.empty()) return;
  if (!(info.pixel_size_nm > 0) && metadata.pixel_size_um > 0) info.pixel_size_nm = metadata.pixel_size_um * 1000.0;
  if (!metadata.camera.empty()) info.metadata.emplace_back("Camera", metadata.camera);
  YAML::Emitter yaml;
  yaml << YAML::BeginMap;
  if (!metadata.camera.empty()) yaml << YAML::Key << "Camera" << YAML::Value << metadata.camera;
  yaml << YAML::Key << "Micro-Manager Metadata" << YAML::Value << YAML::BeginMap;
  for (const auto& [key, text] : metadata.values) yaml << YAML::Key << key << YAML::Value << text;
  yaml << YAML::EndMap << YAML::EndMap;
  info.metadata_yaml = yaml.c_str();
}

}  // namespace nanoscopy::detail

#include "nanoscopy/io/tiff_format.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace nanoscopy::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\0'))
    s.remove_suffix(1);
  return s;
}

// strtod on a string_view (which need not be NUL-terminated); nullopt unless
// the whole text is a finite number.
std::optional<double> parse_double(std::string_view text) {
  const std::string s(trim(text));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string_view> xml_attribute(std::string_view xml, std::string_view name) {
  std::size_t pos = 0;
  while ((pos = xml.find(name, pos)) != std::string_view::npos) {
    const bool starts_word =
        pos == 0 || xml[pos - 1] == ' ' || xml[pos - 1] == '\t' || xml[pos - 1] == '\n' || xml[pos - 1] == '\r';
    std::size_t p = pos + name.size();
    pos = p;
    if (!starts_word) continue;
    while (p < xml.size() && (xml[p] == ' ' || xml[p] == '\t')) ++p;
    if (p >= xml.size() || xml[p] != '=') continue;
    ++p;
    while (p < xml.size() && (xml[p] == ' ' || xml[p] == '\t')) ++p;
    if (p >= xml.size() || (xml[p] != '"' && xml[p] != '\'')) continue;
    const char quote = xml[p];
    const std::size_t close = xml.find(quote, p + 1);
    if (close == std::string_view::npos) return std::nullopt;
    return xml.substr(p + 1, close - p - 1);
  }
  return std::nullopt;
}

std::string imagej_description(std::int64_t frames, bool calibrated, StackAxis axis) {
  std::string d = "ImageJ=1.11a\n";
  if (frames > 1) {
    d += "images=" + std::to_string(frames) + "\n";
    if (axis == StackAxis::time) d += "frames=" + std::to_string(frames) + "\n";
    if (axis == StackAxis::z) d += "slices=" + std::to_string(frames) + "\n";
  }
  if (calibrated) d += "unit=micron\n";
  if (frames > 1) d += "loop=false\n";
  return d;
}

StackAxis imagej_axis(std::string_view description) {
  const auto more_than_one = [&](std::string_view key) {
    const auto text = imagej_value(description, key);
    const auto n = text ? parse_double(*text) : std::nullopt;
    return n && *n > 1;
  };
  if (more_than_one("slices") && !more_than_one("frames")) return StackAxis::z;
  return StackAxis::time;
}

ImageJLabels imagej_labels(const std::vector<std::string>& labels) {
  ImageJLabels out;
  const auto put32 = [&](std::uint32_t v) {
    const auto n = out.bytes.size();
    out.bytes.resize(n + 4);
    std::memcpy(out.bytes.data() + n, &v, 4);
  };
  put32(0x494a494a);  // "IJIJ"
  put32(0x6c61626c);  // "labl"
  put32(static_cast<std::uint32_t>(labels.size()));
  out.counts.push_back(12);
  for (const auto& label : labels) {
    // UTF-16 code units of ASCII/Latin text; other bytes become '?'.
    for (const unsigned char c : label) {
      const std::uint16_t unit = c < 0x80 ? c : '?';
      const auto n = out.bytes.size();
      out.bytes.resize(n + 2);
      std::memcpy(out.bytes.data() + n, &unit, 2);
    }
    out.counts.push_back(static_cast<std::uint32_t>(2 * label.size()));
  }
  return out;
}

std::optional<std::string> imagej_value(std::string_view description, std::string_view key) {
  std::size_t start = 0;
  while (start < description.size()) {
    std::size_t end = description.find('\n', start);
    if (end == std::string_view::npos) end = description.size();
    const std::string_view line = description.substr(start, end - start);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == '=')
      return std::string(trim(line.substr(key.size() + 1)));
    start = end + 1;
  }
  return std::nullopt;
}

double nanometres_per_unit(std::string_view unit) {
  const std::string_view u = trim(unit);
  if (u == "nm" || u == "nanometer" || u == "nanometre") return 1.0;
  if (u == "micron" || u == "microns" || u == "um" || u == "\xC2\xB5m" || u == "\xCE\xBCm" || u == "\\u00B5m" ||
      u == "micrometer" || u == "micrometre")
    return 1e3;
  if (u == "mm") return 1e6;
  if (u == "cm") return 1e7;
  if (u == "m") return 1e9;
  if (u == "pm") return 1e-3;
  if (u == "\xC3\x85" || u == "\xE2\x84\xAB" || u == "A" || u == "angstrom") return 0.1;
  if (u == "inch") return 25.4e6;
  return 0.0;
}

double imagej_pixel_size_nm(std::string_view description, double x_resolution) {
  if (!(x_resolution > 0.0) || !std::isfinite(x_resolution)) return 0.0;
  const auto unit = imagej_value(description, "unit");
  if (!unit) return 0.0;
  const double scale = nanometres_per_unit(*unit);
  return scale > 0.0 ? scale / x_resolution : 0.0;
}

double ome_pixel_size_nm(std::string_view xml) {
  const auto size = xml_attribute(xml, "PhysicalSizeX");
  if (!size) return 0.0;
  const auto value = parse_double(*size);
  if (!value || !(*value > 0.0)) return 0.0;
  const auto unit = xml_attribute(xml, "PhysicalSizeXUnit");
  const double scale = nanometres_per_unit(unit ? *unit : std::string_view("\xC2\xB5m"));
  return *value * scale;
}

}  // namespace nanoscopy::detail

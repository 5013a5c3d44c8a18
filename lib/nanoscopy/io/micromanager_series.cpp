#include "nanoscopy/io/micromanager_series.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include "nanoscopy/core/error.hpp"
#include "nanoscopy/io/tiff_format.hpp"

namespace nanoscopy::detail {
namespace {

namespace fs = std::filesystem;

bool ends_with_nocase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// A file name split into stem and extension, the extension being ".ome.tif"
// (or .ome.tiff) as a whole: "x_MMStack_Pos0_1.ome.tif" -> "x_MMStack_Pos0_1", ".ome.tif".
std::pair<std::string, std::string> split_name(const std::string& name) {
  for (const std::string_view ext : {".ome.tif", ".ome.tiff", ".tif", ".tiff"})
    if (ends_with_nocase(name, ext)) return {name.substr(0, name.size() - ext.size()), name.substr(name.size() - ext.size())};
  return {name, ""};
}

// N of a stem "<prefix>_<N>", with prefix; nullopt when the stem has no such ending.
std::optional<std::pair<std::string, long>> numbered(const std::string& stem) {
  const auto underscore = stem.rfind('_');
  if (underscore == std::string::npos || underscore == 0 || underscore + 1 == stem.size()) return std::nullopt;
  const std::string digits = stem.substr(underscore + 1);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::make_pair(stem.substr(0, underscore), std::strtol(digits.c_str(), nullptr, 10));
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// One <TiffData> of the OME-XML: the file it names ("" for the file holding
// the XML) and the pages it maps there: from IFD, PlaneCount of them.
struct TiffData {
  std::string file;
  std::int64_t ifd = 0;
  std::int64_t planes = -1;  // -1: every page from `ifd` on
};

std::int64_t attribute_count(std::string_view tag, std::string_view name) {
  const auto text = xml_attribute(tag, name);
  if (!text) return -1;
  char* end = nullptr;
  const std::string s(*text);
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return end != s.c_str() && *end == '\0' && v >= 0 ? v : -1;
}

// The <TiffData> elements of each <Image> of the OME-XML, in document order.
std::vector<std::vector<TiffData>> images_of(std::string_view xml) {
  std::vector<std::vector<TiffData>> images;
  std::size_t pos = 0;
  while ((pos = xml.find("<Image", pos)) != std::string_view::npos) {
    pos += 6;
    if (pos >= xml.size() || (xml[pos] != ' ' && xml[pos] != '>' && xml[pos] != '\n' && xml[pos] != '\t')) continue;
    const std::size_t end = std::min(xml.find("</Image>", pos), xml.size());
    const std::string_view image = xml.substr(pos, end - pos);
    auto& tiff_data = images.emplace_back();
    std::size_t t = 0;
    while ((t = image.find("<TiffData", t)) != std::string_view::npos) {
      const std::size_t open_end = std::min(image.find('>', t), image.size());
      const std::string_view open_tag = image.substr(t, open_end - t);
      std::size_t element_end = open_end;
      if (open_end < image.size() && image[open_end - 1] != '/')
        element_end = std::min(image.find("</TiffData>", open_end), image.size());
      const std::string_view element = image.substr(t, element_end - t);
      TiffData d;
      if (const auto name = xml_attribute(element, "FileName")) d.file = std::string(*name);
      const std::int64_t ifd = attribute_count(open_tag, "IFD");
      d.ifd = std::max<std::int64_t>(ifd, 0);
      d.planes = attribute_count(open_tag, "PlaneCount");
      if (d.planes < 0 && ifd >= 0) d.planes = 1;  // OME: IFD alone maps one plane
      tiff_data.push_back(d);
      t = element_end;
    }
    pos = end;
  }
  return images;
}

// The members the OME-XML names for the image stored in `first`; empty when it names no file of that name.
std::vector<SeriesMember> members_from_ome(const fs::path& first, std::string_view xml) {
  const std::string own = first.filename().string();
  for (const auto& image : images_of(xml)) {
    std::vector<SeriesMember> members;
    std::map<std::string, std::size_t> index;
    bool names_first = false;
    for (const auto& d : image) {
      const std::string file = d.file.empty() ? own : d.file;
      names_first |= file == own;
      auto [it, added] = index.emplace(file, members.size());
      if (added) members.push_back({(first.parent_path() / file).string(), 0});
      // A file must hold every page a TiffData maps to it. Not the sum of the
      // counts: for planes an aborted acquisition never took, Micro-Manager adds
      // TiffData that point at pages already mapped (OMEMetadata.fillInMissingTiffDatas).
      auto& m = members[it->second];
      m.planes = (m.planes < 0 || d.planes < 0) ? -1 : std::max(m.planes, d.ifd + d.planes);
    }
    if (!names_first || members.empty()) continue;
    // The first file leads, whatever order the planes were listed in.
    const auto self = std::find_if(members.begin(), members.end(),
                                   [&](const SeriesMember& m) { return fs::path(m.path).filename() == own; });
    std::rotate(members.begin(), self, self + 1);
    return members;
  }
  return {};
}

// The files NDTiff.index names, in the order the images were saved, each
// with its image count. An entry
// cut short (the acquisition was still writing) ends the index, as
// ndstorage reads it.
std::vector<SeriesMember> ndtiff_index_files(const fs::path& index) {
  std::ifstream in(index, std::ios::binary);
  if (!in) throw InputError(index.string(), "cannot open the NDTiff index for reading");
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The index is written in the writing machine's byte order: little-endian on every platform
  // Micro-Manager runs on.
  const auto u32_at = [&](std::size_t at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(data[at])) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(data[at + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(data[at + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(data[at + 3])) << 24;
  };
  std::vector<SeriesMember> members;
  std::map<std::string, std::size_t> where;
  std::size_t pos = 0;
  // An entry: axes JSON (length-prefixed), file name (length-prefixed), then 8 uint32 (pixel offset, width,
  // height, pixel type, compression, metadata offset, length, compression).
  while (pos + 4 <= data.size()) {
    const std::uint32_t axes = u32_at(pos);
    if (axes == 0 || axes > data.size() - pos - 4) break;
    std::size_t p = pos + 4 + axes;
    if (p + 4 > data.size()) break;
    const std::uint32_t name_length = u32_at(p);
    if (name_length > data.size() - p - 4 || data.size() - p - 4 - name_length < 32) break;
    const std::string name = data.substr(p + 4, name_length);
    pos = p + 4 + name_length + 32;
    auto [it, added] = where.emplace(name, members.size());
    if (added) members.push_back({(index.parent_path() / name).string(), 0});
    ++members[it->second].planes;
  }
  return members;
}

// The members of the NDTiff dataset `first` belongs to; empty when there is no index beside it.
std::vector<SeriesMember> members_from_ndtiff_index(const fs::path& first) {
  const fs::path index = first.parent_path() / "NDTiff.index";
  if (!is_file(index)) return {};
  auto members = ndtiff_index_files(index);
  // The first file leads (the index lists it first unless the user named another file's index).
  const auto self = std::find_if(members.begin(), members.end(),
                                 [&](const SeriesMember& m) { return fs::path(m.path).filename() == first.filename(); });
  if (self == members.end()) return {};
  std::rotate(members.begin(), self, self + 1);
  return members;
}

// <prefix>_1<ext>, <prefix>_2<ext>, ... beside `first` (<prefix><ext>), in number order, as Picasso finds them.
std::vector<SeriesMember> members_from_names(const fs::path& first) {
  const auto [stem, ext] = split_name(first.filename().string());
  std::vector<SeriesMember> members{{first.string(), -1}};
  if (ext.empty()) return members;
  const fs::path dir = first.has_parent_path() ? first.parent_path() : fs::path(".");
  std::map<long, fs::path> numbered_files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto [other_stem, other_ext] = split_name(name);
    if (other_ext != ext) continue;
    const auto n = numbered(other_stem);
    if (n && n->first == stem && n->second > 0 && is_file(it->path())) numbered_files[n->second] = first.parent_path() / name;
  }
  long expected = 1;
  for (const auto& [n, path] : numbered_files) {
    if (n != expected) {
      const fs::path missing = first.parent_path() / (stem + "_" + std::to_string(expected) + ext);
      throw InputError(missing.string(), "is missing from the Micro-Manager series " + first.string() + " (" +
                                             path.filename().string() + " is there, but not the file before it)");
    }
    members.push_back({path.string(), -1});
    ++expected;
  }
  return members;
}

}  // namespace

std::string series_first_file(const std::string& path) {
  const fs::path p(path);
  const auto [stem, ext] = split_name(p.filename().string());
  if (ext.empty()) return path;
  const auto n = numbered(stem);
  if (!n || n->second <= 0) return path;
  const fs::path first = p.parent_path() / (n->first + ext);
  return is_file(first) ? first.string() : path;
}

std::string ndtiff_dataset_file(const std::string& directory) {
  for (const fs::path& dir : {fs::path(directory), fs::path(directory) / "Full resolution"}) {
    if (!is_file(dir / "NDTiff.index")) continue;
    const auto files = ndtiff_index_files(dir / "NDTiff.index");
    if (!files.empty()) return files[0].path;
  }
  return "";
}

SeriesPlan find_series(const std::string& first, std::string_view description, bool micromanager) {
  SeriesPlan plan;
  if (description.find("<OME") != std::string_view::npos) {
    plan.members = members_from_ome(first, description);
    if (!plan.members.empty()) {
      plan.source = "the OME-XML of " + first;
      return plan;
    }
  }
  if (fs::path(first).filename().string().find("NDTiffStack") != std::string::npos) {
    plan.members = members_from_ndtiff_index(first);
    if (!plan.members.empty()) {
      plan.source = (fs::path(first).parent_path() / "NDTiff.index").string();
      return plan;
    }
  }
  if (micromanager) {
    plan.members = members_from_names(first);
    plan.source = "the file names";
    return plan;
  }
  plan.members = {{first, -1}};
  return plan;
}

}  // namespace nanoscopy::detail

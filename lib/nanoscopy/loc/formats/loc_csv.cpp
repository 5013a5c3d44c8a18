// ThunderSTORM CSV: the writer (over the streaming CSV table writer) and a reader
// that finds its columns by name, so files from ThunderSTORM itself (other column
// orders, extra columns, px units) read as well as ours.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <string_view>

#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/formats/loc_yaml.hpp"

namespace nanoscopy::detail {
namespace {

// Every column the writer knows, in file order; a file has the subset its
// context asks for (ThunderstormWriter::enabled_).
enum CsvColumn {
  kId,
  kFrame,
  kX,
  kY,
  kZ,       // 3D fits only
  kSigma,   // sigma, or sigma1 for elliptical and 3D fits
  kSigma2,  // elliptical and 3D fits only
  kIntensity,
  kOffset,
  kBkgstd,
  kUncertainty,
  kUncertaintyZ,  // 3D fits only
  kChi2,          // the fit diagnostics, when asked for
  kIterations,
  kStatus,
  kDetections,  // linked localizations only (ThunderSTORM's merging)
  kCount
};

// ThunderSTORM's labels and units exactly as it writes them: a symmetric 2D
// Gaussian (sigma), its elliptical one (sigma1, sigma2) and its 3D astigmatic
// one (z [nm] after y); uncertainty_z [nm] follows uncertainty_xy in ThunderSTORM's
// naming; the fit diagnostics last.
constexpr const char* kColumnLabels[kCount] = {"id",
                                               "frame",
                                               "x [nm]",
                                               "y [nm]",
                                               "z [nm]",
                                               "sigma [nm]",
                                               "sigma2 [nm]",
                                               "intensity [photon]",
                                               "offset [photon]",
                                               "bkgstd [photon]",
                                               "uncertainty_xy [nm]",
                                               "uncertainty_z [nm]",
                                               "chi2",
                                               "iterations",
                                               "status",
                                               "detections"};

std::array<bool, kCount> enabled_columns(const LocWriterContext& ctx) {
  std::array<bool, kCount> on;
  on.fill(true);
  const bool two_widths = ctx.elliptical || ctx.three_d;
  on[kZ] = on[kUncertaintyZ] = ctx.three_d;
  on[kSigma2] = two_widths;
  on[kChi2] = on[kIterations] = on[kStatus] = ctx.fit_diagnostics;
  on[kDetections] = ctx.linked;
  if (ctx.carried && !ctx.carried->fields.empty()) {  // a rewritten file: its own optional columns, no more
    const CarriedMetadata& f = *ctx.carried;
    on[kChi2] = f.has("chi2");
    on[kIterations] = f.has("iterations");
    on[kStatus] = f.has("status");
    on[kDetections] = ctx.linked || f.has("n");
  }
  return on;
}

std::vector<Column> thunderstorm_columns(const LocWriterContext& ctx) {
  const auto on = enabled_columns(ctx);
  std::vector<Column> columns;
  for (int c = 0; c < kCount; ++c) {
    if (!on[c]) continue;
    // id as f64: written as an integer either way, and not limited to 2^32 rows.
    const ColumnType type = c == kId ? ColumnType::f64
                            : c == kFrame ? ColumnType::u32
                            : c == kIterations || c == kStatus || c == kDetections ? ColumnType::i32
                                                               : ColumnType::f32;
    columns.push_back({c == kSigma && on[kSigma2] ? "sigma1 [nm]" : kColumnLabels[c], type});
  }
  return columns;
}

class ThunderstormWriter final : public LocalizationWriter {
 public:
  ThunderstormWriter(const std::string& path, const LocWriterContext& ctx)
      : LocalizationWriter(LocFormat::thunderstorm_csv,
                           {path, localization_yaml_path(path, LocFormat::thunderstorm_csv)}),
        ctx_(ctx),
        pixel_size_(ctx.camera.pixel_size_nm),
        enabled_(enabled_columns(ctx)),
        table_((check_yaml_context(path, LocFormat::thunderstorm_csv, ctx), create_csv_writer(path, thunderstorm_columns(ctx)))) {}

  void append(std::span<const Localization> locs) override {
    rows_.clear();
    rows_.reserve(locs.size() * kCount);
    double row[kCount];
    std::int64_t id = counts_.written;
    for (const Localization& l : locs) {
      row[kId] = static_cast<double>(id + 1);
      row[kFrame] = static_cast<double>(l.frame) + 1.0;
      row[kX] = (l.x + 0.5) * pixel_size_;
      row[kY] = (l.y + 0.5) * pixel_size_;
      row[kZ] = l.z;
      row[kSigma] = l.sigma * pixel_size_;
      row[kSigma2] = l.sy() * pixel_size_;
      row[kIntensity] = l.photons;
      row[kOffset] = l.background;
      row[kBkgstd] = std::sqrt(std::max(l.background, 0.0));
      row[kUncertainty] = l.lpx * pixel_size_;
      row[kUncertaintyZ] = l.lpz;
      row[kChi2] = l.chi2;
      row[kIterations] = std::nearbyint(l.iterations);  // a link's mean, to ThunderSTORM's integer column
      row[kStatus] = static_cast<int>(l.status);
      row[kDetections] = l.n;
      bool finite = true;
      // As stored: a double beyond float's range would print as inf.
      for (int c = kX; c < kIterations; ++c) finite = finite && (!enabled_[c] || std::isfinite(static_cast<float>(row[c])));
      if (!finite) {
        ++counts_.non_finite;
        continue;
      }
      for (int c = 0; c < kCount; ++c)
        if (enabled_[c]) rows_.push_back(row[c]);
      ++id;
    }
    table_->append(rows_);
    counts_.written = id;
  }

  // The image size, camera and settings go beside the CSV (which has no room for
  // them) in the .yaml Picasso keeps beside its HDF5: frc and merges read it back.
  void finish() override {
    finish_with_yaml(*table_, files_[0], files_[1], localization_yaml_text(ctx_, counts_, files_[1]));
  }

 private:
  LocWriterContext ctx_;
  double pixel_size_;
  std::array<bool, kCount> enabled_;
  std::unique_ptr<TableWriter> table_;
  std::vector<double> rows_;
};

std::string_view trimmed(std::string_view f) {
  const auto first = f.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return f.substr(first, f.find_last_not_of(" \t") - first + 1);
}

// One CSV record split into fields (RFC 4180 quotes; ThunderSTORM quotes only the labels). The
// views point into `line`, or into `storage` for a record with quotes.
void split_record(const std::string& line, std::vector<std::string_view>& fields, std::vector<std::string>& storage) {
  fields.clear();
  if (line.find('"') == std::string::npos) {  // the common case: no copies
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = line.find(',', start);
      fields.push_back(trimmed(std::string_view(line).substr(start, comma - start)));
      if (comma == std::string::npos) return;
      start = comma + 1;
    }
  }
  storage.clear();
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      storage.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  storage.push_back(std::move(field));
  for (const auto& f : storage) fields.push_back(trimmed(f));
}

std::optional<double> parse_number(std::string_view text) {
  // Java's spellings, as ThunderSTORM (Double.toString) writes them.
  if (text == "NaN") return std::nan("");
  if (text == "Infinity") return HUGE_VAL;
  if (text == "-Infinity") return -HUGE_VAL;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  double value = 0;
  const auto result = std::from_chars(begin, end, value);
  if (result.ec != std::errc() || result.ptr != end || begin == end) return std::nullopt;
  return value;
}

// What a column holds and how its values convert to Localization units.
enum class Field { ignored, frame, x, y, z, sigma, sigma_y, photons, background, lpx, lpz, chi2, iterations, status, detections, count };
enum class Unit { none, nm, px, um };

struct ColumnRole {
  Field field = Field::ignored;
  Unit unit = Unit::none;
};

ColumnRole column_role(const std::string& label, const std::string& path) {
  std::string name = label, unit;
  if (const auto open = label.find(" ["); open != std::string::npos && label.back() == ']') {
    name = label.substr(0, open);
    unit = label.substr(open + 2, label.size() - open - 3);
  }
  const auto length_unit = [&]() {
    if (unit == "nm") return Unit::nm;
    if (unit == "px") return Unit::px;
    if (unit == "um" || unit == "\xC2\xB5m") return Unit::um;
    throw InputError(path, "column " + quote_value(label) + ": unsupported unit " + quote_value(unit) + " (nm, px or um)");
  };
  const auto photon_unit = [&]() {
    if (unit != "photon")
      throw InputError(path, "column " + quote_value(label) + ": only [photon] intensities can be read, not [" + clip_text(unit) + "]");
    return Unit::none;
  };
  if (name == "frame") return {Field::frame, Unit::none};
  if (name == "x") return {Field::x, length_unit()};
  if (name == "y") return {Field::y, length_unit()};
  if (name == "z") return {Field::z, length_unit()};
  if (name == "uncertainty_z") return {Field::lpz, length_unit()};
  if (name == "sigma" || name == "sigma1") return {Field::sigma, length_unit()};
  if (name == "sigma2") return {Field::sigma_y, length_unit()};
  if (name == "intensity") return {Field::photons, photon_unit()};
  if (name == "offset") return {Field::background, photon_unit()};
  if (name == "uncertainty_xy" || name == "uncertainty") return {Field::lpx, length_unit()};
  if (name == "chi2") return {Field::chi2, Unit::none};
  if (name == "iterations") return {Field::iterations, Unit::none};
  if (name == "detections") return {Field::detections, Unit::none};
  if (name == "status") return {Field::status, Unit::none};
  return {};
}

}  // namespace

std::unique_ptr<LocalizationWriter> create_thunderstorm_writer(const std::string& path, const LocWriterContext& ctx) {
  return std::make_unique<ThunderstormWriter>(path, ctx);
}

namespace {

// The rows read line by line: the header is parsed once, then read() converts
// up to the rows asked for.
class ThunderstormReader final : public LocalizationReader {
 public:
  ThunderstormReader(const std::string& path, double pixel_size_nm) : path_(path) {
    info_.format = LocFormat::thunderstorm_csv;
    // The .yaml fit2d writes beside its CSV (or Picasso's beside an export) gives the image
    // size and, unless given, the pixel size.
    read_localization_yaml(localization_yaml_to_read(path, LocFormat::thunderstorm_csv), info_);
    if (pixel_size_nm > 0) info_.pixel_size_nm = pixel_size_nm;
    pixel_size_nm_ = info_.pixel_size_nm;
    if (!(pixel_size_nm_ > 0))
      throw UsageError(path, "reading a ThunderSTORM CSV needs the pixel size (nm) to convert positions to pixels");
    in_.open(input_path(path, "the localizations"), std::ios::binary);
    if (!in_) throw InputError(path, "cannot open the file");
    std::string line;
    if (!std::getline(in_, line)) throw InputError(path, "the file is empty: no CSV header");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // UTF-8 byte-order mark
    split_record(line, fields_, storage_);
    labels_.assign(fields_.begin(), fields_.end());
    bool has[static_cast<int>(Field::count)] = {};  // sized by the enum, so a new field cannot overrun it
    for (const auto& label : labels_) {
      const ColumnRole role = column_role(label, path);
      if (role.field != Field::ignored && has[static_cast<int>(role.field)])
        throw InputError(path, "column " + quote_value(label) + " appears twice");
      has[static_cast<int>(role.field)] = true;
      roles_.push_back(role);
    }
    if (!has[static_cast<int>(Field::frame)]) throw InputError(path, "no frame column in the CSV header");
    if (!has[static_cast<int>(Field::x)] || !has[static_cast<int>(Field::y)])
      throw InputError(path, "no x or y column in the CSV header (\"x [nm]\", \"y [nm]\")");
    has_status_ = has[static_cast<int>(Field::status)];
    // The columns present, under Picasso's names (what a rewrite may write again; nothing else).
    info_.carried.path = path;
    for (const ColumnRole& role : roles_) {
      const auto add = [&](const char* name, ColumnType type) { info_.carried.fields.push_back({name, type}); };
      switch (role.field) {
        case Field::frame: add("frame", ColumnType::u32); break;
        case Field::x: add("x", ColumnType::f32); break;
        case Field::y: add("y", ColumnType::f32); break;
        case Field::z: add("z", ColumnType::f32); break;
        case Field::sigma:  // a round fit's one width is Picasso's sx = sy
          add("sx", ColumnType::f32);
          if (!has[static_cast<int>(Field::sigma_y)]) add("sy", ColumnType::f32);
          break;
        case Field::sigma_y: add("sy", ColumnType::f32); break;
        case Field::photons: add("photons", ColumnType::f32); break;
        case Field::background: add("bg", ColumnType::f32); break;
        case Field::lpx: add("lpx", ColumnType::f32); add("lpy", ColumnType::f32); break;
        case Field::lpz: add("lpz", ColumnType::f32); break;
        case Field::chi2: add("chi2", ColumnType::f32); break;
        case Field::iterations: add("iterations", ColumnType::i32); break;
        case Field::status: add("status", ColumnType::i32); break;
        case Field::detections: add("n", ColumnType::u32); break;
        case Field::ignored:
        case Field::count: break;
      }
    }
  }

  std::int64_t rows() const override { return -1; }

  bool read(std::vector<Localization>& out, std::size_t max_rows) override {
    out.clear();
    max_rows = std::max<std::size_t>(max_rows, 1);
    std::string line;
    while (out.size() < max_rows && std::getline(in_, line)) {
      ++line_number_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      out.push_back(parse(line));
    }
    if (in_.bad()) throw InputError(path_, "read error");
    return !out.empty();
  }

 private:
  // Length in the file → px of Localization; positions also move the pixel centre from i + 0.5 to i.
  double to_px(double v, Unit unit) const {
    switch (unit) {
      case Unit::nm:
        return v / pixel_size_nm_;
      case Unit::um:
        return v * 1000.0 / pixel_size_nm_;
      default:
        return v;
    }
  }

  // Depth in the file → nm of Localization (z is not in pixels; a px column counts lateral pixels).
  double to_nm(double v, Unit unit) const {
    switch (unit) {
      case Unit::um:
        return v * 1000.0;
      case Unit::px:
        return v * pixel_size_nm_;
      default:
        return v;
    }
  }

  Localization parse(const std::string& line) {
    const auto where = [&] { return path_ + ":" + std::to_string(line_number_); };
    split_record(line, fields_, storage_);
    if (fields_.size() != roles_.size())
      throw InputError(where(), std::to_string(fields_.size()) + " values, but the header has " +
                                    std::to_string(roles_.size()) + " columns");
    Localization l;
    if (!has_status_) l.status = FitStatus::converged_min_delta;
    for (std::size_t c = 0; c < fields_.size(); ++c) {
      const ColumnRole role = roles_[c];
      if (role.field == Field::ignored) continue;
      const auto parsed = parse_number(fields_[c]);
      if (!parsed)
        throw InputError(where(), "column " + quote_value(labels_[c]) + ": " + quote_value(fields_[c]) + " is not a number");
      const double v = *parsed;
      const auto whole = [&](double lo, double hi) {
        if (!(v >= lo && v <= hi) || v != std::floor(v))
          throw InputError(where(), "column " + quote_value(labels_[c]) + ": " + quote_value(fields_[c]) +
                                        " is not a whole number in [" + std::to_string(static_cast<std::int64_t>(lo)) +
                                        ", " + std::to_string(static_cast<std::int64_t>(hi)) + "]");
        return static_cast<std::int64_t>(v);
      };
      switch (role.field) {
        case Field::frame:
          l.frame = whole(1, 9.0e15) - 1;  // ThunderSTORM counts frames from 1
          break;
        case Field::x:
          l.x = to_px(v, role.unit) - 0.5;
          break;
        case Field::y:
          l.y = to_px(v, role.unit) - 0.5;
          break;
        case Field::sigma:
          l.sigma = to_px(v, role.unit);
          break;
        case Field::z:
          l.z = to_nm(v, role.unit);
          break;
        case Field::lpz:
          l.lpz = to_nm(v, role.unit);
          break;
        case Field::sigma_y:
          l.sigma_y = to_px(v, role.unit);
          break;
        case Field::photons:
          l.photons = v;
          break;
        case Field::background:
          l.background = v;
          break;
        case Field::lpx:
          l.lpx = l.lpy = to_px(v, role.unit);
          break;
        case Field::chi2:
          l.chi2 = v;
          break;
        case Field::iterations:
          l.iterations = static_cast<std::int32_t>(whole(0, 2147483647));
          break;
        case Field::status:
          l.status = static_cast<FitStatus>(whole(0, static_cast<double>(FitStatus::invalid_roi)));
          break;
        case Field::detections:
          l.n = static_cast<std::int32_t>(whole(1, 2147483647));
          break;
        case Field::ignored:
        case Field::count:
          break;
      }
    }
    return l;
  }

  std::string path_;
  double pixel_size_nm_ = 0;
  std::ifstream in_;
  std::vector<std::string_view> fields_;
  std::vector<std::string> storage_;
  std::vector<std::string> labels_;
  std::vector<ColumnRole> roles_;
  bool has_status_ = false;
  std::int64_t line_number_ = 1;
};

}  // namespace

std::unique_ptr<LocalizationReader> open_thunderstorm_reader(const std::string& path, double pixel_size_nm) {
  return std::make_unique<ThunderstormReader>(path, pixel_size_nm);
}

}  // namespace nanoscopy::detail

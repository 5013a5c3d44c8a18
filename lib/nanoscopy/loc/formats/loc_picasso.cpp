// Picasso's localization files: /locs in an HDF5 file (over the streaming HDF5
// table writer) and the multi-document .yaml beside it; and the reader.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <tuple>

#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/hdf5_util.hpp"
#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/io/yaml_documents.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"
#include "nanoscopy/loc/formats/loc_yaml.hpp"
#include "nanoscopy/loc/formats/picasso_metadata.hpp"

namespace nanoscopy::detail {
namespace {

// Rows of a Picasso table arrive in frame order and inside the movie (the writers' shared rule).
void check_frame_order(const std::string& file, std::int64_t frame, std::int64_t frames, std::int64_t& last_frame) {
  if (frame < 0 || frame >= frames)
    throw OutputError(file, "localization in frame " + std::to_string(frame) + " outside the movie's " +
                                std::to_string(frames) + " frames");
  if (frame < last_frame)
    throw OutputError(file, "localizations must arrive sorted by frame: frame " + std::to_string(frame) +
                                " after frame " + std::to_string(last_frame));
  last_frame = frame;
}

namespace fs = std::filesystem;

enum PicassoColumn {
  kFrame,
  kX,
  kY,
  kPhotons,
  kSx,
  kSy,
  kBg,
  kLpx,
  kLpy,
  kEllipticity,
  kNetGradient,
  kLogLikelihood,
  kIterations,
  kPhotonsUnc,
  kBgUnc,
  kSxUnc,
  kSyUnc,
  kZ,
  kDzcalib,
  kLpz,
  kChi2,
  kStatus,
  kLen,
  kN,
  kPhotonRate,
  kCount
};

// Picasso 0.10.3 Localize's fields in its order (localize.LOCALIZATION_COLUMNS): the
// least-squares fields (gausslq.locs_from_fits); for mle fits gaussmle.locs_from_fits'
// log_likelihood, iterations (u4) and the bounds photons_unc, bg_unc, sx_unc, sy_unc;
// a 3D fit's z, d_zcalib, lpz after those (as zfit appends them); then our fit
// diagnostics (chi2, iterations unless mle wrote them, status) when asked for; and a
// link's len, n (u4) and photon_rate (f4), as Picasso's link writes them. A linked
// file's iterations are the mean of its localizations' (f4), as Picasso's link makes them.
std::vector<PicassoColumn> picasso_layout(const LocWriterContext& ctx) {
  std::vector<PicassoColumn> layout = {kFrame, kX, kY, kPhotons, kSx, kSy, kBg, kLpx, kLpy, kEllipticity, kNetGradient};
  if (ctx.mle) layout.insert(layout.end(), {kLogLikelihood, kIterations, kPhotonsUnc, kBgUnc, kSxUnc, kSyUnc});
  if (ctx.three_d && ctx.spline)
    layout.insert(layout.end(), {kZ, kLpz});
  else if (ctx.three_d)
    layout.insert(layout.end(), {kZ, kDzcalib, kLpz});
  if (ctx.fit_diagnostics) {
    layout.push_back(kChi2);
    if (!ctx.mle) layout.push_back(kIterations);
    layout.push_back(kStatus);
  }
  if (ctx.linked) layout.insert(layout.end(), {kLen, kN, kPhotonRate});
  return layout;
}

constexpr const char* kColumnNames[kCount] = {
    "frame", "x", "y", "photons", "sx", "sy", "bg", "lpx", "lpy", "ellipticity", "net_gradient", "log_likelihood",
    "iterations", "photons_unc", "bg_unc", "sx_unc", "sy_unc", "z", "d_zcalib", "lpz", "chi2", "status", "len", "n",
    "photon_rate"};

ColumnType picasso_type(PicassoColumn c, bool linked) {
  switch (c) {
    case kFrame:
    case kLen:
    case kN:
      return ColumnType::u32;
    case kIterations:
      return linked ? ColumnType::f32 : ColumnType::u32;
    case kStatus:
      return ColumnType::i32;
    default:
      return ColumnType::f32;
  }
}

std::vector<Column> picasso_columns(const std::vector<PicassoColumn>& layout, bool linked) {
  std::vector<Column> columns;
  for (PicassoColumn c : layout) columns.push_back({kColumnNames[c], picasso_type(c, linked)});
  return columns;
}

class PicassoWriter final : public LocalizationWriter {
 public:
  PicassoWriter(const std::string& path, const LocWriterContext& ctx)
      : LocalizationWriter(LocFormat::picasso_hdf5, {path, localization_yaml_path(path, LocFormat::picasso_hdf5)}), ctx_(ctx) {
    if (ctx_.width <= 0 || ctx_.height <= 0 || ctx_.frames <= 0)
      throw UsageError(path, "a Picasso file needs the movie's width, height and frame count (got " +
                                 std::to_string(ctx_.width) + " x " + std::to_string(ctx_.height) + ", " +
                                 std::to_string(ctx_.frames) + " frames)");
    check_yaml_context(path, LocFormat::picasso_hdf5, ctx_);
    if (ctx_.carried && !ctx_.carried->fields.empty()) {
      table_ = create_hdf5_table_writer(path, "locs", plan_carried());
      return;
    }
    layout_ = picasso_layout(ctx_);
    table_ = create_hdf5_table_writer(path, "locs", picasso_columns(layout_, ctx_.linked));
  }

  void append(std::span<const Localization> locs) override {
    if (!plan_.empty()) {
      append_carried(locs);
      return;
    }
    rows_.clear();
    rows_.reserve(locs.size() * kCount);
    const auto width = static_cast<float>(ctx_.width);
    const auto height = static_cast<float>(ctx_.height);
    for (const Localization& l : locs) {
      check_frame_order(files_[0], l.frame, ctx_.frames, last_frame_);
      // Picasso's rules apply to the values as stored (float32).
      float v[kCount];
      v[kX] = static_cast<float>(l.x);
      v[kY] = static_cast<float>(l.y);
      v[kPhotons] = static_cast<float>(l.photons);
      v[kSx] = v[kSy] = static_cast<float>(l.sigma);
      if (ctx_.elliptical || ctx_.three_d) v[kSy] = static_cast<float>(l.sy());
      v[kBg] = static_cast<float>(l.background);
      v[kLpx] = static_cast<float>(l.lpx);
      v[kLpy] = static_cast<float>(l.lpy);
      v[kEllipticity] = 0.0f;
      // Picasso's (max − min)/max of the two widths.
      if (ctx_.elliptical || ctx_.three_d) v[kEllipticity] = (std::max(v[kSx], v[kSy]) - std::min(v[kSx], v[kSy])) / std::max(v[kSx], v[kSy]);
      v[kNetGradient] = static_cast<float>(l.net_gradient);
      v[kLogLikelihood] = static_cast<float>(l.log_likelihood);
      v[kIterations] = static_cast<float>(l.iterations);
      v[kPhotonsUnc] = static_cast<float>(l.photons_unc);
      v[kBgUnc] = static_cast<float>(l.bg_unc);
      v[kSxUnc] = static_cast<float>(l.sx_unc);
      v[kSyUnc] = static_cast<float>(l.sy_unc);
      v[kZ] = static_cast<float>(l.z);
      v[kDzcalib] = 0.0f;  // on the curve: z is fitted through σx(z), σy(z)
      v[kLpz] = static_cast<float>(l.lpz);
      v[kChi2] = static_cast<float>(l.chi2);
      v[kStatus] = static_cast<float>(static_cast<int>(l.status));
      v[kLen] = static_cast<float>(l.len);
      v[kN] = static_cast<float>(l.n);
      v[kPhotonRate] = static_cast<float>(l.photon_rate);
      bool finite = true;  // what is written must be finite (Picasso's ensure_sanity drops the row otherwise)
      for (PicassoColumn c : layout_) finite = finite && std::isfinite(v[c]);
      if (!finite) {
        ++counts_.non_finite;
        continue;
      }
      if (!(v[kX] > 0 && v[kY] > 0 && v[kX] < width && v[kY] < height)) {
        ++counts_.outside_image;
        continue;
      }
      if (!(v[kLpx] > 0 && v[kLpy] > 0 && v[kPhotons] >= 0 && v[kSx] >= 0)) {
        ++counts_.negative;
        continue;
      }
      rows_.push_back(static_cast<double>(l.frame));
      for (std::size_t c = 1; c < layout_.size(); ++c) {
        const PicassoColumn column = layout_[c];
        // Integer columns from their exact values (len, n, status: int32; iterations: as counted).
        if (column == kLen) rows_.push_back(l.len);
        else if (column == kN) rows_.push_back(l.n);
        else if (column == kStatus) rows_.push_back(static_cast<int>(l.status));
        else if (column == kIterations && !ctx_.linked) rows_.push_back(std::nearbyint(l.iterations));
        else rows_.push_back(v[column]);
      }
      ++counts_.written;
    }
    table_->append(rows_);
  }

  void finish() override {
    finish_with_yaml(*table_, files_[0], files_[1], localization_yaml_text(ctx_, counts_, files_[1]));
  }

 private:
  // A column of a rewritten file: a known field (its value from the Localization) or an extra column.
  enum class Source {
    frame, x, y, photons, sx, sy, bg, lpx, lpy, net_gradient, z, lpz, log_likelihood, photons_unc, bg_unc, sx_unc,
    sy_unc, chi2, iterations, status, len, n, photon_rate, extra
  };
  struct Slot {
    Source source = Source::extra;
    const ExtraColumn* extra = nullptr;
    bool integer = false;
  };

  // The input's columns in its order (carried dtypes), len and n added for a link.
  std::vector<Column> plan_carried() {
    static const std::pair<const char*, Source> known[] = {
        {"frame", Source::frame}, {"x", Source::x}, {"y", Source::y}, {"photons", Source::photons},
        {"sx", Source::sx}, {"sy", Source::sy}, {"bg", Source::bg}, {"lpx", Source::lpx}, {"lpy", Source::lpy},
        {"net_gradient", Source::net_gradient}, {"z", Source::z}, {"lpz", Source::lpz},
        {"log_likelihood", Source::log_likelihood}, {"photons_unc", Source::photons_unc},
        {"bg_unc", Source::bg_unc}, {"sx_unc", Source::sx_unc}, {"sy_unc", Source::sy_unc},
        {"chi2", Source::chi2}, {"iterations", Source::iterations}, {"status", Source::status},
        {"len", Source::len}, {"n", Source::n}, {"photon_rate", Source::photon_rate}};
    const CarriedMetadata& carried = *ctx_.carried;
    std::vector<Column> columns;
    const auto integer = [](ColumnType t) { return t != ColumnType::f32 && t != ColumnType::f64; };
    for (const Column& field : carried.fields) {
      Slot slot;
      for (const auto& [name, source] : known)
        if (field.name == name) slot.source = source;
      if (slot.source == Source::extra) {
        slot.extra = carried.extra_column(field.name);
        if (!slot.extra) continue;  // not read (not carried by this reader)
      }
      Column column = field;
      // A link's iterations are a mean (f4), as Picasso's link makes them.
      if (ctx_.linked && slot.source == Source::iterations) column.type = ColumnType::f32;
      slot.integer = integer(column.type);
      has_[static_cast<int>(slot.source)] = true;
      plan_.push_back(slot);
      columns.push_back(column);
    }
    if (ctx_.linked)
      for (const auto& [name, source, type] :
           {std::tuple{"len", Source::len, ColumnType::u32}, std::tuple{"n", Source::n, ColumnType::u32},
            std::tuple{"photon_rate", Source::photon_rate, ColumnType::f32}})
        if (!has_[static_cast<int>(source)]) {
          has_[static_cast<int>(source)] = true;
          plan_.push_back({source, nullptr, type != ColumnType::f32});
          columns.push_back({name, type});
        }
    return columns;
  }

  double value_of(const Slot& slot, const Localization& l, std::size_t row) const {
    switch (slot.source) {
      case Source::frame: return static_cast<double>(l.frame);
      case Source::x: return l.x;
      case Source::y: return l.y;
      case Source::photons: return l.photons;
      case Source::sx: return l.sigma;
      case Source::sy: return l.sy();
      case Source::bg: return l.background;
      case Source::lpx: return l.lpx;
      case Source::lpy: return l.lpy;
      case Source::net_gradient: return l.net_gradient;
      case Source::z: return l.z;
      case Source::lpz: return l.lpz;
      case Source::log_likelihood: return l.log_likelihood;
      case Source::photons_unc: return l.photons_unc;
      case Source::bg_unc: return l.bg_unc;
      case Source::sx_unc: return l.sx_unc;
      case Source::sy_unc: return l.sy_unc;
      case Source::photon_rate: return l.photon_rate;
      case Source::chi2: return l.chi2;
      case Source::iterations: return l.iterations;
      case Source::status: return static_cast<int>(l.status);
      case Source::len: return l.len;
      case Source::n: return l.n;
      case Source::extra:
        if (row >= slot.extra->values.size())
          throw OutputError(files_[0], "more rows than the carried column '" + slot.extra->name + "' holds");
        return slot.extra->values[row];
    }
    return 0;
  }

  // Picasso's rules (lib.ensure_sanity) on the columns the file has, as stored.
  void append_carried(std::span<const Localization> locs) {
    rows_.clear();
    rows_.reserve(locs.size() * plan_.size());
    std::vector<double> row(plan_.size());
    const auto has = [&](Source s) { return has_[static_cast<int>(s)]; };
    for (const Localization& l : locs) {
      const std::size_t index = next_row_++;
      check_frame_order(files_[0], l.frame, ctx_.frames, last_frame_);
      bool finite = true;
      for (std::size_t c = 0; c < plan_.size(); ++c) {
        row[c] = value_of(plan_[c], l, index);
        if (!plan_[c].integer && tables_f32(c)) row[c] = static_cast<float>(row[c]);
        finite = finite && (plan_[c].integer || std::isfinite(row[c]));
      }
      if (!finite) {
        ++counts_.non_finite;
        continue;
      }
      const double x = static_cast<float>(l.x), y = static_cast<float>(l.y);
      if (!(x > 0 && y > 0 && x < static_cast<double>(ctx_.width) && y < static_cast<double>(ctx_.height))) {
        ++counts_.outside_image;
        continue;
      }
      if ((has(Source::lpx) && !(static_cast<float>(l.lpx) > 0)) || (has(Source::lpy) && !(static_cast<float>(l.lpy) > 0)) ||
          (has(Source::photons) && !(static_cast<float>(l.photons) >= 0)) ||
          (has(Source::sx) && !(static_cast<float>(l.sigma) >= 0))) {
        ++counts_.negative;
        continue;
      }
      rows_.insert(rows_.end(), row.begin(), row.end());
      ++counts_.written;
    }
    table_->append(rows_);
  }

  bool tables_f32(std::size_t c) const { return table_->columns()[c].type == ColumnType::f32; }

  LocWriterContext ctx_;
  std::vector<PicassoColumn> layout_;
  std::unique_ptr<TableWriter> table_;
  std::vector<double> rows_;
  std::int64_t last_frame_ = 0;
  std::vector<Slot> plan_;
  bool has_[static_cast<int>(Source::extra) + 1] = {};
  std::size_t next_row_ = 0;
};

// ---- reading ----

namespace h5 = detail::h5;

}  // namespace

std::unique_ptr<LocalizationWriter> create_picasso_writer(const std::string& path, const LocWriterContext& ctx) {
  return std::make_unique<PicassoWriter>(path, ctx);
}

namespace {

// The fields we know, each converted to double by HDF5 into one packed memory row; the others
// (group, d_zcalib, ...) are not read.
enum Field {
  kFieldFrame,
  kFieldX,
  kFieldY,
  kFieldPhotons,
  kFieldSx,
  kFieldSy,
  kFieldBg,
  kFieldLpx,
  kFieldLpy,
  kFieldNetGradient,
  kFieldChi2,
  kFieldIterations,
  kFieldStatus,
  kFieldLogLikelihood,
  kFieldZ,
  kFieldLpz,
  kFieldLen,
  kFieldN,
  kFieldPhotonsUnc,
  kFieldBgUnc,
  kFieldSxUnc,
  kFieldSyUnc,
  kFieldPhotonRate,
  kFieldCount
};
// Picasso's names. A column under another name (group, d_zcalib, ellipticity, the
// `likelihood` of files before Picasso's log_likelihood, a user's own) is carried as it is.
constexpr const char* kFieldNames[kFieldCount] = {
    "frame", "x",     "y",          "photons", "sx",          "sy",     "bg",     "lpx",
    "lpy",   "net_gradient", "chi2", "iterations", "status", "log_likelihood", "z", "lpz",
    "len",   "n",     "photons_unc", "bg_unc", "sx_unc", "sy_unc", "photon_rate"};

bool known_field(const std::string& name) {
  return std::find(std::begin(kFieldNames), std::end(kFieldNames), name) != std::end(kFieldNames);
}

// A numeric member's dtype; nullopt for one a table cannot hold (strings, arrays, half floats).
std::optional<ColumnType> picasso_column_type(hid_t type) {
  const std::size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: {
      const bool sign = H5Tget_sign(type) == H5T_SGN_2;
      if (size == 1) return sign ? ColumnType::i8 : ColumnType::u8;
      if (size == 2) return sign ? ColumnType::i16 : ColumnType::u16;
      if (size == 4) return sign ? ColumnType::i32 : ColumnType::u32;
      if (size == 8) return sign ? ColumnType::i64 : ColumnType::u64;
      return std::nullopt;
    }
    case H5T_FLOAT:
      if (size == 4) return ColumnType::f32;
      if (size == 8) return ColumnType::f64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// /locs read in blocks of rows: the file stays open, and only one block of
// converted rows is in memory besides the caller's chunk.
class PicassoReader final : public LocalizationReader {
 public:
  PicassoReader(const std::string& path, double pixel_size_nm) : path_(path) {
    h5::silence_errors();
    info_.format = LocFormat::picasso_hdf5;
    h5::Id fapl = h5::read_access_plist();
    file_ = h5::file(H5Fopen(input_path(path, "the localizations").c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!file_.valid()) throw InputError(path, "not a readable HDF5 file: " + h5::last_error());
    if (H5Lexists(file_.get(), "locs", H5P_DEFAULT) <= 0)
      throw InputError(path, "no dataset /locs: not a Picasso localization file");
    dataset_ = h5::dataset(H5Dopen2(file_.get(), "locs", H5P_DEFAULT));
    if (!dataset_.valid()) throw InputError(path, "cannot open /locs: " + h5::last_error());
    h5::Id type = h5::type(H5Dget_type(dataset_.get()));
    space_ = h5::space(H5Dget_space(dataset_.get()));
    if (!type.valid() || !space_.valid() || H5Tget_class(type.get()) != H5T_COMPOUND ||
        H5Sget_simple_extent_ndims(space_.get()) != 1)
      throw InputError(
          path, "/locs is " + h5::describe_dataset(dataset_.get()) + ", not a 1-D table of localizations (compound)");
    H5Sget_simple_extent_dims(space_.get(), &rows_, nullptr);
    memory_type_ = h5::type(H5Tcreate(H5T_COMPOUND, kFieldCount * sizeof(double)));
    if (!memory_type_.valid()) throw InputError(path, "cannot read /locs: " + h5::last_error());
    for (int k = 0; k < kFieldCount; ++k) {
      present_[k] = H5Tget_member_index(type.get(), kFieldNames[k]) >= 0;
      if (present_[k] && H5Tinsert(memory_type_.get(), kFieldNames[k], k * sizeof(double), H5T_NATIVE_DOUBLE) < 0)
        throw InputError(path, std::string("cannot read field '") + kFieldNames[k] + "' of /locs: " + h5::last_error());
    }
    for (int k : {kFieldFrame, kFieldX, kFieldY})
      if (!present_[k]) throw InputError(path, std::string("/locs has no '") + kFieldNames[k] + "' field");
    record_fields(type.get());
    if (!h5::stores_its_data(dataset_.get()))
      throw InputError(path, "/locs declares " + std::to_string(rows_) +
                                 " rows but the file does not hold them (damaged or truncated file?)");
    read_metadata(path);
    if (pixel_size_nm > 0) info_.pixel_size_nm = pixel_size_nm;
  }

  std::int64_t rows() const override { return static_cast<std::int64_t>(rows_); }

  bool read(std::vector<Localization>& out, std::size_t max_rows) override {
    out.clear();
    constexpr hsize_t block_rows = 1 << 16;
    const hsize_t want = std::min<hsize_t>(rows_ - next_, std::max<std::size_t>(max_rows, 1));
    out.resize(static_cast<std::size_t>(want));
    block_.resize(static_cast<std::size_t>(std::min(want, block_rows)) * kFieldCount);
    for (hsize_t done = 0; done < want; done += block_rows) {
      const hsize_t start = next_ + done, count = std::min(block_rows, want - done);
      h5::Id memory_space = h5::space(H5Screate_simple(1, &count, nullptr));
      if (!memory_space.valid() ||
          H5Sselect_hyperslab(space_.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0 ||
          H5Dread(dataset_.get(), memory_type_.get(), memory_space.get(), space_.get(), H5P_DEFAULT, block_.data()) < 0)
        throw InputError(path_, "cannot read /locs rows " + std::to_string(start) + " to " +
                                    std::to_string(start + count - 1) + ": " + h5::last_error());
      for (hsize_t r = 0; r < count; ++r) convert(block_.data() + r * kFieldCount, start + r, out[static_cast<std::size_t>(done + r)]);
    }
    next_ += want;
    return want > 0;
  }

 private:
  // The .yaml beside the file; without one, Picasso 0.11's /metadata (its load_info's order).
  void read_metadata(const std::string& path) {
    const std::string yaml = localization_yaml_path(path, LocFormat::picasso_hdf5);
    std::error_code ec;
    if (!std::filesystem::exists(input_path(yaml, "the localizations' metadata"), ec))
      if (const auto json = read_picasso_metadata_dataset(file_.get(), path)) {
        read_localization_metadata_json(*json, path + ":/metadata", info_);
        return;
      }
    read_localization_yaml(yaml, info_);
  }

  void convert(const double* v, hsize_t index, Localization& l) const {
    const auto& present = present_;
    const std::string& path = path_;
    const auto row = [&] { return std::to_string(index); };
    if (!(v[kFieldFrame] >= 0) || v[kFieldFrame] != std::floor(v[kFieldFrame]) || v[kFieldFrame] > 9.0e15)
      throw InputError(path, "/locs row " + row() + ": frame " + number_text(v[kFieldFrame]) + " is not a frame index");
    l = Localization{};
    l.frame = static_cast<std::int64_t>(v[kFieldFrame]);
    l.x = v[kFieldX];
    l.y = v[kFieldY];
    if (present[kFieldPhotons]) l.photons = v[kFieldPhotons];
    if (present[kFieldSx] && present[kFieldSy]) {
      // σx, σy as written: an elliptical or 3D fit keeps both (round: sy() = sigma).
      l.sigma = v[kFieldSx];
      if (v[kFieldSy] != v[kFieldSx]) l.sigma_y = v[kFieldSy];
    } else if (present[kFieldSx] || present[kFieldSy])
      l.sigma = present[kFieldSx] ? v[kFieldSx] : v[kFieldSy];
    if (present[kFieldBg]) l.background = v[kFieldBg];
    if (present[kFieldLpx]) l.lpx = v[kFieldLpx];
    if (present[kFieldLpy]) l.lpy = v[kFieldLpy];
    if (present[kFieldNetGradient]) l.net_gradient = v[kFieldNetGradient];
    if (present[kFieldChi2]) l.chi2 = v[kFieldChi2];
    if (present[kFieldLogLikelihood]) l.log_likelihood = v[kFieldLogLikelihood];
    if (present[kFieldPhotonsUnc]) l.photons_unc = v[kFieldPhotonsUnc];
    if (present[kFieldBgUnc]) l.bg_unc = v[kFieldBgUnc];
    if (present[kFieldSxUnc]) l.sx_unc = v[kFieldSxUnc];
    if (present[kFieldSyUnc]) l.sy_unc = v[kFieldSyUnc];
    if (present[kFieldPhotonRate]) l.photon_rate = v[kFieldPhotonRate];
    // iterations: a count, or after a link (Picasso's and ours) the mean of the linked fits' counts.
    if (present[kFieldIterations]) {
      if (!(v[kFieldIterations] >= 0 && v[kFieldIterations] <= 2147483647.0))
        throw InputError(path, "/locs row " + row() + ": iterations " + number_text(v[kFieldIterations]) +
                                   " is not an iteration count");
      l.iterations = v[kFieldIterations];
    }
    if (present[kFieldZ]) l.z = v[kFieldZ];
    if (present[kFieldLpz]) l.lpz = v[kFieldLpz];
    // Integer columns stored as floats (a converted or hand-made file): a whole number in int32's range, or a
    // one-line error (a NaN or 1e300 cast to int is undefined behaviour; the fuzzer found len and n).
    const auto whole = [&](const char* name, double value) {
      if (!(value >= -2147483648.0 && value <= 2147483647.0) || value != std::floor(value))
        throw InputError(path, "/locs row " + row() + ": " + name + " " + number_text(value) + " is not a whole number");
      return static_cast<std::int32_t>(value);
    };
    if (present[kFieldLen]) l.len = whole("len", v[kFieldLen]);
    if (present[kFieldN]) l.n = whole("n", v[kFieldN]);
    l.status = FitStatus::converged_min_delta;
    if (present[kFieldStatus]) {
      const double st = v[kFieldStatus];
      if (!(st >= 0 && st <= static_cast<double>(FitStatus::invalid_roi)) || st != std::floor(st))
        throw InputError(path, "/locs row " + row() + ": status " + number_text(st) + " is not a fit status code (0-7)");
      l.status = static_cast<FitStatus>(static_cast<int>(st));
    }
  }

  // The members in the file's order with their dtype (carried by filter, link, undrift).
  void record_fields(hid_t type) {
    CarriedMetadata& carried = info_.carried;
    carried.path = path_;
    const int members = H5Tget_nmembers(type);
    for (int m = 0; m < members; ++m) {
      char* name = H5Tget_member_name(type, static_cast<unsigned>(m));
      if (!name) throw InputError(path_, "cannot read the field names of /locs: " + h5::last_error());
      const std::string field(name);
      H5free_memory(name);
      h5::Id member = h5::type(H5Tget_member_type(type, static_cast<unsigned>(m)));
      const auto column_type = member.valid() ? picasso_column_type(member.get()) : std::nullopt;
      if (!column_type) {
        carried.uncarried.push_back(field);
        continue;
      }
      carried.fields.push_back({field, *column_type});
    }
  }

  std::string path_;
  h5::Id file_, dataset_, space_, memory_type_;
  bool present_[kFieldCount] = {};
  hsize_t rows_ = 0, next_ = 0;
  std::vector<double> block_;
};

}  // namespace

std::unique_ptr<LocalizationReader> open_picasso_reader(const std::string& path, double pixel_size_nm) {
  return std::make_unique<PicassoReader>(path, pixel_size_nm);
}

void read_picasso_extra_columns(const std::string& path, CarriedMetadata& carried) {
  h5::silence_errors();
  carried.extra.clear();
  h5::Id fapl = h5::read_access_plist();
  h5::Id file = h5::file(H5Fopen(input_path(path, "the localizations").c_str(), H5F_ACC_RDONLY, fapl.get()));
  h5::Id dataset = file.valid() ? h5::dataset(H5Dopen2(file.get(), "locs", H5P_DEFAULT)) : h5::Id{};
  h5::Id space = dataset.valid() ? h5::space(H5Dget_space(dataset.get())) : h5::Id{};
  if (!space.valid()) throw InputError(path, "cannot read /locs again: " + h5::last_error());
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space.get(), &rows, nullptr);
  for (const Column& field : carried.fields) {
    if (known_field(field.name)) continue;
    ExtraColumn column{field.name, field.type, std::vector<double>(static_cast<std::size_t>(rows))};
    h5::Id memory = h5::type(H5Tcreate(H5T_COMPOUND, sizeof(double)));
    if (!memory.valid() || H5Tinsert(memory.get(), field.name.c_str(), 0, H5T_NATIVE_DOUBLE) < 0 ||
        (rows > 0 && H5Dread(dataset.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, column.values.data()) < 0))
      throw InputError(path, "cannot read field '" + field.name + "' of /locs: " + h5::last_error());
    carried.extra.push_back(std::move(column));
  }
}

}  // namespace nanoscopy::detail

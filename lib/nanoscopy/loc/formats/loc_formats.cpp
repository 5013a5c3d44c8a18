// Format dispatch for localization files; the formats live in loc_csv.cpp and loc_picasso.cpp.
#include "nanoscopy/loc/formats/loc_formats.hpp"

#include "nanoscopy/config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "nanoscopy/config.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/loc/formats/loc_yaml.hpp"

namespace nanoscopy {
namespace detail {
// loc_csv.cpp
std::unique_ptr<LocalizationWriter> create_thunderstorm_writer(const std::string& path, const LocWriterContext& ctx);
std::unique_ptr<LocalizationReader> open_thunderstorm_reader(const std::string& path, double pixel_size_nm);
// loc_picasso.cpp
std::unique_ptr<LocalizationWriter> create_picasso_writer(const std::string& path, const LocWriterContext& ctx);
std::unique_ptr<LocalizationReader> open_picasso_reader(const std::string& path, double pixel_size_nm);
void read_picasso_extra_columns(const std::string& path, CarriedMetadata& carried);
}  // namespace detail

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The table and its .yaml, declared to the run's plan by `declare` (plan_output for the tool,
// confirm_output for the writer), after the .yaml is checked to be replaceable.
void declare_localization_files(const std::string& path, LocFormat format, const std::string& what,
                                void (*declare)(const std::string&, const std::string&)) {
  const std::string yaml = detail::localization_yaml_path(path, format);
  // A .yaml the run reads (its camera maps, say) is a clash the plan's check names better.
  if (yaml != path && !planned_input(yaml)) detail::check_replaceable_yaml(yaml, path);
  declare(path, what);
  declare(yaml, "the .yaml of " + what);
}

constexpr const char* kKnownFormats =
    "known: .csv (ThunderSTORM CSV, format csv or thunderstorm), .hdf5 or .h5 (Picasso HDF5 + YAML, format hdf5 or "
    "picasso)";

}  // namespace

const char* loc_format_name(LocFormat format) {
  switch (format) {
    case LocFormat::thunderstorm_csv:
      return "ThunderSTORM CSV";
    case LocFormat::picasso_hdf5:
      return "Picasso HDF5";
  }
  return "unknown";
}

LocFormat loc_format_for(const std::string& path, const std::string& format) {
  const std::string f = lower(format);
  if (f == "csv" || f == "thunderstorm") return LocFormat::thunderstorm_csv;
  if (f == "hdf5" || f == "h5" || f == "picasso") return LocFormat::picasso_hdf5;
  if (!f.empty()) throw UsageError(path, "unknown localization format '" + format + "'; " + kKnownFormats);
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  if (ext == ".csv") return LocFormat::thunderstorm_csv;
  if (ext == ".hdf5" || ext == ".h5") return LocFormat::picasso_hdf5;
  throw UsageError(path, (ext.empty() ? std::string("no file extension to tell the localization format")
                                      : "unknown localization file extension '" + ext + "'") +
                             "; " + kKnownFormats);
}

std::unique_ptr<LocalizationWriter> create_localization_writer(const std::string& path, const std::string& format,
                                                               const LocWriterContext& ctx) {
  const LocFormat f = loc_format_for(path, format);
  // The tool declared them (plan_localization_output); the writer confirms, and checks the .yaml again.
  declare_localization_files(path, f, "the localizations", confirm_output);
  ctx.camera.validate(path);
  switch (f) {
    case LocFormat::thunderstorm_csv:
      return detail::create_thunderstorm_writer(path, ctx);
    case LocFormat::picasso_hdf5:
      return detail::create_picasso_writer(path, ctx);
  }
  throw UsageError(path, "unknown localization format");
}

void plan_localization_input(const std::string& path) {
  plan_input(path, "the localizations");
  // The .yaml its reader will read (a CSV's own X.csv.yaml, or the X.yaml of an older CSV).
  const std::string yaml = detail::localization_yaml_to_read(path, detail::format_by_extension(path));
  if (yaml != path) plan_input(yaml, "the localizations' metadata (.yaml)");
}

std::string localization_metadata_path(const std::string& path) {
  return detail::localization_yaml_to_read(path, detail::format_by_extension(path));
}

void plan_localization_output(const std::string& path, const std::string& format, const std::string& what) {
  declare_localization_files(path, loc_format_for(path, format), what, plan_output);
}

LocWriteCounts write_localizations(const std::string& path, const std::string& format, const LocWriterContext& ctx,
                                   std::span<const Localization> locs) {
  auto writer = create_localization_writer(path, format, ctx);
  writer->append(locs);
  writer->finish();
  return writer->counts();
}

std::unique_ptr<LocalizationReader> open_localization_reader(const std::string& path, const LocReadOptions& options) {
  const LocFormat f = loc_format_for(path, options.format);
  if (!(options.pixel_size_nm >= 0) || !std::isfinite(options.pixel_size_nm))
    throw UsageError(path, "the pixel size must be a positive number of nm");
  std::error_code ec;
  const std::string source = input_path(path, "the localizations");
  if (!std::filesystem::exists(source, ec)) throw InputError(path, "no such file");
  // Opening a pipe would wait for a writer for ever.
  if (!std::filesystem::is_regular_file(source, ec))
    throw InputError(path, std::filesystem::is_directory(source, ec) ? "is a directory, expected a localization file"
                                                                    : "is not a regular file (a pipe, socket or device)");
  switch (f) {
    case LocFormat::thunderstorm_csv:
      return detail::open_thunderstorm_reader(path, options.pixel_size_nm);
    case LocFormat::picasso_hdf5:
      return detail::open_picasso_reader(path, options.pixel_size_nm);
  }
  throw UsageError(path, "unknown localization format");
}

LocalizationFile read_localization_file(const std::string& path, const LocReadOptions& options) {
  auto reader = open_localization_reader(path, options);
  LocalizationFile file = reader->info();
  if (reader->rows() > 0) file.locs.reserve(static_cast<std::size_t>(reader->rows()));
  std::vector<Localization> chunk;
  while (reader->read(chunk, std::size_t{1} << 16)) {
    check_frames_within(path, file.frames, chunk, static_cast<std::int64_t>(file.locs.size()));
    file.locs.insert(file.locs.end(), chunk.begin(), chunk.end());
  }
  if (file.format == LocFormat::picasso_hdf5) detail::read_picasso_extra_columns(path, file.carried);
  return file;
}

void check_frames_within(const std::string& path, std::int64_t frames, std::span<const Localization> rows,
                         std::int64_t first_row) {
  if (frames <= 0) return;  // the file does not say
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].frame >= frames)
      throw InputError(path, "row " + std::to_string(first_row + static_cast<std::int64_t>(i) + 1) + " is in frame " +
                                 std::to_string(rows[i].frame) + ", beyond the " + std::to_string(frames) +
                                 " frames of its metadata (" +
                                 std::filesystem::path(detail::localization_yaml_path(path)).filename().string() + ")");
}

bool CarriedMetadata::has(const std::string& field) const {
  return std::any_of(fields.begin(), fields.end(), [&](const Column& c) { return c.name == field; });
}

const ExtraColumn* CarriedMetadata::extra_column(const std::string& name) const {
  for (const auto& column : extra)
    if (column.name == name) return &column;
  return nullptr;
}

void CarriedMetadata::keep_rows(const std::vector<bool>& keep) {
  for (auto& column : extra) {
    std::size_t out = 0;
    for (std::size_t i = 0; i < column.values.size() && i < keep.size(); ++i)
      if (keep[i]) column.values[out++] = column.values[i];
    column.values.resize(out);
  }
}

std::vector<Localization> read_localizations(const std::string& path, double pixel_size_nm) {
  LocReadOptions options;
  options.pixel_size_nm = pixel_size_nm;
  return read_localization_file(path, options).locs;
}

LocWriterContext writer_context(const StackInfo& info, const Camera& camera) {
  LocWriterContext ctx;
  ctx.camera = camera;
  ctx.width = info.width;
  ctx.height = info.height;
  ctx.frames = info.frames;
  ctx.data_type = to_string(info.type);
  ctx.movie_yaml = info.metadata_yaml;
  ctx.version = NANOSCOPY_VERSION;
  return ctx;
}

LocWriterContext writer_context(const LocalizationFile& file, const std::string& program) {
  if (!file.carried.uncarried.empty())
    throw InputError(file.carried.path, "field '" + file.carried.uncarried.front() +
                                            "' of /locs is not a number (string, array or half float): it cannot be "
                                            "carried into the output, and would be lost");
  LocWriterContext c;
  c.camera.pixel_size_nm = file.pixel_size_nm > 0 ? file.pixel_size_nm : 100;
  c.carried = &file.carried;
  double max_x = 0, max_y = 0;
  std::int64_t max_frame = 0;
  for (const auto& l : file.locs) {
    max_x = std::max(max_x, l.x);
    max_y = std::max(max_y, l.y);
    max_frame = std::max(max_frame, l.frame);
    c.three_d = c.three_d || l.z != 0;
    c.elliptical = c.elliptical || l.sigma_y > 0;
    c.mle = c.mle || std::isfinite(l.log_likelihood);
    c.fit_diagnostics = c.fit_diagnostics || l.iterations != 0;
    c.linked = c.linked || l.n > 0;
  }
  c.elliptical = c.elliptical && !c.three_d;
  // The fields the file has, not those its values suggest (a Picasso MLE file has iterations but no chi2 or
  // status; a fit2d file's 2D rows have no z): a field the input did not have is never added.
  if (!file.carried.fields.empty()) {
    const auto& f = file.carried;
    c.three_d = f.has("z");
    c.elliptical = !c.three_d && f.has("sx") && f.has("sy") &&
                   std::any_of(file.locs.begin(), file.locs.end(), [](const Localization& l) { return l.sigma_y > 0; });
    c.mle = f.has("log_likelihood");
    c.fit_diagnostics = f.has("chi2") || f.has("iterations") || f.has("status");
    c.linked = f.has("n");
  }
  c.width = file.width > 0 ? file.width : static_cast<std::int64_t>(std::ceil(max_x)) + 1;
  c.height = file.height > 0 ? file.height : static_cast<std::int64_t>(std::ceil(max_y)) + 1;
  c.frames = file.frames > 0 ? file.frames : max_frame + 1;
  c.program = program;
  c.version = NANOSCOPY_VERSION;
  return c;
}

}  // namespace nanoscopy

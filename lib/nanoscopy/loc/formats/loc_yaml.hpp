// Internal: the .yaml beside a localization file (Picasso's multi-document
// info: the movie's metadata with Width, Height, Frames and Pixelsize first,
// then the camera and the fit settings), written beside Picasso HDF5 and
// ThunderSTORM CSV alike so a CSV keeps the image size; and its reader.
#pragma once

#include <cstdint>
#include <string>

#include "nanoscopy/io/table_writer.hpp"
#include "nanoscopy/loc/formats/loc_formats.hpp"

namespace nanoscopy::detail {

// The .yaml a localization file is written with: X.yaml for Picasso's X.hdf5 (its own
// convention, which Picasso reads), X.csv.yaml for a CSV X.csv (any other table: its full name
// + .yaml), so that X.csv and X.hdf5 from the same stem never share, and overwrite, one .yaml.
std::string localization_yaml_path(const std::string& path, LocFormat format);
// The format an extension tells, never failing: .hdf5 and .h5 Picasso, everything else a CSV.
LocFormat format_by_extension(const std::string& path);
// localization_yaml_path for format_by_extension(path).
std::string localization_yaml_path(const std::string& path);

// The .yaml a reader of `path` reads: localization_yaml_path's; for a CSV without one, the
// X.yaml that CSVs were written with before, when it can only be this CSV's: localization
// metadata (two YAML documents or more) and no X.hdf5 or X.h5 beside it to claim it.
std::string localization_yaml_to_read(const std::string& path, LocFormat format);

// Locale-independent number text (yaml-cpp's emitter formats numbers through iostreams).
std::string number_text(double v);
std::string number_text(std::int64_t v);

// UsageError naming `path` when the .yaml would be the file itself, or a
// provenance parameter is unnamed, repeated or clashes with a key the writer sets.
void check_yaml_context(const std::string& path, LocFormat format, const LocWriterContext& ctx);

// The two YAML documents, or with ctx.carried's documents those and one of the step
// (loc_formats.hpp); OutputError naming `yaml_path` when they cannot be formatted.
std::string localization_yaml_text(const LocWriterContext& ctx, const LocWriteCounts& counts,
                                   const std::string& yaml_path);

// Finishes `table` (committed at `table_path`) and writes `yaml_text` to
// `yaml_path`, both or neither: the .yaml is written under its temporary name
// first, then the table is committed, then the .yaml (a failure there removes
// the committed table).
void finish_with_yaml(TableWriter& table, const std::string& table_path, const std::string& yaml_path,
                      const std::string& yaml_text);

// UsageError naming `yaml_path` (the sidecar of the localization output `path`) when an existing
// file there is not localization metadata (at least two YAML documents: the movie's, then the
// fit's), so it would be lost: a movie's own .yaml, or another file.
void check_replaceable_yaml(const std::string& yaml_path, const std::string& path);

// Width, Height, Frames (first document) and the latest Pixelsize of `yaml_path`
// into `file`, and every document as YAML text into file.carried.yaml (written
// again by a rewrite), when the file exists; InputError when it is not valid YAML.
void read_localization_yaml(const std::string& yaml_path, LocalizationFile& file);
// The same from Picasso 0.11's /metadata dataset: `json` a JSON list of the info objects that its
// .yaml would hold as documents (io.py: json.dumps(list(info))); InputError naming `where`.
void read_localization_metadata_json(const std::string& json, const std::string& where, LocalizationFile& file);
// The largest Width or Height read_localization_yaml accepts (InputError naming the .yaml beyond it).
inline constexpr std::int64_t kMaxYamlFrameSide = std::int64_t{1} << 20;

}  // namespace nanoscopy::detail

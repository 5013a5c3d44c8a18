// Internal: TIFF metadata conventions shared by the TIFF reader, the TIFF
// writer and their tests (ImageJ descriptions, OME-XML pixel sizes, the
// classic/BigTIFF decision).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nanoscopy/io/image_writer.hpp"

namespace nanoscopy::detail {

// Classic TIFF addresses at most 4 GiB; the writer switches to BigTIFF when
// the estimated file size (pixels + one IFD per frame + description) passes
// this limit, which keeps a margin below 2^32 for the estimate's slack.
inline constexpr std::uint64_t kClassicTiffLimit = 4'000'000'000ULL;

// Size in bytes of a classic TIFF holding `meta` as the writer lays it out.
std::uint64_t estimated_classic_tiff_size(const ImageMeta& meta);
bool needs_bigtiff(const ImageMeta& meta);

// create_tiff_writer() with the classic/BigTIFF choice made by the caller
// (tests write small BigTIFFs with it).
std::unique_ptr<ImageWriter> create_tiff_writer(const std::string& path, const ImageMeta& meta, bool bigtiff);

// The ImageDescription ImageJ writes for a stack of `frames` images along `axis`
// ("ImageJ=1.11a\nimages=N\nframes=N\nunit=micron\nloop=false\n" for a movie,
// slices=N for Z, images=N alone for pages; the unit only when the pixel size is known).
std::string imagej_description(std::int64_t frames, bool calibrated, StackAxis axis = StackAxis::time);

// The axis an ImageJ description declares: frames= (T) or slices= (Z) of more than one.
StackAxis imagej_axis(std::string_view description);

// ImageJ's IJMetadata (TIFF tag 50839) holding slice labels, and its byte counts
// (tag 50838): the header "IJIJ" + ("labl", N), then each label in UTF-16, all in
// the host byte order (as the file's header declares), as ImageJ and tifffile read it.
struct ImageJLabels {
  std::vector<unsigned char> bytes;
  std::vector<std::uint32_t> counts;
};
ImageJLabels imagej_labels(const std::vector<std::string>& labels);

// Value of `key=` in an ImageJ description (one key=value per line), if present.
std::optional<std::string> imagej_value(std::string_view description, std::string_view key);

// Pixel size in nm from ImageJ's XResolution (pixels per unit) and `unit=`
// (micron, um, µm, nm, mm, cm, m); 0 when unknown.
double imagej_pixel_size_nm(std::string_view description, double x_resolution);

// Pixel size in nm from OME-XML `PhysicalSizeX` and `PhysicalSizeXUnit`
// (default µm); 0 when absent or in a unit that is not a length.
double ome_pixel_size_nm(std::string_view xml);

// Value of XML attribute `name` (exact name, single or double quotes): its first
// occurrence in `xml`, which may be one element's text or a whole document.
std::optional<std::string_view> xml_attribute(std::string_view xml, std::string_view name);

// Nanometres per `unit` ("µm", "um", "micron", "nm", "Å", "mm", ...); 0 when unknown.
double nanometres_per_unit(std::string_view unit);

}  // namespace nanoscopy::detail

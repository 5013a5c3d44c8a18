// Internal: which files make up a Micro-Manager series. Micro-Manager splits an
// acquisition into files of at most 4 GB: <prefix>.ome.tif, <prefix>_1.ome.tif,
// <prefix>_2.ome.tif, ... (<prefix> is usually name_MMStack_Pos0). The OME-XML
// in the first file's ImageDescription maps every plane to its file
// (<TiffData IFD= PlaneCount=><UUID FileName=>); frames are in acquisition
// order across the files, as Picasso reads them (TiffMultiMap).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nanoscopy::detail {

struct SeriesMember {
  std::string path;
  std::int64_t planes = -1;  // the pages this file must hold for the OME-XML's planes; -1 when it does not say
};

struct SeriesPlan {
  std::vector<SeriesMember> members;  // in acquisition order; members[0] is the first file
  std::string source;                 // what named the members: "the OME-XML of <first>" or "the file names"
};

// The first file of the series `path` would belong to: "<prefix>.ome.tif" for
// "<prefix>_<N>.ome.tif" (also .ome.tiff, .tif) when that file exists; else `path` itself.
std::string series_first_file(const std::string& path);

// The files of the series that starts with `first`, whose first page holds the
// OME-XML `description`. The members are those the OME-XML names for the image
// stored in `first` (for an NDTiff file: those its NDTiff.index names); when it names none (no OME-XML, or renamed files) and
// `micromanager` (the file carries Micro-Manager metadata), the files
// <prefix>_1, <prefix>_2, ... beside it, as Picasso finds them. One member
// when `first` stands alone. InputError naming the missing file for a gap in
// that numbering (_1 and _3 without _2).
SeriesPlan find_series(const std::string& first, std::string_view description, bool micromanager);

// Micro-Manager 2's NDTiff dataset (a folder: NDTiff.index beside <prefix>_NDTiffStack.tif,
// _NDTiffStack_1.tif, ...; version 2 puts them in "Full resolution"): the file its index names
// first, or "" when `directory` holds no index. The files are TIFFs with a page per image in the
// order of the index, which find_series() follows for a file named *NDTiffStack*.
std::string ndtiff_dataset_file(const std::string& directory);

}  // namespace nanoscopy::detail

// Part files of fit2d and smre (--frames A:B --partial part.h5): an ordinary
// HDF5 file (a localization table, or a stack of restored frames) whose root
// attributes say what it is and where its frames came from:
//   format                "nanoscopy fit2d part 1" / "nanoscopy smre part 1"
//   stack                 the stack's file name
//   movie_fingerprint     the whole movie's (frames sampled over the whole stack, see
//                         fingerprint.hpp); a part without it (written before it was
//                         recorded, as "stack_fingerprint" of three frames) is refused
//   parameter_fingerprint the parameters that shape the result
//   stack_frames, begin, end   it holds frames [begin, end) of stack_frames
// plus whatever the tool adds (all text).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nanoscopy/cluster/part_ranges.hpp"
#include "nanoscopy/io/text_attributes.hpp"

namespace nanoscopy {

// The attributes above, followed by `extra`.
TextAttributes part_attributes(const std::string& format, const PartOrigin& origin, const TextAttributes& extra = {});

struct PartFile {
  PartOrigin origin;
  std::map<std::string, std::string> attributes;  // every root attribute, by name
  // A tool's own attribute; InputError naming the file when it is missing or not a number.
  const std::string& text(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
};

// InputError naming `path`: no such file, not HDF5, or not a part of `format`
// (the message says which command writes one: `how`).
PartFile read_part_file(const std::string& path, const std::string& format, const std::string& how);

// The parts a merge was given, read and put in output order (arrange_parts).
struct MergeParts {
  std::vector<PartFile> parts;
  std::vector<PartOrigin> origins;     // parts[i].origin
  std::vector<PartPlacement> order;    // output order
  std::int64_t frames = 0;             // of the merged output
  const PartFile& first() const { return parts[order.front().index]; }
};
MergeParts read_merge_parts(const std::vector<std::string>& paths, const std::string& format, const std::string& how,
                            bool series);

}  // namespace nanoscopy

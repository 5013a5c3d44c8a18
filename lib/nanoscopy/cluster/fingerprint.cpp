#include "nanoscopy/cluster/fingerprint.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {

std::string stack_fingerprint(StackReader& reader) {
  const StackInfo& info = reader.info();
  Fnv f;
  f.add(std::string("whole-movie fingerprint 2"));  // another sampling gives other values: no false match
  f.add(info.frames);
  f.add(info.width);
  f.add(info.height);
  f.add(to_string(info.type));
  std::vector<unsigned char> frame(static_cast<std::size_t>(info.bytes_per_frame()));
  const std::int64_t samples = std::min<std::int64_t>(info.frames, kFingerprintFrames);
  for (std::int64_t s = 0; s < samples; ++s) {
    // Evenly over the whole stack, first and last included; whatever frames the part itself holds.
    const std::int64_t k = samples == 1 ? 0 : (s * (info.frames - 1) + (samples - 1) / 2) / (samples - 1);
    f.add(k);
    reader.read_raw(k, 1, frame.data());
    f.add(frame.data(), frame.size());
  }
  return f.hex();
}

std::string file_fingerprint(const std::string& path) {
  if (path.empty()) return "none";
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  Fnv f;
  f.add(text.str());
  return f.hex();
}

}  // namespace nanoscopy

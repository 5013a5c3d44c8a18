// Internal: small helpers over the HDF5 C API shared by the HDF5 stack reader,
// image writer and table writer. Not a public header: it pulls in <hdf5.h>,
// which only nanoscopy_core's own sources can see.
#pragma once

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

namespace nanoscopy::detail::h5 {

// Turns off HDF5's automatic printing of its error stack to stderr; failures
// are reported through our exceptions instead. Cheap; called at every entry
// point (the setting is per thread in thread-safe HDF5 builds).
void silence_errors();

// The description of the innermost error on this thread's HDF5 error stack
// (e.g. "file signature not found"), or "" when there is none. Must be called
// right after the failing call: every HDF5 API call clears the stack.
std::string last_error();

// Owns one HDF5 identifier (file, group, dataset, dataspace, datatype, property
// list, attribute) and closes it with the matching H5?close. Non-copyable, movable.
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Id() { reset(); }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; false if the close failed (for a file: the final flush failed).
  bool close() noexcept {
    if (id_ < 0) return true;
    const herr_t status = closer_ ? closer_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  void reset() noexcept { close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Id file(hid_t id) {
  return Id(id, H5Fclose);
}
inline Id group(hid_t id) {
  return Id(id, H5Gclose);
}
inline Id dataset(hid_t id) {
  return Id(id, H5Dclose);
}
inline Id space(hid_t id) {
  return Id(id, H5Sclose);
}
inline Id type(hid_t id) {
  return Id(id, H5Tclose);
}
inline Id plist(hid_t id) {
  return Id(id, H5Pclose);
}
inline Id attribute(hid_t id) {
  return Id(id, H5Aclose);
}
inline Id object(hid_t id) {
  return Id(id, H5Oclose);
}

// A numpy-style name for an HDF5 datatype, for messages: "uint16", "int64",
// "float16", "string", "compound", "enum" ...
std::string describe_type(hid_t type);

// "3-D uint16 100x32x32" for a dataset (for listings and messages).
std::string describe_dataset(hid_t dataset);

// Writes a scalar attribute on `object`; false on failure.
bool write_attribute(hid_t object, const char* name, double value);
bool write_attribute(hid_t object, const char* name, const std::string& value);  // variable-length UTF-8
// Each pair as a string attribute; false on the first failure.
bool write_attributes(hid_t object, const std::vector<std::pair<std::string, std::string>>& attributes);

// The run this file belongs to (core/run_files.hpp), as the root attributes
// nanoscopy_run_generation and nanoscopy_run_manifest; nothing outside a run. False on failure.
bool write_run_attributes(hid_t file);

// False when `dataset` holds fewer bytes than its shape and type declare, beyond
// what compression (deflate: ~1000:1) could explain: a damaged file, or one that
// only declares a size, whose reading would make up fill values. Readers that
// allocate the whole dataset ask this first.
bool stores_its_data(hid_t dataset);

// File-access properties for reading: file locks are kept, but a file system
// without lock support (some NFS and Lustre mounts) no longer makes every open
// fail with "unable to lock file".
Id read_access_plist();

// A link-creation property list that creates missing intermediate groups
// (for dataset names such as "entry/data/data").
Id intermediate_group_lcpl();

}  // namespace nanoscopy::detail::h5

// Internal: one opener per format, chosen by open_stack().
#pragma once

#include <memory>
#include <string>

#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy::detail {

// Classic TIFF, BigTIFF, ImageJ hyperstacks (> 4 GB, one IFD, `images=`), OME-TIFF;
// a file of a Micro-Manager series (micromanager_series.hpp) reads the whole series.
std::unique_ptr<StackReader> open_tiff(const std::string& path);
// `dataset` empty: auto-detect among the common names.
std::unique_ptr<StackReader> open_hdf5(const std::string& path, const std::string& dataset);
// Picasso .raw movie with its .yaml beside it.
std::unique_ptr<StackReader> open_picasso_raw(const std::string& path);
// One PNG image (grey; colour is converted to grey) as a one-frame stack.
std::unique_ptr<StackReader> open_png(const std::string& path);

}  // namespace nanoscopy::detail

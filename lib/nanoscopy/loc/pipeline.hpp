// fit2d's pipeline: stream frames → find candidates → cut ROIs → fit on the
// chosen device → photons, precision, filter → write. A reader thread fills the
// next chunk while the current one is detected and fitted, so the device does
// not wait for the disk when the disk can keep up. Memory: a few chunks.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "nanoscopy/core/camera.hpp"
#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/fit/fit_types.hpp"
#include "nanoscopy/io/stack_reader.hpp"
#include "nanoscopy/loc/localize_engine.hpp"
#include "nanoscopy/loc/convert.hpp"
#include "nanoscopy/loc/detect/detect.hpp"
#include "nanoscopy/loc/localization.hpp"
#include "nanoscopy/loc/regions.hpp"

namespace nanoscopy {

struct PipelineSettings {
  DetectSettings detect;
  FitSettings fit;
  Camera camera;
  LocFilter filter;
  double recenter_px = 0;            // LocalizeSettings::recenter_px (loc/recenter.hpp); 0: off
  double duplicate_distance_px = 0;  // remove_duplicates (loc/duplicates.hpp) after the filter; 0: off
  std::vector<Region> regions;  // only spots detected inside these (empty: everywhere)
  std::shared_ptr<const CameraMaps> camera_maps;  // sCMOS maps for wlsq/mle (LocalizeSettings), or null
  std::int64_t chunk_frames = 256;
  int read_threads = 0;  // readers decoding each chunk (FrameSourceOptions::read_threads; 0: auto)
  bool quiet = false;
};

struct PipelineSummary {
  std::int64_t frames = 0;
  std::int64_t candidates = 0;     // detected, those outside the regions (never fitted) included
  std::int64_t localizations = 0;  // accepted by the filter (handed to the sink)
  std::int64_t rejected = 0;       // fitted but filtered out (duplicates included)
  double median_precision_nm = 0;
  double seconds = 0;              // wall time of the whole run
  double read_seconds = 0;         // time the reader thread spent reading (decode + convert)
  std::string device;
};

// Accepted localizations of one chunk, in frame order.
using LocalizationSink = std::function<void(std::span<const Localization>)>;

// Engines per GPU (make_localize_engines) for a pipeline with these settings: two, so
// that one uploads its chunk while the other detects and fits, where at least 8
// threads read (settings.read_threads, auto included); one otherwise. H100 host,
// 100k frames of 256², end to end (frames/s): 8 read threads, one engine 1.16e5,
// two 1.42e5; 4 read threads, one 1.09e5, two 9.7e4 (reading is then the limit, and
// the second engine's uploads slow it).
int localize_engines_per_gpu(const PipelineSettings& settings);

// `localizers` are the detect-cut-fit engines the caller built (make_localize_engines,
// with settings.detect and settings.fit; localize_engines_per_gpu per GPU of --device cuda:all): the
// pipeline never picks a device itself. Chunks go to whichever engine is free
// (loc/localize_dispatch.hpp) and reach the sink in frame order, so the output
// is the same with one engine or several.
PipelineSummary run_localization(StackReader& reader, FrameRange::Resolved range,
                                 std::span<LocalizeEngine* const> localizers, const PipelineSettings& settings,
                                 const LocalizationSink& sink);
PipelineSummary run_localization(StackReader& reader, FrameRange::Resolved range, LocalizeEngine& localizer,
                                 const PipelineSettings& settings, const LocalizationSink& sink);

}  // namespace nanoscopy

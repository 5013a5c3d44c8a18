// `bench compare LOCS TRUTH`: how close localizations are to the simulated
// truth (recall, false positives, Jaccard, RMS error and bias in nm), as the
// SMLM challenge scores them. The README's demo ends with it.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <string>

#include "nanoscopy/sim/truth_match.hpp"

namespace nanoscopy {

struct CompareOptions {
  std::string locs;         // fit2d's CSV or Picasso HDF5 (or any tool's, in either format)
  std::string truth;        // bench simulate movie's <stem>_truth.csv
  double radius_nm = 250;   // the SMLM challenge's lateral tolerance
  double pixel_size_nm = 0; // 0: the Picasso file's own, else any (both CSVs are in nm)
  std::string json;         // optional: the numbers as JSON
};

void add_compare_options(CLI::App& cmd, CompareOptions& options);

struct CompareResult {
  TruthMatch match;
  double pixel_size_nm = 0;  // what px were converted with
  bool three_d = false;      // both files hold z: the depth errors are scored too
};

CompareResult compare_with_truth(const CompareOptions& options);

// Runs the comparison and prints it (and writes the JSON when asked).
void run_compare(const CompareOptions& options, std::ostream& out);

}  // namespace nanoscopy

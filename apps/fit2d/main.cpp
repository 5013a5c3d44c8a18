// fit2d: find fluorescent spots in a camera stack and fit each with a 2D Gaussian.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/tools/schemas.hpp"
#include "nanoscopy/tools/stack_scan.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("fit2d",
              "fit2d: localize single molecules in a camera stack (TIFF/BigTIFF, HDF5 file.h5:/dataset, Picasso .raw)\n"
              "with the implicit-amplitude Gaussian Levenberg-Marquardt fit, on the GPU when there is one.",
              fit2d_schema());
  std::string input;
  app.cli().add_option("stack", input, "Input stack")->type_name("STACK");
  app.bind("--model", "Fit/model");
  app.bind("--max-iterations", "Fit/max iterations");
  app.set_footer(
      "Examples:\n"
      "  fit2d stack.tif                       summary of the stack (frames, size, intensity)\n"
      "  fit2d movie.h5:/data --frames 0:1000  the first 1000 frames of an HDF5 dataset\n"
      "  fit2d --print-params > my.prm         a parameter file to edit, then: fit2d --params my.prm stack.tif");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (input.empty()) throw UsageError("command line", "no input stack given (see fit2d --help)");
    print_scan(std::cout, scan_stack(input, ctx.frames, ctx.params.get_int("Input/chunk frames"), ctx.quiet));
  });
}

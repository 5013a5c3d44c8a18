// sofi: super-resolution optical fluctuation imaging (cumulants) of a blinking stack.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/tools/schemas.hpp"
#include "nanoscopy/tools/stack_scan.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("sofi",
              "sofi: super-resolution optical fluctuation imaging: per-pixel cumulants of a blinking stack\n"
              "(TIFF/BigTIFF, HDF5, Picasso .raw), streamed in blocks, optionally with SMRE before or after.",
              sofi_schema());
  std::string input;
  app.cli().add_option("stack", input, "Input stack")->type_name("STACK");
  app.set_footer("Examples:\n  sofi blinking.tif --frames 0:1000     summary of the frames that would be used");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (input.empty()) throw UsageError("command line", "no input stack given (see sofi --help)");
    print_scan(std::cout, scan_stack(input, ctx.frames, ctx.params.get_int("Input/chunk frames"), ctx.quiet));
  });
}

// smre: statistical multi-resolution estimation (denoising and deconvolution).
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/params/tool_schemas.hpp"
#include "nanoscopy/tools/stack_scan.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  static const Schema schema = smre_schema();
  ToolApp app("smre",
              "smre: statistical multi-resolution estimation: denoise and deconvolve an image or every frame of a\n"
              "stack with ADMM and exact or incomplete (--icd) Dykstra projections. Parameter files follow the\n"
              "SMRE paper's listing (params/smre.prm).",
              schema);
  std::string input;
  app.cli().add_option("image", input, "Input image or stack")->type_name("IMAGE");
  app.set_footer("Examples:\n  smre --print-params > my.prm\n  smre --params params/smre.prm image.tif");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (input.empty()) throw UsageError("command line", "no input image given (see smre --help)");
    print_scan(std::cout, scan_stack(input, ctx.frames, 256, ctx.quiet));
  });
}

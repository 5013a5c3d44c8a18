// frc: image resolution by Fourier ring correlation.
#include <iostream>

#include "nanoscopy/cli/tool_app.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/tools/schemas.hpp"
#include "nanoscopy/tools/stack_scan.hpp"

int main(int argc, char** argv) {
  using namespace nanoscopy;
  ToolApp app("frc",
              "frc: resolution of an image by Fourier ring correlation of two independent images of the sample.",
              frc_schema());
  std::vector<std::string> inputs;
  app.cli().add_option("images", inputs, "Two images (A.tif B.tif), or one stack to split")->type_name("IMAGE");
  app.set_footer("Examples:\n  frc a.tif b.tif");
  return app.run(argc, argv, [&](ToolContext& ctx) {
    if (inputs.empty()) throw UsageError("command line", "no input image given (see frc --help)");
    for (const auto& input : inputs) print_scan(std::cout, scan_stack(input, ctx.frames, ctx.params.get_int("Input/chunk frames"), ctx.quiet));
  });
}

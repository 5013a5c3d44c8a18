// The command-line frame every tool shares: --help, --version, --params FILE,
// --print-params [prm|json], --device, --frames, --quiet; parameter precedence
// default < file < option; one error line and a distinct exit code on failure.
// A tool's main only declares options and calls run() with the work.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "nanoscopy/core/device.hpp"
#include "nanoscopy/core/frame_range.hpp"
#include "nanoscopy/params/params.hpp"

namespace nanoscopy {

// What a tool's body receives.
struct ToolContext {
  const Params& params;
  Device device;
  FrameRange frames;  // --frames (whole stack when not given)
  bool quiet = false;
};

class ToolApp {
 public:
  // `schema` must outlive the app.
  ToolApp(std::string tool, std::string description, const Schema& schema);

  CLI::App& cli() { return app_; }

  // An option whose value overrides parameter `path` (help text defaults to the
  // parameter's doc and shows its default).
  CLI::Option* bind(const std::string& flags, const std::string& path, const std::string& help = "");
  // The same on a subcommand (fit2d undrift --segment and fit2d --undrift-segment set one parameter).
  CLI::Option* bind(CLI::App* subcommand, const std::string& flags, const std::string& path,
                    const std::string& help = "");
  // A flag that sets boolean parameter `path` to true.
  // A flag that sets the boolean parameter `path` to `value` ("true", or "false" for
  // the flag that turns a default on off).
  CLI::Option* bind_flag(const std::string& flags, const std::string& path, const std::string& help = "",
                         const std::string& value = "true");
  // The same on a subcommand (sofi esrrf --error-map).
  CLI::Option* bind_flag(CLI::App* subcommand, const std::string& flags, const std::string& path,
                         const std::string& help = "", const std::string& value = "true");

  // Text appended to --help (examples, exit codes).
  void set_footer(const std::string& text);

  // Parses, handles --help/--version/--print-params, loads and validates the
  // parameters, selects the device, then runs `body`. Returns the exit code.
  int run(int argc, char** argv, const std::function<void(ToolContext&)>& body);

  // Whether the tool uses frames/devices (bench, frc on images may not).
  void without_frames() { uses_frames_ = false; }

  // The tool writes scratch files and reads them back in one run (bench): its outputs are renamed
  // into place as each is finished, not together at the end (core/run_files.hpp).
  void outputs_one_by_one() { one_set_ = false; }

  // `TOOL frames STACK`: prints the stack's frame count (for job scripts) and exits.
  void add_frames_command();

 private:
  struct Binding {
    CLI::Option* option;
    std::string path;
    std::string value;  // filled by CLI11; a flag's value when given
    bool is_flag;
  };

  std::string tool_;
  const Schema& schema_;
  CLI::App app_;
  std::vector<std::unique_ptr<Binding>> bindings_;
  std::string params_file_;
  std::string print_params_;
  std::string device_ = "auto";
  std::string frames_;
  bool quiet_ = false;
  bool uses_frames_ = true;
  bool one_set_ = true;
  CLI::App* frames_command_ = nullptr;
  std::string frames_stack_;
};

// "<tool> (nanoscopy) 0.1.0, commit abc123, CUDA backend: yes"
std::string version_line(const std::string& tool);

// The footer that documents exit codes, shared by every tool's --help.
std::string exit_code_help();

}  // namespace nanoscopy

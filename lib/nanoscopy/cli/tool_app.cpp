#include "nanoscopy/cli/tool_app.hpp"

#include <cstdio>
#include <iostream>
#include <new>

#include "nanoscopy/backend/registry.hpp"
#include "nanoscopy/commit.hpp"
#include "nanoscopy/config.hpp"
#include "nanoscopy/core/atomic_file.hpp"
#include "nanoscopy/core/clip_text.hpp"
#include "nanoscopy/core/error.hpp"
#include "nanoscopy/core/progress.hpp"
#include "nanoscopy/core/run_files.hpp"
#include "nanoscopy/io/stack_reader.hpp"

namespace nanoscopy {
namespace {

// Errors are one line, whatever a library put into the message, and of bounded length (clip_line,
// clip_text.hpp): a huge value quoted somewhere never floods the terminal.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return clip_line(text);
}

}  // namespace

std::string version_line(const std::string& tool) {
  return tool + " (nanoscopy) " NANOSCOPY_VERSION ", commit " NANOSCOPY_GIT_COMMIT ", CUDA backend: " +
         std::string(NANOSCOPY_HAVE_CUDA ? "yes (" NANOSCOPY_CUDA_ARCHITECTURES ")" : "no");
}

std::string exit_code_help() {
  return "Exit codes: 0 success, 1 other failure, 2 usage or parameter error, 3 bad input,\n"
         "4 output cannot be written (or another run is writing it), 5 GPU error, 129/130/143 interrupted\n"
         "(SIGHUP/SIGINT/SIGTERM; temporary outputs removed, earlier outputs kept). An output that is the same file\n"
         "as an input or as another output is refused (2) before any work.\n"
         "Errors are one line: <tool>: error: <where>: <what>.";
}

ToolApp::ToolApp(std::string tool, std::string description, const Schema& schema)
    : tool_(std::move(tool)), schema_(schema), app_(std::move(description), tool_) {
  app_.set_version_flag("--version", version_line(tool_));
  app_.add_option("--params", params_file_, "Parameter file (deal.II .prm or .json); options given here override it")
      ->type_name("FILE");
  app_.add_option("--print-params", print_params_,
                  "Print every parameter with its default and doc (prm or json), usable as a starting file, and exit")
      ->type_name("prm|json")
      ->expected(0, 1)
      ->default_str("prm");
  app_.add_option("--device", device_, "Where to compute: auto (GPU if present), cpu, cuda, cuda:N or cuda:all")
      ->type_name("DEV")
      ->default_str("auto");
  app_.add_flag("-q,--quiet", quiet_, "No progress display or notes on stderr");
  app_.get_formatter()->column_width(34);
  app_.fallthrough();  // common options may follow a subcommand (bench fit2d -q)
}

void ToolApp::set_footer(const std::string& text) { app_.footer(text + "\n\n" + exit_code_help()); }

CLI::Option* ToolApp::bind(const std::string& flags, const std::string& path, const std::string& help) {
  return bind(&app_, flags, path, help);
}

CLI::Option* ToolApp::bind(CLI::App* subcommand, const std::string& flags, const std::string& path,
                           const std::string& help) {
  const ParamSpec* spec = schema_.find(path);
  if (!spec) throw std::logic_error("option " + flags + " bound to unknown parameter " + path);
  auto binding = std::make_unique<Binding>();
  binding->path = path;
  binding->is_flag = false;
  std::string text = help.empty() ? spec->doc : help;
  text += " [param '" + path + "']";
  binding->option = subcommand->add_option(flags, binding->value, text)->default_str(spec->default_value);
  auto* option = binding->option;
  bindings_.push_back(std::move(binding));
  return option;
}

CLI::Option* ToolApp::bind_flag(const std::string& flags, const std::string& path, const std::string& help,
                                const std::string& value) {
  return bind_flag(&app_, flags, path, help, value);
}

CLI::Option* ToolApp::bind_flag(CLI::App* subcommand, const std::string& flags, const std::string& path,
                                const std::string& help, const std::string& value) {
  const ParamSpec* spec = schema_.find(path);
  if (!spec || spec->type != ParamType::boolean)
    throw std::logic_error("flag " + flags + " bound to a parameter that is not boolean: " + path);
  auto binding = std::make_unique<Binding>();
  binding->path = path;
  binding->is_flag = true;
  binding->value = value;
  binding->option = subcommand->add_flag(flags)->description((help.empty() ? spec->doc : help) + " [param '" + path + "']");
  auto* option = binding->option;
  bindings_.push_back(std::move(binding));
  return option;
}

void ToolApp::add_frames_command() {
  frames_command_ = app_.add_subcommand("frames", "Print the number of frames of a stack (for job scripts)");
  frames_command_->add_option("stack", frames_stack_, "Input stack")->required()->type_name("STACK");
}

int ToolApp::run(int argc, char** argv, const std::function<void(ToolContext&)>& body) {
  install_interrupt_cleanup(tool_);  // SIGINT/SIGTERM/SIGHUP: remove temporary outputs, exit 130/143/129
  if (uses_frames_)
    app_.add_option("--frames", frames_, "Frames A:B to process (end exclusive, negative from the end), e.g. 0:1000")
        ->type_name("A:B");
  if (app_.get_footer().empty()) set_footer("");
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: command line: %s (see %s --help)\n", tool_.c_str(), one_line(e.what()).c_str(), tool_.c_str());
    return exit_code(ErrorKind::usage);
  }

  try {
    // What the run reads and writes, its locks, and its outputs renamed into place together.
    RunFiles run(tool_, one_set_);
    set_quiet(quiet_);
    if (frames_command_ && *frames_command_) {
      std::cout << open_stack(frames_stack_)->info().frames << "\n";
      return 0;
    }
    if (app_.count("--print-params") > 0 && !print_params_.empty() && print_params_ != "prm" && print_params_ != "json")
      throw UsageError("--print-params", "format must be prm or json, not '" + print_params_ + "'");
    Params params = params_file_.empty() ? schema_.defaults() : schema_.resolve(load_param_file(params_file_));
    for (const auto& b : bindings_) {
      if (b->option->count() == 0) continue;
      const std::string& value = b->value;
      params.set(b->path, value, ParamSource{"command line " + b->option->get_name(), 0});
    }
    if (app_.count("--print-params") > 0) {
      // Without --params or options this is every default; with them, the values in effect.
      params.print(std::cout, print_params_.empty() ? "prm" : print_params_);
      return 0;
    }
    ToolContext context{params, select_device(DeviceRequest::parse(device_), quiet_),
                        frames_.empty() ? FrameRange{} : FrameRange::parse(frames_), quiet_};
    body(context);
    run.commit();
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool_.c_str(), one_line(e.message()).c_str());
    return exit_code(e.kind());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", tool_.c_str());
    return exit_code(ErrorKind::other);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool_.c_str(), one_line(e.what()).c_str());
    return exit_code(ErrorKind::other);
  }
}

}  // namespace nanoscopy

// tts-train convert: another framework's files in (--from FORMAT FILE [--do F] [--hparams H]
// [--config C] --out OUT.pt) and out (--to FORMAT CHECKPOINT --out PATH). Each family registers
// the formats it converts (models/roles.h: Converter); this command parses, checks what every
// conversion shares (an export's checkpoint is of the converter's family and takes nothing but
// the checkpoint), writes an import's checkpoint, and dispatches.
#include <filesystem>
#include <string>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace {

namespace fs = std::filesystem;

struct ConvertArgs {
  std::string from, to, input, out;
  std::string companion, hparams;
  ConfigArgs config;
};

std::string replace_out(std::string message, const std::string& out) {
  const std::string mark = "{out}";
  for (size_t at = message.find(mark); at != std::string::npos; at = message.find(mark, at)) {
    message.replace(at, mark.size(), out);
    at += out.size();
  }
  return message;
}

int import_file(const ConvertArgs& args) {
  const models::Converter& converter = models::converter(args.from);
  TTS_USAGE_CHECK(args.companion.empty() || converter.takes_companion,
                  "--do is not a file of --from {}", args.from);
  TTS_USAGE_CHECK(args.hparams.empty() || converter.takes_hparams,
                  "--hparams is not a file of --from {}", args.from);
  models::ConvertRequest request;
  request.input = args.input;
  request.out = args.out;
  request.companion = args.companion;
  request.hparams = args.hparams;
  if (!args.config.path.empty() || !args.config.overrides.empty()) {
    request.config = args.config.load();
    request.config_path = args.config.path;
  }
  models::Imported imported = converter.import_file(request);
  checkpoint::write_checkpoint(args.out, imported.checkpoint);
  log::get("convert")->info("{}", replace_out(imported.message, args.out));
  return 0;
}

int export_file(const ConvertArgs& args) {
  const models::Converter& converter = models::converter(args.to);
  TTS_USAGE_CHECK(args.config.path.empty() && args.config.overrides.empty() &&
                      args.companion.empty() && args.hparams.empty(),
                  "convert --to {} takes everything from the checkpoint; drop "
                  "--config/--set/--do/--hparams",
                  args.to);
  models::TrainedCheckpoint trained =
      models::read_trained(args.input, checkpoint::CheckpointRead::kWhole);
  const config::ModelKind kind = trained.config.model.kind;
  std::vector<std::string> formats;
  bool converts = false;
  for (const auto& [format, family] : models::converter_formats()) {
    if (family != kind) continue;
    formats.push_back(format);
    converts = converts || format == args.to;
  }
  TTS_USAGE_CHECK(converts, "{} is a model.kind {} checkpoint, which --to {} does not export{}",
                  trained.source, kind, args.to,
                  formats.empty()
                      ? std::string(" (no format takes it)")
                      : fmt::format(" (--to {} does)", fmt::join(formats, " or --to ")));
  // A folder named like a file (jik.pt/) is not what anyone asked for.
  std::error_code ec;
  TTS_USAGE_CHECK(!converter.exports_folder || fs::is_directory(args.out, ec) ||
                      fs::path(args.out).extension().empty(),
                  "convert --to {} writes a folder ({}), and --out {} names a file; give a folder "
                  "name without an extension (e.g. --out {}), nothing was written",
                  args.to, converter.export_help, args.out,
                  fs::path(args.out).replace_extension("").string() + "/");
  const std::string message = converter.export_file(trained, args.out);
  if (!message.empty()) log::get("convert")->info("{}", message);
  return 0;
}

Runner setup_convert(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  std::vector<std::string> names;
  std::vector<std::string> reads, writes, companions, hparams;
  for (const auto& [format, kind] : models::converter_formats()) {
    const models::Converter& converter = models::converter(format);
    names.push_back(format);
    reads.push_back(fmt::format("{}: {}", format, converter.import_help));
    writes.push_back(fmt::format("{}: {}", format, converter.export_help));
    if (converter.takes_companion) companions.push_back(format);
    if (converter.takes_hparams) hparams.push_back(format);
  }
  auto* from =
      app.add_option("--from", args->from,
                     fmt::format("import: the input's format ({})", fmt::join(reads, "; ")))
          ->check(CLI::IsMember(names));
  auto* to =
      app.add_option("--to", args->to,
                     fmt::format("export: the output's format ({})", fmt::join(writes, "; ")))
          ->check(CLI::IsMember(names));
  from->excludes(to);
  app.add_option("input", args->input,
                 "import: the other framework's file; export: our checkpoint (file, "
                 "RUN/checkpoints/latest or run directory)")
      ->required();
  app.add_option("--out", args->out,
                 "the file to write (an export to a format of several files: the folder)")
      ->required();
  app.add_option(
      "--do", args->companion,
      fmt::format("--from {}: the format's second file (see --from)", fmt::join(companions, "/")));
  app.add_option("--hparams", args->hparams,
                 fmt::format("--from {}: the format's hyperparameters file (see --from)",
                             fmt::join(hparams, "/")));
  args->config.add_to(app, false);
  return [args, names]() {
    TTS_USAGE_CHECK(!args->from.empty() || !args->to.empty(),
                    "convert: say the direction: --from FORMAT FILE --out OUT.pt (import) or --to "
                    "FORMAT CHECKPOINT --out PATH (export), FORMAT one of {} (--from {} FILE ...: "
                    "tts-train convert --help says what each takes)",
                    fmt::join(names, ", "), fmt::join(names, " FILE ..., --from "));
    return args->from.empty() ? export_file(*args) : import_file(*args);
  };
}

}  // namespace

TTS_REGISTER_COMMAND("convert",
                     "import other frameworks' checkpoints (--from FORMAT) or export ours to "
                     "their formats (--to FORMAT)",
                     65, setup_convert);

}  // namespace tts::cli

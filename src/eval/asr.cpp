#include "tts/eval/asr.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/printable.h"

namespace tts::eval {
namespace {

// One line per file on stdout; a missing package ends with a message on stderr and status 3.
constexpr const char* kPocketsphinxProgram = R"(import sys, wave
try:
    from pocketsphinx import Decoder
except ImportError as error:
    sys.stderr.write("pocketsphinx is not installed for %s (%s)\n" % (sys.executable, error))
    sys.exit(3)
decoder = Decoder(samprate=16000, loglevel="FATAL")
for path in sys.argv[1:]:
    with wave.open(path, "rb") as clip:
        data = clip.readframes(clip.getnframes())
    decoder.start_utt()
    decoder.process_raw(data, full_utt=True)
    decoder.end_utt()
    hypothesis = decoder.hyp()
    text = hypothesis.hypstr if hypothesis is not None else ""
    print(" ".join(text.split()), flush=True)
)";

constexpr size_t kBatch = 200;
constexpr size_t kMaxOutputBytes = size_t{4} << 20;

std::vector<std::string> run_batch(const std::string& python, const std::vector<std::string>& paths,
                                   const std::string& work_folder) {
  const std::string errors = work_folder + "/asr.err";
  int out[2];
  // Close-on-exec: a process another thread forks meanwhile (the phonemizer's worker) must not
  // hold the write end, or the read below would never see the end of the output. dup2 gives the
  // child's stdout without the flag.
  TTS_CHECK(::pipe2(out, O_CLOEXEC) == 0, "asr: pipe() failed: {}", std::strerror(errno));
  const pid_t pid = ::fork();
  TTS_CHECK(pid >= 0, "asr: fork() failed: {}", std::strerror(errno));
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    const int err = ::open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(python.c_str()), const_cast<char*>("-c"),
                            const_cast<char*>(kPocketsphinxProgram)};
    for (const auto& path : paths) argv.push_back(const_cast<char*>(path.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const std::string message = "cannot run " + python + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string output;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (output.size() < kMaxOutputBytes) output.append(buffer, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string stderr_text;
  try {
    stderr_text = read_file(errors);
  } catch (const Error&) {
  }
  std::error_code ec;
  std::filesystem::remove(errors, ec);
  while (!stderr_text.empty() && (stderr_text.back() == '\n' || stderr_text.back() == '\r')) {
    stderr_text.pop_back();
  }
  if (stderr_text.size() > 2000)
    stderr_text = "..." + stderr_text.substr(stderr_text.size() - 2000);
  TTS_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "--asr pocketsphinx: {} {} ({}); expected a Python with the pocketsphinx package: "
            "`{} -m pip install pocketsphinx`, or name another with --asr-python",
            printable(python),
            WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                              : "was killed by signal " + std::to_string(WTERMSIG(status)),
            printable(stderr_text.empty() ? "no message" : stderr_text), printable(python));
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    lines.push_back(output.substr(start, end - start));
    start = end + 1;
  }
  TTS_CHECK(lines.size() == paths.size(),
            "--asr pocketsphinx: expected {} transcripts (one line per clip), found {}",
            paths.size(), lines.size());
  return lines;
}

}  // namespace

std::vector<std::string> asr_names() { return {"pocketsphinx"}; }

std::vector<std::string> transcribe_pocketsphinx(const std::string& python,
                                                 const std::vector<std::string>& wav_paths,
                                                 const std::string& work_folder) {
  std::vector<std::string> transcripts;
  for (size_t start = 0; start < wav_paths.size(); start += kBatch) {
    const std::vector<std::string> batch(
        wav_paths.begin() + static_cast<ptrdiff_t>(start),
        wav_paths.begin() + static_cast<ptrdiff_t>(std::min(wav_paths.size(), start + kBatch)));
    for (auto& line : run_batch(python, batch, work_folder)) transcripts.push_back(std::move(line));
  }
  return transcripts;
}

}  // namespace tts::eval

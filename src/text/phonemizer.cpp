#include "tts/text/phonemizer.h"

#include <espeak-ng/speak_lib.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "tts/core/error.h"
#include "tts/core/printable.h"

namespace tts::text {
namespace {

// espeak-ng's global state: one lock for every call, the voice it was last given.
std::mutex& engine_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& current_voice() {
  static std::string voice;
  return voice;
}

// Starts the engine once per process (no audio: phonemes only). Call with the lock held.
void start_engine() {
  static bool started = false;
  if (started) return;
  const int rate =
      espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr, espeakINITIALIZE_DONT_EXIT);
  TTS_CHECK(rate > 0,
            "espeak-ng could not start (its voice data was not found): install espeak-ng-data, "
            "or set ESPEAK_DATA_PATH to the folder that holds espeak-ng-data");
  started = true;
}

// Selects `language`, throwing when espeak-ng has no such voice. Call with the lock held.
void select_voice(const std::string& language) {
  start_engine();
  if (current_voice() == language) return;
  TTS_USAGE_CHECK(espeak_SetVoiceByName(language.c_str()) == EE_OK,
                  "text.language {}: espeak-ng has no such voice; `espeak-ng --voices` lists "
                  "them (en-us, en-gb, de, es, fr, ...)",
                  language);
  current_voice() = language;
}

bool is_clause_punctuation(char c) { return c != 0 && std::strchr(",;:.!?", c) != nullptr; }

// A run of words and the punctuation that ends it ("" at the end of the text).
struct Piece {
  std::string words;
  std::string punctuation;
};

// `text` cut after every run of , ; : . ! ? that a space or the end follows, and at a dash
// between spaces: the marks the model sees as symbols, each after the words it closes.
std::vector<Piece> split_at_punctuation(const std::string& text) {
  std::vector<Piece> pieces(1);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool spaced_dash =
        c == '-' && (i == 0 || text[i - 1] == ' ') && (i + 1 == text.size() || text[i + 1] == ' ');
    if (!is_clause_punctuation(c) && !spaced_dash) {
      pieces.back().words += c;
      continue;
    }
    size_t end = i;
    while (end < text.size() && (is_clause_punctuation(text[end]) || text[end] == '-')) ++end;
    if (end < text.size() && text[end] != ' ' && text[end] != '"' && text[end] != ')') {
      pieces.back().words += c;  // inside a word or a number: "3.5", "e.g"
      continue;
    }
    pieces.back().punctuation = text.substr(i, end - i);
    pieces.emplace_back();
    i = end - 1;
  }
  return pieces;
}

// `ipa` without espeak-ng's language-switch marks: "(en)", "(de)", "(pt-pt)".
std::string without_language_marks(const std::string& ipa) {
  std::string out;
  size_t i = 0;
  while (i < ipa.size()) {
    if (ipa[i] == '(') {
      size_t close = ipa.find(')', i);
      if (close != std::string::npos && close - i <= 12) {
        i = close + 1;
        continue;
      }
    }
    out += ipa[i++];
  }
  return out;
}

// espeak-ng's IPA of each clause of `text`, in this process. Call with the lock held.
std::vector<std::string> translate_here(const std::string& language, const std::string& text) {
  select_voice(language);
  std::vector<std::string> clauses;
  const void* position = text.c_str();
  while (position != nullptr) {
    const char* ipa = espeak_TextToPhonemes(&position, espeakCHARS_UTF8, 0x02);
    clauses.emplace_back(ipa != nullptr ? ipa : "");
  }
  return clauses;
}

// --- the worker process: Note [espeak-ng crashes] ---

// A text longer than any utterance is refused before it reaches espeak-ng.
constexpr size_t kMaxTextBytes = size_t{1} << 20;
// A text espeak-ng takes longer than this over is treated as a crash (a loop inside it).
constexpr int kTimeoutMs = 60000;

bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads `size` bytes; false at the end of the stream, on an error or after `timeout_ms` (-1:
// none) without data.
bool receive_all(int fd, void* data, size_t size, int timeout_ms) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd poll_fd{fd, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool send_text(int fd, const std::string& text) {
  const auto size = static_cast<uint64_t>(text.size());
  return send_all(fd, &size, sizeof(size)) && send_all(fd, text.data(), text.size());
}

bool receive_text(int fd, std::string& text, int timeout_ms) {
  uint64_t size = 0;
  if (!receive_all(fd, &size, sizeof(size), timeout_ms) || size > kMaxTextBytes * 8) return false;
  text.resize(static_cast<size_t>(size));
  return receive_all(fd, text.data(), text.size(), timeout_ms);
}

// The child's loop: (language, text) in, a status, a message or the clauses out, until the
// parent closes its end (or dies: the socket closes with it). A text the child is still on
// after the parent's timeout ends it by an alarm, so a child whose parent died mid-text does
// not linger.
[[noreturn]] void serve(int fd) {
  while (true) {
    std::string language, text;
    if (!receive_text(fd, language, -1) || !receive_text(fd, text, -1)) ::_exit(0);
    std::vector<std::string> clauses;
    std::string failure;
    ::alarm(static_cast<unsigned>(kTimeoutMs / 1000 + 1));
    try {
      clauses = translate_here(language, text);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    ::alarm(0);
    const uint64_t count = failure.empty() ? clauses.size() : 0;
    bool sent = send_text(fd, failure) && send_all(fd, &count, sizeof(count));
    for (const std::string& clause : clauses) sent = sent && send_text(fd, clause);
    if (!sent) ::_exit(0);
  }
}

// The child process that runs espeak-ng, started on first use and again after it died.
class Worker {
 public:
  ~Worker() { stop(); }

  std::vector<std::string> translate(const std::string& language, const std::string& text) {
    if (pid_ < 0) start();
    std::string failure;
    uint64_t count = 0;
    std::vector<std::string> clauses;
    bool ok = send_text(fd_, language) && send_text(fd_, text) &&
              receive_text(fd_, failure, kTimeoutMs) &&
              receive_all(fd_, &count, sizeof(count), kTimeoutMs) && count <= text.size() + 1;
    for (uint64_t i = 0; ok && i < count; ++i) {
      ok = receive_text(fd_, clauses.emplace_back(), kTimeoutMs);
    }
    if (!ok) {
      const std::string how = stop();
      throw Error(fmt::format(
          "espeak-ng {} while phonemizing \"{}\" ({} bytes): a fault inside libespeak-ng (its "
          "version 1.51 overflows a stack buffer on some texts); this text is skipped, the "
          "phonemizer restarts for the next",
          how, printable(text.substr(0, 200)), text.size()));
    }
    if (!failure.empty()) throw UsageError(failure);
    return clauses;
  }

 private:
  void start() {
    int fds[2];
    TTS_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0,
              "cannot start the espeak-ng worker: socketpair: {}", std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int error = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      throw Error(fmt::format("cannot start the espeak-ng worker: fork: {}", std::strerror(error)));
    }
    if (pid == 0) {
      // Not PR_SET_PDEATHSIG: it fires when the *thread* that forked exits, and the thread
      // that restarts the worker after a crash may be a preprocess worker that finishes first,
      // killing the child under the texts of the threads still running.
      ::close(fds[0]);
      ::signal(SIGALRM, SIG_DFL);  // the alarm ends it, whatever the parent's thread had set
      sigset_t alarm;
      sigemptyset(&alarm);
      sigaddset(&alarm, SIGALRM);
      ::sigprocmask(SIG_UNBLOCK, &alarm, nullptr);
      serve(fds[1]);
    }
    ::close(fds[1]);
    pid_ = pid;
    fd_ = fds[0];
  }

  // Ends the child (it may be dead already) and says how it ended.
  std::string stop() {
    if (pid_ < 0) return "stopped";
    ::close(fd_);
    int status = 0;
    pid_t waited = ::waitpid(pid_, &status, WNOHANG);
    if (waited == 0) {  // alive: hung, or done and waiting for the next text
      ::kill(pid_, SIGKILL);
      waited = ::waitpid(pid_, &status, 0);
    }
    const pid_t pid = pid_;
    pid_ = -1;
    fd_ = -1;
    if (waited != pid) return "stopped";
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
      return fmt::format("crashed ({})", strsignal(WTERMSIG(status)));
    }
    if (WIFSIGNALED(status)) return fmt::format("took more than {} s", kTimeoutMs / 1000);
    return fmt::format("stopped (exit status {})", WEXITSTATUS(status));
  }

  pid_t pid_ = -1;
  int fd_ = -1;
};

// espeak-ng's IPA of each clause of `text`, from the worker.
std::vector<std::string> translate(const std::string& language, const std::string& text) {
  TTS_CHECK(text.size() <= kMaxTextBytes,
            "a text of {} bytes for espeak-ng, more than {}; no utterance is that long",
            text.size(), kMaxTextBytes);
  static Worker worker;
  std::lock_guard<std::mutex> lock(engine_mutex());
  return worker.translate(language, text);
}

}  // namespace

// Note [espeak-ng crashes]: libespeak-ng 1.51 (Debian 12's; the fix came with 1.52) aborts with
// a stack buffer overflow on some texts ("s'" repeated 110 times), and any fault inside the
// library would take the whole process with it: a preprocess of thousands of utterances, a
// training run's validation. Phonemes are made in a child process forked on first use, which
// owns the engine; a text that kills it (or keeps it busy past kTimeoutMs) ends in a tts::Error
// naming the text, and the next text starts a new child. The parent checks the voice in process
// (the constructor), so an unknown language is still a usage error at once.
Phonemizer::Phonemizer(const std::string& language) : language_(language) {
  std::lock_guard<std::mutex> lock(engine_mutex());
  select_voice(language_);
}

std::vector<std::string> Phonemizer::clauses(const std::string& text) const {
  return translate(language_, text);
}

std::string Phonemizer::phonemize(const std::string& text) const {
  std::string out;
  bool any_phoneme = false;
  for (const Piece& piece : split_at_punctuation(text)) {
    std::string ipa;
    if (piece.words.find_first_not_of(" \"'()") != std::string::npos) {
      for (const std::string& clause : translate(language_, piece.words)) {
        const std::string bare = without_language_marks(clause);
        const size_t first = bare.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        if (!ipa.empty()) ipa += ' ';
        ipa += bare.substr(first, bare.find_last_not_of(' ') - first + 1);
      }
    }
    any_phoneme = any_phoneme || !ipa.empty();
    if (ipa.empty()) {  // punctuation alone closes what came before
      out += piece.punctuation;
      continue;
    }
    if (!out.empty()) out += ' ';
    out += ipa + piece.punctuation;
  }
  TTS_CHECK(any_phoneme,
            "espeak-ng voice {} made no phonemes of \"{}\" (a script the voice cannot read, or "
            "no words)",
            language_, text);
  return out;
}

std::string Phonemizer::version() {
  std::lock_guard<std::mutex> lock(engine_mutex());
  start_engine();
  const char* data_path = nullptr;
  return fmt::format("espeak-ng {}", espeak_Info(&data_path));
}

}  // namespace tts::text

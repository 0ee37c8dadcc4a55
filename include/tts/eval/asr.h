// Transcripts of clips by an external recognizer, for the CER of `tts-train evaluate --asr`.
// The command line is fixed here: the user's choice is which recognizer (`--asr pocketsphinx`)
// and which Python runs it (`--asr-python`); no file's content is ever run or passed to a shell.
#pragma once

#include <string>
#include <vector>

namespace tts::eval {

// The recognizers `--asr` accepts.
std::vector<std::string> asr_names();

// What pocketsphinx (its Python package, with the bundled en-us model) hears in each of
// `wav_paths` (16 kHz mono 16-bit WAVs), one transcript per file, in order. Runs
// `PYTHON -c PROGRAM WAV...` (the program fixed in asr.cpp) without a shell, in batches.
// Throws tts::Error with the recognizer's own message and the fix (`pip install pocketsphinx` for
// that Python) when it cannot run or fails. The recognizer's messages go to a file in
// `work_folder`, a private folder of the caller's.
std::vector<std::string> transcribe_pocketsphinx(const std::string& python,
                                                 const std::vector<std::string>& wav_paths,
                                                 const std::string& work_folder);

}  // namespace tts::eval

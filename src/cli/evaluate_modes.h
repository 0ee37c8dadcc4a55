// The two ways `tts-train evaluate` finds its clips (docs/evaluate.md): two folders of audio, or
// a checkpoint that speaks a feature store's utterances beside the store's recordings. Either way
// the clips reach one evaluation (evaluate_command.cpp: pairing by id, the figures, the report).
#pragma once

#include <map>
#include <string>

namespace tts::cli {

// What one evaluation compares: id -> file on each side, and what the report adds.
struct EvaluationClips {
  std::map<std::string, std::string> reference;    // id -> audio file
  std::map<std::string, std::string> synthesized;  // id -> audio file
  std::string reference_source;                    // names the side in messages: "--reference x"
  std::string synthesized_source;
  std::map<std::string, std::string> speakers;  // id -> speaker (may be empty)
  std::map<std::string, std::string> texts;     // id -> text, for the CER
  std::string text_source;                      // where the texts came from, for CER errors
};

// The checkpoint mode: `evaluate --checkpoint CKPT --data STORE`.
struct CheckpointEvaluation {
  std::string checkpoint;  // an acoustic model's (a file, RUN/checkpoints/latest or RUN)
  std::string vocoder;     // a vocoder checkpoint; empty: the family's own rendering
  std::string data;        // the feature store
  std::string split = "val";
  int64_t limit = 0;      // the split's first N utterances; 0: all
  int batch = 8;          // sentences decoded together, as synthesize --batch
  std::string reference;  // the corpus's recordings by id; empty: the store's waveforms
  std::string out;        // OUT: OUT/synthesized/ID.wav, OUT/reference/ID.wav
};

// Synthesizes the split's utterances, each in its own speaker's voice, into OUT/synthesized/ID.wav
// (and ID.mel.npy), and finds their references: the store's waveforms written to
// OUT/reference/ID.wav, or `reference`'s clips. Throws UsageError for a checkpoint that does not
// speak, a store made with other settings, a speaker the checkpoint lacks, an empty split, or a
// store without waveforms and no `reference`.
EvaluationClips synthesize_store_clips(const CheckpointEvaluation& args);

}  // namespace tts::cli

// A model family for the trainer's tests (Step, freezing, the CUDA step): the overrides such a
// family does not use, given once. A test family says what it trains (module, optimizers,
// train_step, describe) and inherits the rest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tts/core/error.h"
#include "tts/train/family.h"

namespace tts::test {

class FamilyStub : public tts::train::Family {
 public:
  void set_phase(const tts::data::Phase&) override {}
  tts::train::BatchSource& train_batches() override {
    throw tts::Error("a test family has no batch source: its batches are given to Step::run");
  }
  std::unique_ptr<tts::train::ValidationOutcome> validate(int64_t,
                                                          tts::train::MetricSink*) override {
    return nullptr;
  }
  std::string warm_start(const std::string&, const std::vector<std::string>&) override {
    return "";
  }
};

}  // namespace tts::test

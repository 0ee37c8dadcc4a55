#include "tts/model/precision.h"

#include <ATen/Context.h>

namespace tts::model {

void apply_math_settings(const config::TrainOptions& train) {
  at::globalContext().setAllowTF32CuBLAS(train.tf32);
  at::globalContext().setAllowTF32CuDNN(train.tf32);
}

}  // namespace tts::model

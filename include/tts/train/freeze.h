// train.freeze: parts of a model that do not train (fine-tuning a pretrained model on a new voice
// while its text encoder, say, stays as it was). Applied by the trainer once, right after the
// family is built and before a resumed optimizer state is restored: a frozen parameter gets no
// gradient (requires_grad off, so backward does not compute it) and leaves its optimizer's
// parameter list, which is also what the gradient reducer all-reduces and the clip measures. A
// run that freezes the same parts therefore resumes its own optimizer state exactly.
#pragma once

#include <string>
#include <vector>

namespace tts::train {

class Family;

// Freezes every parameter of `family` whose plain name (Family::module(), as checkpoints and
// `tts-train inspect` name them) is one of `parts` or starts with one followed by a dot:
// "encoder" freezes encoder.* but not encoder_projection.*. Throws tts::UsageError when a part
// matches no parameter (listing the model's top-level parts) or would leave an optimizer with
// nothing to train. Returns the summary to log ("" when `parts` is empty).
std::string freeze_parts(Family& family, const std::vector<std::string>& parts);

}  // namespace tts::train

// What the readers of the vocoder peers' settings files (jik876's config.json, r9y9's
// hparams.json) share.
#pragma once

#include <string>

namespace tts::models {

// A training window of `window` samples that is not a whole number of `hop`-sample frames (the
// peers train such windows: jik876's loader and r9y9's collate cut the mel to whole frames and
// the audio with it) is cut down to whole frames, with a warning naming `file` and `key`. A
// window shorter than one frame is left alone for the config's validation to refuse. The
// generator and its audio do not depend on the window.
void cut_to_whole_frames(int& window, int hop, const std::string& file, const std::string& key);

}  // namespace tts::models

// The names of a run's metrics, in one place: the trainer writes records under them
// (RUN/metrics.jsonl, TensorBoard "<kind>/<name>") and the run report and plots read them.
#pragma once

namespace tts::report::metric {

// Record kinds.
inline constexpr char kTrain[] = "train";
inline constexpr char kVal[] = "val";

// Both kinds.
inline constexpr char kStep[] = "step";
inline constexpr char kLoss[] = "loss";  // the total a family back-propagates (its first)

// "train": progress, optimization and throughput over a log interval.
inline constexpr char kEpoch[] = "epoch";
inline constexpr char kGradNorm[] = "grad_norm";  // first optimizer; others "grad_norm_<name>"
inline constexpr char kLearningRate[] = "lr";     // first optimizer; others "lr_<name>"
inline constexpr char kElapsed[] = "elapsed_s";
inline constexpr char kStepSeconds[] = "step_s";
inline constexpr char kMelFramesPerSecond[] = "mel_frames_per_s";
inline constexpr char kUtterancesPerSecond[] = "utterances_per_s";
// Seconds of each part of a step, means over the ranks (train/reporting.h: StepTimes).
inline constexpr char kDataWait[] = "data_wait_s";
inline constexpr char kForward[] = "forward_s";
inline constexpr char kBackward[] = "backward_s";
inline constexpr char kCommExposed[] = "comm_exposed_s";
inline constexpr char kOptimizer[] = "optimizer_s";
inline constexpr char kRankSpread[] = "rank_spread";  // slowest rank's step / the mean
inline constexpr char kPaddedFramesPerRank[] = "padded_frames_per_rank";
inline constexpr char kPaddedFramesImbalance[] = "padded_frames_imbalance";

// "val" of Tacotron-2: alignment scores, teacher-forced and free-running.
inline constexpr char kDiagonalScore[] = "diagonal_score";
inline constexpr char kFocusRate[] = "focus_rate";
inline constexpr char kInferDiagonalScore[] = "infer_diagonal_score";
inline constexpr char kInferFocusRate[] = "infer_focus_rate";
inline constexpr char kInferStopFired[] = "infer_stop_fired";
inline constexpr char kInferMaxStepsHit[] = "infer_max_steps_hit";
inline constexpr char kInferFrameRatio[] = "infer_frame_ratio";

}  // namespace tts::report::metric

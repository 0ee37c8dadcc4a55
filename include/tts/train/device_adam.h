// Adam and AdamW updates that never read a device value on the host, and a gradient clip that
// leaves the norm on the device: what a training iteration runs without synchronizing, and what
// a captured CUDA graph can replay (a "capturable" Adam: the step count and the bias corrections
// live on the device).
//
// Note [Device Adam]: libtorch's torch::optim::Adam and AdamW stay the store of the optimizer
// state (their AdamParamState: moments and step count, what checkpoints, conversion, warm start
// and freezing read and write), and their options (betas, eps, weight decay, amsgrad). The update
// itself is DeviceAdam::step, with the arithmetic of libtorch's step, operation for operation, so
// that the result is bit-identical on the CPU:
//   grad = grad + weight_decay * p                       (Adam; AdamW: p *= 1 - lr * weight_decay)
//   exp_avg = exp_avg * beta1 + (1 - beta1) * grad
//   exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * grad * grad
//   denom = sqrt(exp_avg_sq) / sqrt(1 - beta2^step) + eps  (amsgrad: the running maximum's sqrt)
//   p = p + (-lr / (1 - beta1^step)) * exp_avg / denom
// The bias corrections are float64 on the device (per parameter, from a float64 step count per
// parameter), cast to the parameter's type where they meet it, as libtorch's double Scalars are.
// The step count held on the device is the truth between read points: write_back() copies it into
// the host states (a host read) before anything reads them (a checkpoint, the end of a run). The
// host states' counts are read once, at the first step: restore a checkpoint into the optimizer
// before that (as training does, before it builds its Step). On CUDA the kernels round as CUDA's
// do (pow, a division by a host Scalar taken as a product by its reciprocal): close to libtorch's
// step there, bit-identical on the CPU (tests/train/test_device_adam.cpp).
//
// A step is always computed; whether it is kept is decided on the device: `allowed` (the caller's
// flag, e.g. a finite gradient norm) and every new weight and moment finite (Note [Non-finite
// updates]). A step not kept leaves the weights, the moments and the step counts exactly as they
// were, and the returned flag says so; nothing is read on the host.
//
// Note [Non-finite updates]: an update with a finite gradient can still make a weight non-finite
// (a learning rate or a moment at the edge of float's range: a second moment that overflows to
// infinity, a step of 1e38). Such an update is not kept and counts as a skipped step, like a
// non-finite gradient, so that no NaN reaches the next step or a checkpoint; every rank holds the
// same weights, moments and reduced gradients, so every rank takes the same decision.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <vector>

namespace tts::train {

// torch::nn::utils::clip_grad_norm_ with norm type 2 and the same arithmetic (the same norms,
// stack, clip coefficient and clamp: bit-identical gradients), returning the total norm as a
// 0-dim tensor on the gradients' device instead of reading it on the host. Parameters without a
// gradient are left out; with none, the norm is 0 (a float CPU scalar).
torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& parameters, double max_norm);

// Per parameter, where a DeviceAdam step writes its candidate weight, moments and denominator
// before they are kept or not: allocated once (a fresh tensor of a large model's size each step
// costs its pages again).
struct AdamScratch {
  torch::Tensor p, exp_avg, exp_avg_sq, max_exp_avg_sq, denom;
};

class DeviceAdam {
 public:
  // `optimizer`: a torch::optim::Adam or AdamW with one or more groups (refused otherwise). Its
  // parameters and options are read at every step (a group's learning rate is not: step() takes
  // it); its states' step counts are read once, at the first step.
  explicit DeviceAdam(torch::optim::Optimizer& optimizer);

  // One update of every parameter with a gradient at learning rate `lr`, kept only where
  // `allowed` (a 0-dim bool tensor on the parameters' device; undefined: true) and the result is
  // finite. Returns that decision as a 0-dim bool tensor on the device. Creates the state of a
  // parameter that has none, as libtorch does. `taking_part` (float64 [n] on the device, the
  // optimizer's parameter order; undefined: all): 0 leaves a parameter alone as if it had no
  // gradient (its weight, moments and step count), decided on the device.
  torch::Tensor step(double lr, const torch::Tensor& allowed = {},
                     const torch::Tensor& taking_part = {});
  // The same with the learning rate as a 0-dim float64 tensor on the parameters' device, so that
  // nothing of a step comes from the host (what a captured CUDA graph replays: update `lr` in
  // place between replays).
  torch::Tensor step(const torch::Tensor& lr, const torch::Tensor& allowed = {},
                     const torch::Tensor& taking_part = {});

  // Copies the device step counts into the optimizer's AdamParamState/AdamWParamState (one host
  // read); a state whose parameter was never updated (created by a step that was not kept) is
  // removed, as libtorch would never have made it.
  void write_back();

 private:
  // The step counts on the device at the first step (what the host states hold), and which
  // parameters take part in this one.
  void prepare_counts(const std::vector<torch::Tensor>& parameters,
                      const std::vector<bool>& taking_part);

  torch::optim::Optimizer& optimizer_;
  bool adamw_ = false;
  std::vector<torch::Tensor> parameters_;
  // Step counts, float64 [n] on the device, as column 0 of an [n, 2] buffer: a strided operand
  // keeps ATen's CPU pow on its scalar path (std::pow, as libtorch's host bias corrections),
  // never its vectorized approximation.
  torch::Tensor steps_, next_steps_, steps_buffer_, next_buffer_;
  torch::Tensor taking_part_;  // float64 [n]: 1 for a parameter with a gradient this step
  std::vector<bool> taking_part_host_;
  std::vector<AdamScratch> scratch_;
};

}  // namespace tts::train

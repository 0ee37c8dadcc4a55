// BatchNorm over the global batch's real positions.
//
// Note [BatchNorm over the global batch]: PyTorch's BatchNorm1d normalizes with the statistics
// of the batch it is given, padding included: under W ranks each rank normalizes by its own
// batch, and every batch by how much padding its longest utterance gives the others. Neither is
// what 1 rank with the whole batch computes. global_batch_norm() takes the mean and the
// (biased) variance over the positions that hold an utterance's data, summed over every rank's
// batch: one small all-reduce in the forward (the sums and sums of squares of the deviations
// from the running mean, which every rank holds alike, and the count) and, through its adjoint,
// one in the backward, so each rank's gradient is that of the global batch's loss. The running
// statistics are updated from the global ones (the variance unbiased over the real positions), the
// same on every rank. In eval mode (and frozen BatchNorm) the running statistics are used, as
// PyTorch's.
//
// A bias added just before (a convolution's) is removed again by the normalization: its gradient
// is zero. Computed, it is not: the two sums that cancel (through the values and through the
// mean) round differently in a 1-rank and a 2-rank batch, and Adam scales such noise up to steps
// of the learning rate's size, so the bias would drift differently by the rank count. The bias is
// therefore given as `shift` and left out of the normalized values (the same output, exactly),
// added to the running mean only: it gets no gradient, and in eval mode the layer computes what
// PyTorch's does with its bias.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/types.h>

namespace tts::dist {
class Communicator;
}  // namespace tts::dist

namespace tts::models {

// x [B, C, T]; valid [B, 1, T] (or broadcastable to it): 1 at an utterance's positions, 0 in
// the padding. Returns norm's output [B, C, T] in x's dtype, at least fp32; the padded positions
// hold the normalized padding (callers zero them where it matters). `comm` sums the statistics
// over ranks; its collectives run in the forward and the backward, in the same order on every
// rank (the model's layer order), as the gradient reducer's do.
// `shift` (undefined, or [C]): a bias that x (computed without it) stands for x + shift.
torch::Tensor global_batch_norm(torch::nn::BatchNorm1dImpl& norm, const torch::Tensor& x,
                                const torch::Tensor& valid, dist::Communicator& comm,
                                const torch::Tensor& shift = {});

}  // namespace tts::models

/// \file
/// Persistent kernels: consecutive CPU kernels launched as one, whose
/// work-groups run the kernels (its parts) in turn (persistent_kernels.cpp).
///
/// On PoCL's CPU device every launch costs a command's overhead and a late
/// start: the device's worker threads sleep on a condition variable as soon
/// as their queue is empty, between any two kernels of a run, and a
/// sleeping vCPU of this VM wakes 20-50 us after it is signalled. A network
/// of 45 short kernels (MobileNetV2 at batch 1) lost 0.4-0.6 ms of a 3 ms
/// run to that (docs/PERFORMANCE.md, stops 63-69). ONNX Runtime's threads
/// spin through a run.
///
/// A persistent kernel is launched with one work-group of one work-item per
/// compute unit. Each work-group runs the parts in order. A part's
/// work-items are split into R = min(work-groups, kClaimRanges) ranges of
/// consecutive ones; work-group w claims the work-items of range w mod R
/// in chunks from that range's counter (guided: a quarter of what is left,
/// at least one), then those left in the other ranges, in turn; it runs
/// each (the part's own code, printed as a function of its flat work-item
/// id), adds how many it ran to the part's done counter once, and waits,
/// spinning, until the done counter reaches the part's count: every store
/// of the part is then complete before any work-group starts the next
/// part. A work-group waits only for work-items other running work-groups
/// claimed, so the launch completes whatever the device runs at once (one
/// worker thread runs every part itself). The last work-group to leave
/// zeroes the counters for the next run. Nothing changes in what a
/// work-item computes or where anything is stored: the arena is planned
/// over the kernels as before, each part runs after the one before it
/// ended, as the launches did.
///
/// The ranges keep a work-group on the same share of consecutive parts
/// (a convolution's rows, then the next one's over the same rows), whose
/// data its core's cache still holds; one guided counter for all had the
/// two workers' shares move from part to part. And a chunk costs two
/// atomic operations on lines the other core also writes (a claim, and
/// formerly a done count per chunk). Measured (MobileNetV2, ab_models both
/// orders, this Intel VM): 6.7% faster at batch 1 and 6.0% at batch 8 than
/// the single counter with a done count per chunk; a static half per
/// work-group (no claims, but no completion with one worker thread) was no
/// faster at batch 1.
///
/// Grouped: CPU profiles only (the runtime launches one work-group on other
/// devices, whose work-groups' stores need not be visible to each other
/// before the kernel ends); kernels of one ND-range dimension or none,
/// without fixed work-groups or local arrays; no sync point inside a group
/// (its count is read between launches); the group's parameters within
/// kMaxParameterBytes; two kernels or more.
#pragma once

#include "ir/module.h"

namespace aotc {

/// OpenCL's least CL_DEVICE_MAX_PARAMETER_SIZE (bytes of a kernel's
/// arguments) for a full-profile device, PoCL's CPU device's too: a buffer
/// argument takes 16 (its pointer and its offset), a symbol 8.
constexpr int64_t kMaxParameterBytes = 1024;

/// Whether kernel \p k may be a part of a persistent kernel (above).
bool persistentPart(const Kernel &k);

/// Groups the kernels of \p m into persistent kernels (above), setting
/// LoopModule::persistent and counterBytes; returns the number of groups.
///
/// \p classes (one per kernel of \p m, else ignored): kernels of one class
/// have the same code over other buffers (ScheduleOptions::kernelClasses).
/// PoCL inlines every part into its persistent kernel, so a cold load
/// compiles each group's parts again: where the classes repeat beyond a
/// group (BERT's layers, every 10 kernels), the groups are cut at whole
/// periods (two BERT layers each), so that the repeated ones are equal and
/// share one function (codegen/opencl/share_kernels.h); at most one launch
/// more. Null: the longest groups that fit.
int persistentKernels(LoopModule &m, const std::vector<int> *classes = nullptr);

/// Bytes of the parameters of persistent kernel \p sig
/// (LoopModule::persistentSignature): its buffers, the counters, the error
/// record where it reports errors, its symbols.
int64_t persistentParameterBytes(const Kernel &sig);

} // namespace aotc

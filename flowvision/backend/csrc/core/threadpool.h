// Persistent std::thread pool used by every compiled kernel (deliberately not OpenMP,
// so it coexists with torch's OpenMP runtime in one process).
//
// This header is included by the per-ISA kernel translation units, so it must not
// define any out-of-line-able inline function except templates instantiated with
// TU-local (lambda) types: see the note in cpu/common.h.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fv {

using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);

// Runs fn over [begin, end) split into at most get_num_threads() contiguous chunks of at
// least `grain` iterations. The calling thread takes part. Calls made from inside a
// parallel region (or while another thread owns the pool) run serially in the caller.
// max_chunks = 0: at most get_num_threads() chunks (static split); otherwise up to
// max_chunks chunks handed out dynamically (load balancing when a core is busy elsewhere).
void parallel_for_raw(int64_t begin, int64_t end, int64_t grain, RangeFn fn, void* ctx, int64_t max_chunks = 0);

int get_num_threads();
void set_num_threads(int n);
bool in_parallel_region();
[[noreturn]] void throw_bad_alloc();  // defined out of line (baseline ISA)
// Whether the float32 training convs may run as Winograd F(4x4, 3x3) (cpu/conv_winograd.h): the process-wide
// switch (flowvision.backend.backends.cpu.allow_winograd), off on a thread inside reference_kernels(), whose runs
// are the accuracy baseline a captured plan is validated against.
bool winograd_allowed();
void set_winograd_allowed(bool on);
bool set_reference_kernels_thread(bool on);  // returns the previous value
// 64-byte aligned kernel scratch, kept for reuse by the host cache when it is installed (core/host_memory.cpp)
void* scratch_alloc(size_t bytes);
void scratch_free(void* p);

template <class F>
static void range_trampoline_(void* ctx, int64_t b, int64_t e) {
    (*static_cast<const F*>(ctx))(b, e);
}

// Only call with lambdas (their types are TU-local, so each instantiation is too).
template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& fn) {
    parallel_for_raw(begin, end, grain, &range_trampoline_<F>, const_cast<void*>(static_cast<const void*>(&fn)));
}

// Every iteration is its own chunk, taken by whichever thread is free (use for a modest
// number of coarse tasks). Only call with lambdas.
template <class F>
inline void parallel_for_dynamic(int64_t begin, int64_t end, const F& fn) {
    parallel_for_raw(begin, end, 1, &range_trampoline_<F>, const_cast<void*>(static_cast<const void*>(&fn)),
                     end - begin);
}

}  // namespace fv

// flowvision.backend._C: ISA selection (cpuid first, then the supported kernel tables), the runtime functions
// (ISA, threads, FMA peak) and the registration of each kernel family's bindings (core/bind_<family>.cpp).
// Compiled for baseline x86-64; the kernels live in cpu/*.cpp, compiled once per ISA.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bind_util.h"
#include "core/threadpool.h"
#include "cpu/kernels.h"

namespace py = pybind11;

namespace {

// ---------------------------------------------------------------- ISA dispatch
enum Isa { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };
const char* kIsaNames[] = {"portable", "avx2", "avx512"};

KernelTable g_tables[3];
std::atomic<const KernelTable*> g_current{nullptr};
int g_supported = kPortable;
std::string g_isa_reason;  // why the table in use was chosen (flowvision info prints it)

// The highest kernel ISA this CPU and OS support, and why. __builtin_cpu_supports also checks that the OS saves the
// wider registers (XCR0), so a VM that hides AVX-512 state is reported as AVX2.
int detect_isa(std::string& why) {
#if (defined(__x86_64__) || defined(__i386__)) && !defined(FV_PORTABLE_ONLY)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool f16c = __builtin_cpu_supports("f16c");
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (avx512 && avx2 && f16c) {
        why = "the CPU has AVX-512 F/BW/DQ/VL";
        return kAvx512;
    }
    if (avx2 && f16c) {
        why = avx512 ? "the CPU has AVX-512 F/BW/DQ/VL but not F16C" : "the CPU has AVX2, FMA and F16C but not AVX-512 F/BW/DQ/VL";
        return kAvx2;
    }
    why = "the CPU lacks AVX2, FMA or F16C";
    return kPortable;
#else
    why = "this build has portable kernels only";
    return kPortable;
#endif
}

int parse_isa(const std::string& s) {
    for (int i = 0; i < 3; ++i)
        if (s == kIsaNames[i]) return i;
    throw std::invalid_argument("unknown ISA '" + s + "' (expected portable, avx2 or avx512)");
}

// cpuid first; then only the tables of supported ISAs are filled, so no code compiled for a higher ISA is ever
// reachable on this CPU (the other tables stay null and _set_isa_for_testing refuses them).
void init_dispatch() {
    std::string why;
    g_supported = detect_isa(why);
#ifdef FV_NO_AVX512
    if (g_supported > kAvx2) {  // a build without the AVX-512 kernel copy (the sanitizer build)
        g_supported = kAvx2;
        why += "; this build has no AVX-512 kernels";
    }
#endif
    g_tables[kPortable].isa = kIsaNames[kPortable];
    fv::portable::fill_table(g_tables[kPortable]);
#ifndef FV_PORTABLE_ONLY
    if (g_supported >= kAvx2) {
        g_tables[kAvx2].isa = kIsaNames[kAvx2];
        fv::avx2::fill_table(g_tables[kAvx2]);
    }
#ifndef FV_NO_AVX512
    if (g_supported >= kAvx512) {
        g_tables[kAvx512].isa = kIsaNames[kAvx512];
        fv::avx512::fill_table(g_tables[kAvx512]);
    }
#endif
#endif
    int chosen = g_supported;
    g_isa_reason = why;
    if (const char* env = std::getenv("FLOWVISION_ISA")) {
        std::string s(env);
        if (!s.empty()) {
            int want = -1;
            try {
                want = parse_isa(s);
            } catch (const std::invalid_argument&) {
                g_isa_reason = why + "; FLOWVISION_ISA=" + s + " is not an ISA (portable, avx2, avx512) and was ignored";
            }
            if (want >= 0 && want < chosen) {
                chosen = want;
                g_isa_reason = "forced by FLOWVISION_ISA=" + s + "; " + why;
            } else if (want > chosen) {
                g_isa_reason = why + "; FLOWVISION_ISA=" + s + " asks for more than the CPU has and was ignored";
            }
        }
    }
    g_current.store(&g_tables[chosen]);
}

}  // namespace

const KernelTable& table() { return *g_current.load(std::memory_order_acquire); }

PYBIND11_MODULE(_C, m) {
    m.doc() = "flowvision.backend compiled CPU kernels (numpy in, numpy out; the GIL is released)";
    init_dispatch();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const std::bad_alloc& e) {
            PyErr_SetString(PyExc_MemoryError, "flowvision._C: out of memory");
        }
    });

    m.def("cpu_isa", []() { return std::string(table().isa); }, "ISA of the kernel table in use");
    m.def("cpu_isa_reason", []() { return g_isa_reason; }, "why the kernel table in use was chosen");
    m.def("supported_isas", []() {
        std::vector<std::string> r;
        for (int i = 0; i <= g_supported; ++i) r.push_back(kIsaNames[i]);
        return r;
    });
    m.def("_set_isa_for_testing", [](const std::string& name) {
        int want = parse_isa(name);
        if (want > g_supported) fail("ISA '" + name + "' is not supported by this CPU");
        g_current.store(&g_tables[want]);
    }, py::arg("name"));
    m.def("set_num_threads", [](int n) {
        if (n < 1) fail("set_num_threads: n must be >= 1, got " + std::to_string(n));
        py::gil_scoped_release rel;
        fv::set_num_threads(n);
    }, py::arg("n"));
    m.def("get_num_threads", []() { return fv::get_num_threads(); });
    m.def("set_winograd_allowed", &fv::set_winograd_allowed, py::arg("on"),
          "let float32 unit-stride 3x3 training convs run as Winograd F(4x4, 3x3) (default on)");
    m.def("winograd_allowed", []() { return fv::winograd_allowed(); });
    m.def("_set_reference_kernels_thread", &fv::set_reference_kernels_thread, py::arg("on"),
          "this thread's calls use the reference (non-Winograd) conv algorithms; returns the previous setting");
    m.def("fma_peak_gflops", [](double seconds, int threads) {
        // best of short bursts (the machine is shared): each burst runs the FMA loop on `threads`
        // threads (0 = the pool size) and is timed as a whole. Bursts of the first 0.4 s are not counted: an
        // idle core (a VM's idle vCPU above all) runs at a fraction of its speed for a few hundred milliseconds,
        // which read as a 2-thread peak of 1.2 cores.
        py::gil_scoped_release rel;
        const int nt = threads > 0 ? threads : fv::get_num_threads();
        const auto loop = table().fma_loop;
        const int64_t iters = 200000;
        double best = 0.0;
        const auto t_count = std::chrono::steady_clock::now() + std::chrono::duration<double>(0.4);
        const auto t_end = t_count + std::chrono::duration<double>(seconds);
        do {
            std::atomic<double> flops{0.0};
            auto t0 = std::chrono::steady_clock::now();
            struct Ctx { decltype(loop) f; int64_t it; std::atomic<double>* fl; } ctx{loop, iters, &flops};
            fv::parallel_for_raw(0, nt, 1, [](void* c, int64_t b, int64_t e) {
                auto* x = static_cast<Ctx*>(c);
                for (int64_t i = b; i < e; ++i) {
                    double f = x->f(x->it), cur = x->fl->load();
                    while (!x->fl->compare_exchange_weak(cur, cur + f)) {}
                }
            }, &ctx, nt);
            double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (dt > 0 && t0 >= t_count) best = std::max(best, flops.load() / dt * 1e-9);
        } while (std::chrono::steady_clock::now() < t_end);
        return best;
    }, py::arg("seconds") = 1.0, py::arg("threads") = 0,
       "Measured FMA peak in GFLOP/s of the current ISA's vector FMA loop (best of short bursts)");

    // the kernel families (core/bind_<family>.cpp)
    bind_gemm(m);
    bind_conv(m);
    bind_pool(m);
    bind_norm(m);
    bind_activation(m);
    bind_interpolate(m);
    bind_detection(m);
    bind_attention(m);
    bind_window(m);
    bind_executor(m);
    bind_optim(m);
    bind_image(m);
    bind_host_memory(m);
}

// The fused GEMM / conv epilogues (applied after bias and residual where the kernels store a value): the one list
// of kinds and the one definition of their math. A new kind is a row of FV_EPILOGUES plus its branch in
// epilogue_apply; the enum, the names _C.Epilogue binds and epilogue_code parses all come from the list.
#pragma once

// X(id, name, after_store), in code order (id's value is the row's index):
//   after_store 0: epilogue_apply computes it on the value being stored (relu / relu6 run as clamp with the bounds
//                  the callers set; clamp uses lo / hi; leaky_relu's slope is lo);
//   after_store 1: act_inplace runs it over the stored values (GELU / SiLU need exp / erf: a second pass over the
//                  rows just written, or a vector pass over the tile in the float32 GEMM).
#define FV_EPILOGUES(X)           \
    X(kEpNone, none, 0)           \
    X(kEpRelu, relu, 0)           \
    X(kEpRelu6, relu6, 0)         \
    X(kEpGelu, gelu, 1)           \
    X(kEpGeluTanh, gelu_tanh, 1)  \
    X(kEpSilu, silu, 1)           \
    X(kEpHardswish, hardswish, 0) \
    X(kEpClamp, clamp, 0)         \
    X(kEpLeakyRelu, leaky_relu, 0)

namespace fv {

#define FV_EP_ENUMERATOR(id, name, after_store) id,
enum Epilogue : int { FV_EPILOGUES(FV_EP_ENUMERATOR) kEpCount };
#undef FV_EP_ENUMERATOR

}  // namespace fv

// The math, only in the per-ISA kernel translation units (inside their own namespace, like cpu/common.h).
#ifdef FV_ISA_NAMESPACE
namespace fv {
namespace FV_ISA_NAMESPACE {

// Whether act_inplace (not epilogue_apply) computes epilogue `act`.
static inline bool epilogue_after_store(int act) {
    switch (act) {
#define FV_EP_AFTER_STORE(id, name, after_store) \
    case id: return after_store;
        FV_EPILOGUES(FV_EP_AFTER_STORE)
#undef FV_EP_AFTER_STORE
        default: return false;
    }
}

// The register epilogues (V: a vector or the scalar T): relu / relu6 / clamp to [lo, hi] (callers set the bounds
// of relu / relu6), hardswish, leaky_relu with slope lo; the after-store kinds (and none) pass through.
// Comparisons are written so that NaN propagates, like torch's clamp / relu / leaky_relu.
template <class V, class T>
static inline V epilogue_apply(int act, V v, T lo, T hi) {
    if (act == kEpRelu || act == kEpRelu6 || act == kEpClamp) {
        const V l = V{} + lo, h = V{} + hi;
        v = v < l ? l : v;
        return v > h ? h : v;
    }
    if (act == kEpHardswish) {
        const V z = V{}, six = V{} + T(6);
        V u = v + T(3);
        u = u < z ? z : (u > six ? six : u);
        return v * u / T(6);
    }
    if (act == kEpLeakyRelu) return v > V{} ? v : v * lo;
    return v;
}

}  // namespace FV_ISA_NAMESPACE
}  // namespace fv
#endif

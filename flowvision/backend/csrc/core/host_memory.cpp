// A caching allocator for numpy's array data (a NEP 49 memory handler), installed by flowvision.backend at import.
//
// Why: a training step allocates and frees the same large arrays (activations, gradients, GEMM outputs) every
// iteration. glibc returns large freed blocks to the kernel (munmap, or a heap trim once the free top exceeds its
// trim threshold), so the next step faults every page in again and the kernel zeroes it: 9% of a ViT-S step's CPU
// time was clear_page. This handler keeps freed blocks of >= kMinCached bytes, by their page-rounded size, up to a
// byte limit, and hands them back to the next request of the same size (what torch's CUDA caching allocator does for
// device memory). Smaller blocks go to malloc: glibc's heap already reuses them without faults.
//
// Each block carries its size in a 64-byte header in front of the data (numpy's free passes a size, but realloc does
// not), which also keeps the data 64-byte aligned.
#include <pybind11/pybind11.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

namespace {

constexpr size_t kHeader = 64;
constexpr size_t kPage = 4096;
constexpr size_t kMinCached = size_t(256) << 10;
constexpr uint64_t kMagicMapped = 0x666c6f77766d6170ull;  // a block from mmap (cached on free)
constexpr uint64_t kMagicHeap = 0x666c6f7776686570ull;    // a block from malloc

struct Header {
    uint64_t magic;
    size_t bytes;  // the whole block, header included (for a mapped block: the mapping's page-rounded length)
};

struct Cache {
    std::mutex mu;
    std::unordered_map<size_t, std::vector<void*>> free_blocks;  // mapping length -> cached blocks, last freed last
    size_t cached = 0, limit = 0;
    size_t hits = 0, misses = 0, released = 0, peak_cached = 0;

    // Unmap cached blocks, any size, until at most `keep` bytes remain. Called with mu held.
    void trim_to(size_t keep) {
        for (auto it = free_blocks.begin(); it != free_blocks.end() && cached > keep;) {
            auto& blocks = it->second;
            while (!blocks.empty() && cached > keep) {
                munmap(blocks.back(), it->first);
                blocks.pop_back();
                cached -= it->first;
                ++released;
            }
            it = blocks.empty() ? free_blocks.erase(it) : std::next(it);
        }
    }
};

// Never destroyed: arrays are still freed while the interpreter shuts down.
Cache& cache() {
    static Cache* c = new Cache();
    return *c;
}

void* data_of(void* base) { return static_cast<char*>(base) + kHeader; }
Header* header_of(void* data) { return reinterpret_cast<Header*>(static_cast<char*>(data) - kHeader); }

bool g_installed = false;

void* allocate(size_t size, bool zero, bool cacheable = true) {
    if (!cacheable || size + kHeader < kMinCached) {
        const size_t bytes = (size + kHeader + 63) / 64 * 64;
        void* base = aligned_alloc(64, bytes);
        if (!base) return nullptr;
        if (zero) memset(data_of(base), 0, bytes - kHeader);
        *static_cast<Header*>(base) = Header{kMagicHeap, bytes};
        return data_of(base);
    }
    const size_t len = (size + kHeader + kPage - 1) / kPage * kPage;
    Cache& c = cache();
    void* base = nullptr;
    {
        std::lock_guard<std::mutex> lock(c.mu);
        auto it = c.free_blocks.find(len);
        if (it != c.free_blocks.end() && !it->second.empty()) {
            base = it->second.back();
            it->second.pop_back();
            c.cached -= len;
            ++c.hits;
        } else {
            ++c.misses;
            // a size the cache does not hold: make room for it to be kept when it is freed
            if (c.cached + len > c.limit) c.trim_to(c.limit > len ? c.limit - len : 0);
        }
    }
    if (base) {
        if (zero) memset(data_of(base), 0, size);  // numpy reads no further than it asked for
    } else {
        base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  // zero pages
        if (base == MAP_FAILED) return nullptr;
    }
    *static_cast<Header*>(base) = Header{kMagicMapped, len};
    return data_of(base);
}

void release(void* data) {
    if (!data) return;
    Header* h = header_of(data);
    void* base = h;
    if (h->magic == kMagicHeap) {
        free(base);
        return;
    }
    const size_t len = h->bytes;
    Cache& c = cache();
    {
        std::lock_guard<std::mutex> lock(c.mu);
        if (c.cached + len <= c.limit) {
            c.free_blocks[len].push_back(base);
            c.cached += len;
            if (c.cached > c.peak_cached) c.peak_cached = c.cached;
            return;
        }
        ++c.released;
    }
    munmap(base, len);
}

// ---------------------------------------------------------------- numpy's handler (NEP 49, version 1)
struct DataMemAllocator {
    void* ctx;
    void* (*malloc)(void* ctx, size_t size);
    void* (*calloc)(void* ctx, size_t nelem, size_t elsize);
    void* (*realloc)(void* ctx, void* ptr, size_t new_size);
    void (*free)(void* ctx, void* ptr, size_t size);
};

struct DataMemHandler {
    char name[127];
    uint8_t version;
    DataMemAllocator allocator;
};

void* np_malloc(void*, size_t size) { return allocate(size, false); }

void* np_calloc(void*, size_t nelem, size_t elsize) {
    if (elsize && nelem > SIZE_MAX / elsize) return nullptr;
    return allocate(nelem * elsize, true);
}

void* np_realloc(void*, void* ptr, size_t new_size) {
    void* out = allocate(new_size, false);
    if (out && ptr) {
        const size_t old = header_of(ptr)->bytes - kHeader;
        memcpy(out, ptr, old < new_size ? old : new_size);
        release(ptr);
    }
    return out;
}

void np_free(void*, void* ptr, size_t) { release(ptr); }

DataMemHandler g_handler = {"flowvision_host_cache", 1, {nullptr, np_malloc, np_calloc, np_realloc, np_free}};

// numpy's C API table slots (stable ABI since numpy 1.22): PyDataMem_SetHandler, PyDataMem_GetHandler and
// PyArray_GetNDArrayCFeatureVersion.
constexpr int kSetHandler = 304, kGetHandler = 305, kFeatureVersion = 211;
constexpr unsigned kApi122 = 0x0f;

// Install the handler for the calling thread's context (the main thread at import). `api` is numpy's _ARRAY_API
// capsule. Returns false, changing nothing, when this numpy lacks the handler API.
bool install(py::capsule api, size_t limit_bytes) {
#if defined(__SANITIZE_ADDRESS__)
    return false;  // the sanitizer build keeps numpy on malloc, where ASan's redzones catch a kernel's overrun
#endif
    if (g_installed) return true;
    void** table = static_cast<void**>(PyCapsule_GetPointer(api.ptr(), nullptr));
    if (!table) throw py::error_already_set();
    auto feature_version = reinterpret_cast<unsigned (*)()>(table[kFeatureVersion]);
    if (feature_version() < kApi122) return false;
    auto get_handler = reinterpret_cast<PyObject* (*)()>(table[kGetHandler]);
    auto set_handler = reinterpret_cast<PyObject* (*)(PyObject*)>(table[kSetHandler]);
    py::object current = py::reinterpret_steal<py::object>(get_handler());
    if (!current || !PyCapsule_IsValid(current.ptr(), "mem_handler")) return false;
    cache().limit = limit_bytes;
    static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
    // a fork while another thread holds the lock (a DataLoader worker started mid-allocation) must not leave the
    // child's copy locked
    pthread_once(&atfork_once, [] {
        pthread_atfork([] { cache().mu.lock(); }, [] { cache().mu.unlock(); }, [] { cache().mu.unlock(); });
    });
    py::capsule ours(static_cast<void*>(&g_handler), "mem_handler");
    PyObject* old = set_handler(ours.ptr());
    if (!old) throw py::error_already_set();
    Py_DECREF(old);
    g_installed = true;
    return true;
}

void set_limit(size_t limit_bytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    c.limit = limit_bytes;
    c.trim_to(limit_bytes);
}

void empty() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    c.trim_to(0);
}

py::dict stats() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    py::dict d;
    d["installed"] = g_installed;
    d["cached_bytes"] = c.cached;
    d["peak_cached_bytes"] = c.peak_cached;
    d["limit_bytes"] = c.limit;
    d["hits"] = c.hits;
    d["misses"] = c.misses;
    d["released"] = c.released;
    return d;
}

}  // namespace

// Kernel scratch (cpu/common.h's Buf) shares the cache once it is installed: a Winograd conv's transformed
// filters (36 x C x O floats, 37 MB at 512 channels) or an im2col matrix would otherwise be mapped, faulted in and
// zeroed on every call. Without the cache (old numpy, the sanitizer build) it is plain aligned_alloc.
namespace fv {
void* scratch_alloc(size_t bytes) { return allocate(bytes, false, g_installed); }
void scratch_free(void* p) { release(p); }
}  // namespace fv

void bind_host_memory(py::module_& m) {
    m.def("host_cache_install", &install, py::arg("array_api"), py::arg("limit_bytes"),
          "use the caching allocator for numpy arrays created in this thread's context; false if numpy lacks NEP 49");
    m.def("host_cache_set_limit", &set_limit, py::arg("limit_bytes"), "bytes of freed blocks kept for reuse");
    m.def("host_cache_empty", &empty, "return every cached block to the system");
    m.def("host_cache_stats", &stats, "the caching allocator's counters");
}

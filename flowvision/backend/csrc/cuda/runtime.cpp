// Caching allocator, streams, events and staged copies (see runtime.h).
#include "runtime.h"

#include <cuda_runtime_api.h>
#include <string.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace fvcuda {

void fail(const std::string& msg) { throw std::runtime_error("flowvision CUDA: " + msg); }

std::string last_error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

void check(int code, const char* what) {
    if (code != cudaSuccess) {
        cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
        fail(std::string(what) + ": " + last_error_string(code));
    }
}

int dtype_size(DType d) {
    switch (d) {
        case DType::F32: case DType::I32: return 4;
        case DType::F16: case DType::BF16: case DType::I16: return 2;
        case DType::I64: return 8;
        case DType::U8: case DType::I8: case DType::BOOL: return 1;
    }
    fail("unknown dtype");
}

namespace {

constexpr size_t kSmall = 1 << 20, kSmallStep = 512, kLargeStep = 2 << 20;

size_t round_size(size_t n) {
    if (n < kSmall) return (n + kSmallStep - 1) / kSmallStep * kSmallStep;
    return (n + kLargeStep - 1) / kLargeStep * kLargeStep;
}

struct Block {
    size_t size;
    void* stream;
};

class CachingAllocator {
  public:
    void* alloc(size_t bytes, void* stream) {
        size_t size = round_size(bytes);
        std::lock_guard<std::mutex> g(mu_);
        // Best fit among free blocks of this stream; large requests may take a block up to 2x.
        auto& pool = free_[stream];
        auto it = pool.lower_bound(size);
        if (it != pool.end() && it->first <= (size < kSmall ? size : 2 * size)) {
            void* p = it->second;
            size_t got = it->first;
            pool.erase(it);
            live_[p] = Block{got, stream};
            note_alloc(got);
            ++stats_.cache_hits;
            return p;
        }
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, size);
        if (e == cudaErrorMemoryAllocation) {  // give the cache back to the driver and retry once
            cudaGetLastError();
            release_all_locked();
            e = cudaMalloc(&p, size);
        }
        if (e != cudaSuccess) {
            cudaGetLastError();
            fail(std::string(e == cudaErrorMemoryAllocation ? "out of memory" : "cudaMalloc failed") + " allocating " +
                 std::to_string(bytes) + " bytes (" + cudaGetErrorString(e) + "; allocated " +
                 std::to_string(stats_.allocated) + ", reserved " + std::to_string(stats_.reserved) + ")");
        }
        stats_.reserved += size;
        if (stats_.reserved > stats_.max_reserved) stats_.max_reserved = stats_.reserved;
        live_[p] = Block{size, stream};
        note_alloc(size);
        return p;
    }

    void free(void* p) {
        std::lock_guard<std::mutex> g(mu_);
        auto it = live_.find(p);
        if (it == live_.end()) return;  // not ours (or freed twice): never hand it out again
        Block b = it->second;
        live_.erase(it);
        stats_.allocated -= b.size;
        ++stats_.num_frees;
        free_[b.stream].emplace(b.size, p);
    }

    MemoryStats stats() {
        std::lock_guard<std::mutex> g(mu_);
        return stats_;
    }

    void empty() {
        std::lock_guard<std::mutex> g(mu_);
        release_all_locked();
    }

    void reset_peak() {
        std::lock_guard<std::mutex> g(mu_);
        stats_.max_allocated = stats_.allocated;
        stats_.max_reserved = stats_.reserved;
    }

  private:
    void note_alloc(size_t size) {
        stats_.allocated += size;
        ++stats_.num_allocs;
        if (stats_.allocated > stats_.max_allocated) stats_.max_allocated = stats_.allocated;
    }

    void release_all_locked() {
        // cached blocks may still be read by queued kernels of their stream
        cudaDeviceSynchronize();
        for (auto& kv : free_)
            for (auto& blk : kv.second) {
                cudaFree(blk.second);
                stats_.reserved -= blk.first;
            }
        free_.clear();
    }

    std::mutex mu_;
    std::unordered_map<void*, std::multimap<size_t, void*>> free_;
    std::unordered_map<void*, Block> live_;
    MemoryStats stats_{0, 0, 0, 0, 0, 0, 0};
};

// Leaked on purpose: device memory must not be freed during static destruction, after the CUDA
// runtime may already have shut down.
CachingAllocator& allocator() {
    static CachingAllocator* a = new CachingAllocator();
    return *a;
}

thread_local void* tls_stream = nullptr;

struct Staging {
    void* host = nullptr;
    size_t bytes = 0;
    cudaEvent_t done = nullptr;
};

class StagingPool {
  public:
    // Pinned buffer of at least `bytes` whose previous copy has finished.
    Staging& acquire(size_t bytes) {
        std::lock_guard<std::mutex> g(mu_);
        Staging& s = bufs_[next_++ % bufs_.size()];
        if (s.done) check(cudaEventSynchronize(s.done), "staging buffer wait");
        if (s.bytes < bytes) {
            if (s.host) cudaFreeHost(s.host);
            s.host = nullptr;
            s.bytes = 0;
            check(cudaMallocHost(&s.host, bytes), "cudaMallocHost");
            s.bytes = bytes;
        }
        if (!s.done) check(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), "cudaEventCreate");
        return s;
    }

  private:
    std::mutex mu_;
    std::vector<Staging> bufs_ = std::vector<Staging>(4);
    size_t next_ = 0;
};

StagingPool& staging() {
    static StagingPool* p = new StagingPool();
    return *p;
}

// Larger copies go straight from pageable memory (the driver stages them itself, synchronously).
constexpr size_t kMaxStaged = 64 << 20;

}  // namespace

void* device_alloc(size_t bytes, void* stream) { return allocator().alloc(bytes, stream); }
void device_free(void* p) { allocator().free(p); }
MemoryStats memory_stats() { return allocator().stats(); }
void empty_cache() { allocator().empty(); }
void reset_peak_memory_stats() { allocator().reset_peak(); }

DeviceArray empty_array(const std::vector<int64_t>& shape, DType dt, void* stream) {
    DeviceArray a;
    a.shape = shape;
    a.dtype = dt;
    for (int64_t s : shape)
        if (s < 0) fail("negative dimension in shape");
    a.storage = std::make_shared<Storage>(static_cast<size_t>(a.nbytes()), stream);
    return a;
}

void* create_stream(bool non_blocking) {
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault), "cudaStreamCreate");
    return s;
}
void destroy_stream(void* s) {
    if (s) cudaStreamDestroy(static_cast<cudaStream_t>(s));
}
void* current_stream() { return tls_stream; }
void set_current_stream(void* s) { tls_stream = s; }
void stream_synchronize(void* s) { check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize"); }
// The answer of a cudaStreamQuery / cudaEventQuery: not ready is no error (it is cleared), anything else throws.
static bool completed(cudaError_t e, const char* what) {
    if (e == cudaErrorNotReady) {
        cudaGetLastError();
        return false;
    }
    check(e, what);
    return true;
}
bool stream_query(void* s) { return completed(cudaStreamQuery(static_cast<cudaStream_t>(s)), "cudaStreamQuery"); }
void device_synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
void* create_event(bool timing) {
    cudaEvent_t e;
    check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
    return e;
}
void destroy_event(void* e) {
    if (e) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}
void record_event(void* e, void* s) {
    check(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(s)), "cudaEventRecord");
}
void stream_wait_event(void* s, void* e) {
    check(cudaStreamWaitEvent(static_cast<cudaStream_t>(s), static_cast<cudaEvent_t>(e), 0), "cudaStreamWaitEvent");
}
void event_synchronize(void* e) { check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize"); }
bool event_query(void* e) { return completed(cudaEventQuery(static_cast<cudaEvent_t>(e)), "cudaEventQuery"); }
float event_elapsed_ms(void* a, void* b) {
    float ms = 0.f;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(a), static_cast<cudaEvent_t>(b)), "cudaEventElapsedTime");
    return ms;
}

void copy_h2d(void* dst, const void* src, size_t bytes, void* stream) {
    if (!bytes) return;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (bytes > kMaxStaged) {
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpy H2D");
        check(cudaStreamSynchronize(s), "cudaMemcpy H2D");
        return;
    }
    Staging& st = staging().acquire(bytes);
    memcpy(st.host, src, bytes);
    check(cudaMemcpyAsync(dst, st.host, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync H2D");
    check(cudaEventRecord(st.done, s), "cudaEventRecord");
}

void copy_d2h(void* dst, const void* src, size_t bytes, void* stream) {
    if (!bytes) return;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (bytes > kMaxStaged) {
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpy D2H");
        check(cudaStreamSynchronize(s), "cudaMemcpy D2H");
        return;
    }
    Staging& st = staging().acquire(bytes);
    check(cudaMemcpyAsync(st.host, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync D2H");
    check(cudaEventRecord(st.done, s), "cudaEventRecord");
    check(cudaEventSynchronize(st.done), "D2H wait");
    memcpy(dst, st.host, bytes);
}

void copy_d2d(void* dst, const void* src, size_t bytes, void* stream) {
    if (!bytes) return;
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
          "cudaMemcpyAsync D2D");
}

}  // namespace fvcuda

// Device memory, streams and copies for flowvision.backend._C_cuda (host C++, links cudart).
//
// CachingAllocator: cudaMalloc is slow and synchronising, so freed blocks are kept and reused.
// Requests are rounded up to size classes (512 B steps below 1 MiB, 2 MiB steps above) and a
// free block is reused only by the stream it was last used on, so stream-ordered reuse needs no
// events (a block freed on stream A can be handed out again for stream A: the next kernel on A
// runs after the last one that used it). empty_cache() returns the cached blocks to the driver.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels.h"

namespace fvcuda {

struct MemoryStats {
    int64_t allocated, max_allocated, reserved, max_reserved, num_allocs, num_frees, cache_hits;
};

void* device_alloc(size_t bytes, void* stream);  // never returns null for bytes > 0 (throws)
void device_free(void* ptr);
MemoryStats memory_stats();
void empty_cache();
void reset_peak_memory_stats();

// Temporary device memory for one launcher call, returned to the cache on destruction.
struct Scratch {
    void* ptr;
    Scratch(size_t bytes, void* stream) : ptr(bytes ? device_alloc(bytes, stream) : nullptr) {}
    ~Scratch() { if (ptr) device_free(ptr); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

// Owned device block (shared by views of one tensor).
struct Storage {
    void* ptr = nullptr;
    size_t bytes = 0;
    int device = 0;
    Storage(size_t n, void* stream) : ptr(n ? device_alloc(n, stream) : nullptr), bytes(n) {}
    ~Storage() { if (ptr) device_free(ptr); }
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
};

// A dense row-major device array: the storage of a flowvision CUDA tensor.
struct DeviceArray {
    std::shared_ptr<Storage> storage;
    int64_t offset = 0;  // bytes into storage
    std::vector<int64_t> shape;
    DType dtype = DType::F32;

    int64_t numel() const {
        int64_t n = 1;
        for (int64_t s : shape) n *= s;
        return n;
    }
    int itemsize() const { return dtype_size(dtype); }
    int64_t nbytes() const { return numel() * itemsize(); }
    void* data() const { return storage && storage->ptr ? static_cast<char*>(storage->ptr) + offset : nullptr; }
};
DeviceArray empty_array(const std::vector<int64_t>& shape, DType dt, void* stream);

// Streams: 0 is the legacy default stream. current_stream() is per host thread.
void* create_stream(bool non_blocking);
void destroy_stream(void* s);
void* current_stream();
void set_current_stream(void* s);
void stream_synchronize(void* s);
bool stream_query(void* s);
void device_synchronize();
void* create_event(bool timing);
void destroy_event(void* e);
void record_event(void* e, void* s);
void stream_wait_event(void* s, void* e);
void event_synchronize(void* e);
bool event_query(void* e);
float event_elapsed_ms(void* start, void* end);

// Host <-> device copies through a pinned staging buffer (pageable memory cannot be copied
// asynchronously). h2d returns once the data is in the staging buffer; the staging buffer is
// reused only after the copy that read it has completed (an event per staging buffer).
void copy_h2d(void* dst, const void* src, size_t bytes, void* stream);
void copy_d2h(void* dst, const void* src, size_t bytes, void* stream);  // synchronises `stream`
void copy_d2d(void* dst, const void* src, size_t bytes, void* stream);

std::string last_error_string(int code);
void check(int code, const char* what);

}  // namespace fvcuda

#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace fv {
namespace {

thread_local bool t_in_parallel = false;

int available_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    unsigned h = std::thread::hardware_concurrency();
    return h ? static_cast<int>(h) : 1;
}

// How long an idle thread spins before it sleeps on a condition variable. Between the kernels of a training step
// there are gaps of a few milliseconds (Python, autograd bookkeeping); a worker that slept through one wakes by
// futex, and on a VM an idle vCPU takes far longer than that to run at speed again: with a 1 ms spin a 2-thread
// ViT-S training step ran 25-35% slower than with 50 ms. OpenMP runtimes spin similarly (libgomp's default
// GOMP_SPINCOUNT, Intel's KMP_BLOCKTIME of 200 ms). FLOWVISION_SPIN_MS sets it (0: sleep at once, for machines
// shared by many processes); with more threads than CPUs the threads barely spin, as libgomp does.
std::chrono::nanoseconds spin_budget(int pool_size) {
    double ms = pool_size > available_cpus() ? 0.05 : 50.0;
    if (const char* s = std::getenv("FLOWVISION_SPIN_MS")) {
        char* end = nullptr;
        const double v = std::strtod(s, &end);
        if (end != s && v >= 0) ms = v;
    }
    return std::chrono::nanoseconds(static_cast<int64_t>(ms * 1e6));
}

// Spins (pause) until done() or the budget has passed; true if done() held. It yields the CPU every ~10 us, so a
// process whose threads outnumber the free CPUs (several ranks or processes on one machine) hands them over to
// whoever has work instead of spinning them away.
template <class Done>
bool spin_until(Done done, std::chrono::nanoseconds budget) {
    if (done()) return true;
    if (budget.count() == 0) return false;
    const auto until = std::chrono::steady_clock::now() + budget;
    for (;;) {
        for (int i = 0; i < 256; ++i) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if (done()) return true;
        }
        if (std::chrono::steady_clock::now() >= until) return done();
        sched_yield();
    }
}

struct Job {
    RangeFn fn;
    void* ctx;
    int64_t begin, end, nchunks;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::exception_ptr error;
};

class Pool {
public:
    explicit Pool(int nthreads) : nthreads_(nthreads < 1 ? 1 : nthreads), spin_(spin_budget(nthreads_)) {
        // Workers start with seen = 0 (the initial generation), not with whatever generation
        // they observe when they first run: a worker scheduled late must still notice a job
        // or a shutdown published before it started.
        for (int i = 1; i < nthreads_; ++i) workers_.emplace_back([this] { worker_loop(0); });
    }
    // Joins the workers. The object itself stays alive (it is leaked by set_num_threads):
    // a thread that fetched the pointer just before may still run a job on it, and with
    // no workers left the caller simply executes every chunk itself.
    void shutdown() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stop_ = true;
            generation_.fetch_add(1, std::memory_order_release);
        }
        cv_work_.notify_all();
        for (auto& t : workers_) t.join();
        workers_.clear();
    }
    int size() const { return nthreads_; }
    std::mutex& run_mutex() { return run_mutex_; }

    // Caller must hold run_mutex().
    void run(Job& job) {
        {
            std::lock_guard<std::mutex> lk(m_);
            job_ = &job;
            active_ = 0;
            generation_.fetch_add(1, std::memory_order_release);
        }
        cv_work_.notify_all();
        work_on(job);
        // the workers usually finish their last chunks within microseconds: spin before sleeping on the condition
        // variable, whose futex wake-up costs more than that (a VM's idle vCPU much more). The spin waits for the
        // workers to leave the job too (active_), not only for the chunks: a worker counts its last chunk done a
        // moment before it leaves, and a caller that slept through that moment paid a futex round trip on ~10% of
        // the kernels of a 2-thread plan (EfficientNet-B0 at batch 1 ran 6% slower).
        spin_until(
            [&] {
                return job.done.load(std::memory_order_acquire) == job.nchunks &&
                       active_.load(std::memory_order_acquire) == 0;
            },
            spin_);
        std::unique_lock<std::mutex> lk(m_);
        cv_done_.wait(lk, [&] { return job.done.load() == job.nchunks && active_ == 0; });
        job_ = nullptr;
    }

private:
    static void work_on(Job& job) {
        bool prev = t_in_parallel;
        t_in_parallel = true;
        for (;;) {
            int64_t c = job.next.fetch_add(1);
            if (c >= job.nchunks) break;
            int64_t n = job.end - job.begin;
            int64_t b = job.begin + n * c / job.nchunks;
            int64_t e = job.begin + n * (c + 1) / job.nchunks;
            try {
                job.fn(job.ctx, b, e);
            } catch (...) {
                // first error wins; stored under the pool mutex by the caller of set_error
                static std::mutex em;
                std::lock_guard<std::mutex> lk(em);
                if (!job.error) job.error = std::current_exception();
            }
            job.done.fetch_add(1);
        }
        t_in_parallel = prev;
    }

    void worker_loop(uint64_t seen) {
        for (;;) {
            // spin so that back-to-back kernels do not pay a futex wake-up each time
            spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; }, spin_);
            Job* job;
            {
                std::unique_lock<std::mutex> lk(m_);
                cv_work_.wait(lk, [&] { return stop_ || generation_.load() != seen; });
                seen = generation_.load();
                if (stop_) return;
                job = job_;
                if (!job) continue;
                ++active_;
            }
            work_on(*job);
            {
                std::lock_guard<std::mutex> lk(m_);
                --active_;
            }
            cv_done_.notify_all();
        }
    }

    int nthreads_;
    std::chrono::nanoseconds spin_;
    std::vector<std::thread> workers_;
    std::mutex m_;
    std::mutex run_mutex_;
    std::condition_variable cv_work_, cv_done_;
    std::atomic<uint64_t> generation_{0};
    Job* job_ = nullptr;
    std::atomic<int> active_{0};  // workers inside the current job; changed under m_, read by the spin
    bool stop_ = false;
};

int default_num_threads() {
    if (const char* s = std::getenv("FLOWVISION_NUM_THREADS")) {
        int n = std::atoi(s);
        if (n > 0) return n;
    }
    return available_cpus();
}

// Global state. The pool pointer is deliberately leaked when invalidated by fork():
// the child has none of the parent's worker threads, so it just builds a new pool.
alignas(std::mutex) unsigned char g_mutex_storage[sizeof(std::mutex)];
std::mutex* g_mutex = nullptr;
Pool* g_pool = nullptr;
int g_requested = 0;  // 0 = default
bool g_atfork_registered = false;

std::mutex& global_mutex() {
    if (!g_mutex) g_mutex = new (g_mutex_storage) std::mutex();
    return *g_mutex;
}

void atfork_child() {
    // Re-initialise the mutex (it may have been held by another parent thread) and
    // forget the parent's pool without touching it.
    g_mutex = new (g_mutex_storage) std::mutex();
    g_pool = nullptr;
    t_in_parallel = false;
}

struct AtforkRegistrar {
    AtforkRegistrar() {
        global_mutex();
        pthread_atfork(nullptr, nullptr, &atfork_child);
        g_atfork_registered = true;
    }
};
AtforkRegistrar g_registrar;

int target_threads() { return g_requested > 0 ? g_requested : default_num_threads(); }

Pool* get_pool() {
    std::lock_guard<std::mutex> lk(global_mutex());
    if (!g_pool) g_pool = new Pool(target_threads());
    return g_pool;
}

}  // namespace

int get_num_threads() {
    std::lock_guard<std::mutex> lk(global_mutex());
    return g_pool ? g_pool->size() : target_threads();
}

bool in_parallel_region() { return t_in_parallel; }

void throw_bad_alloc() { throw std::bad_alloc(); }

namespace {
std::atomic<bool> g_winograd{true};
thread_local bool t_reference_kernels = false;
}  // namespace

bool winograd_allowed() { return g_winograd.load(std::memory_order_relaxed) && !t_reference_kernels; }
void set_winograd_allowed(bool on) { g_winograd.store(on, std::memory_order_relaxed); }
bool set_reference_kernels_thread(bool on) {
    const bool old = t_reference_kernels;
    t_reference_kernels = on;
    return old;
}

void set_num_threads(int n) {
    Pool* old = nullptr;
    {
        std::lock_guard<std::mutex> lk(global_mutex());
        g_requested = n > 0 ? n : 0;
        old = g_pool;
        g_pool = nullptr;
    }
    if (old) {
        // wait for a job possibly running on it, then join its workers
        std::lock_guard<std::mutex> run(old->run_mutex());
        old->shutdown();
    }
}

void parallel_for_raw(int64_t begin, int64_t end, int64_t grain, RangeFn fn, void* ctx, int64_t max_chunks) {
    if (end <= begin) return;
    if (grain < 1) grain = 1;
    int64_t n = end - begin;
    if (t_in_parallel || n <= grain) {
        fn(ctx, begin, end);
        return;
    }
    Pool* pool = get_pool();
    if (pool->size() <= 1) {
        fn(ctx, begin, end);
        return;
    }
    int64_t nchunks = (n + grain - 1) / grain;
    const int64_t cap = max_chunks > 0 ? max_chunks : pool->size();
    if (nchunks > cap) nchunks = cap;
    if (nchunks <= 1) {
        fn(ctx, begin, end);
        return;
    }
    std::unique_lock<std::mutex> run(pool->run_mutex(), std::try_to_lock);
    if (!run.owns_lock()) {  // another Python thread is using the pool: don't queue behind it
        bool prev = t_in_parallel;
        t_in_parallel = true;
        try {
            fn(ctx, begin, end);
        } catch (...) {
            t_in_parallel = prev;
            throw;
        }
        t_in_parallel = prev;
        return;
    }
    Job job;
    job.fn = fn;
    job.ctx = ctx;
    job.begin = begin;
    job.end = end;
    job.nchunks = nchunks;
    pool->run(job);
    if (job.error) std::rethrow_exception(job.error);
}

}  // namespace fv

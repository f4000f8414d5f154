// The CPU device (see cpu_device.hpp).
#include "cpu_device.hpp"
#include "container_limits.hpp"
#include "openblas.hpp"

#include <cblas.h>  // enum values only: the functions come from openblas()
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace lab::cpu {

namespace {

constexpr std::size_t kAlign = 2u << 20;  // 2 MiB: lets the kernel back buffers with huge pages

class HostBuffer : public Buffer {
public:
    explicit HostBuffer(std::size_t bytes) : bytes_(bytes) {
        std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
        if (rounded == 0) rounded = kAlign;
        if (posix_memalign(&data_, kAlign, rounded) != 0)
            throw std::runtime_error("out of host memory allocating " + std::to_string(bytes) + " bytes");
        // Huge pages cut TLB misses in streaming kernels; refusal is harmless.
        madvise(data_, rounded, MADV_HUGEPAGE);
    }
    ~HostBuffer() override { std::free(data_); }
    void* data() override { return data_; }
    std::size_t bytes() const override { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_;
};

}  // namespace

CpuDevice::CpuDevice(int threads) : simd_(detect_simd()) {
    // A container's CPU quota and memory limit, which affinity and /proc/meminfo do not show.
    const cgroup::Limits limits = cgroup::read_limits();
    TeamPlan plan = plan_team(allowed_cpus(), threads, limits.cpu, limits.cpu_file);
    facts_ = read_cpu_facts(plan.cpus, simd_);
    facts_.extra.merge(plan.facts);
    note_memory_limit(facts_, limits.memory_bytes, limits.memory_file);
    team_ = std::make_unique<ThreadTeam>(plan.cpus);
    stream_ = std::make_unique<TaskStream>(*team_);
    // OpenBLAS keeps its own pool; size it like the team so GEMM uses the same cores.
    try {
        const OpenBlas& blas = openblas(simd_);
        blas.set_num_threads(team_->size());
        facts_.extra["blas"] = blas.config + "; kernels: " + blas.core + ", " + blas.how_chosen;
    } catch (const std::exception& e) {
        facts_.extra["blas"] = std::string("unavailable: ") + e.what();
    }
}

CpuDevice::~CpuDevice() {
    stream_.reset();
    team_.reset();
}

BufferPtr CpuDevice::allocate(std::size_t bytes) {
    auto buf = std::make_unique<HostBuffer>(bytes);
    // First touch on the team, so each thread's share of the pages is mapped by that thread
    // (NUMA-local) and page faults are paid now rather than inside a timed kernel.
    auto* p = static_cast<unsigned char*>(buf->data());
    stream_->launch(
        [p, bytes](int t, int n) {
            std::size_t lines = (bytes + 63) / 64;
            std::size_t b = lines * t / n * 64, e = std::min(bytes, lines * (t + 1) / n * 64);
            if (e > b) std::memset(p + b, 0, e - b);
        },
        // Setup, not a kernel: lab trace counts kernels as device busy time, and on a CPU these
        // page faults can outlast every measured kernel of a run.
        TaskLabel{"setup", "first touch"});
    stream_->synchronize();
    return buf;
}

void CpuDevice::copy(Stream& stream, void* dst, const void* src, std::size_t bytes) {
    // Host to host: every team thread copies its share, as a streaming kernel would.
    auto* d = static_cast<unsigned char*>(dst);
    auto* s = static_cast<const unsigned char*>(src);
    HostKernel kernel = [d, s, bytes](int t, int n) {
        std::size_t lines = (bytes + 63) / 64;
        std::size_t b = lines * t / n * 64, e = std::min(bytes, lines * (t + 1) / n * 64);
        if (e > b) std::memcpy(d + b, s + b, e - b);
    };
    // Named in traces as a copy (host to host: a CPU device's memory is the host's).
    const TaskLabel label{"memcpy", "memcpy HtoH", false, {0, 0, 0}, bytes};
    if (auto* ts = dynamic_cast<TaskStream*>(&stream)) ts->launch(std::move(kernel), label);
    else stream.launch(std::move(kernel));
}

EventPtr CpuDevice::create_event() { return std::make_unique<CpuEvent>(); }

void CpuDevice::flush_caches(Stream& stream) {
    // Writing 1.5x the last-level cache evicts whatever a kernel left in it.
    if (!flush_buffer_) {
        std::size_t llc = facts_.last_level_cache_bytes();
        flush_buffer_ = allocate(std::max<std::size_t>(llc + llc / 2, 8u << 20));
    }
    float* f = flush_buffer_->as<float>();
    std::size_t n = flush_buffer_->count<float>();
    auto kernel = [f, n](int t, int threads) { fill(f, n, 1.0f, t, threads); };
    // Named in traces when it runs on the device's own stream, so a flush is not mistaken for
    // the lesson's kernel; setup (as first touch is), so it is not counted as the kernels' time.
    if (auto* s = dynamic_cast<TaskStream*>(&stream)) s->launch(kernel, TaskLabel{"setup", "flush caches"});
    else stream.launch(kernel);
}

void CpuDevice::gemm(Stream& stream, const Gemm& g) {
    if (!supports(g.dtype))
        throw std::invalid_argument(std::string("the CPU device has no GEMM for ") + to_string(g.dtype) +
                                    " (fp32 and fp64 only)");
    auto* s = dynamic_cast<TaskStream*>(&stream);
    if (!s) throw std::invalid_argument("CPU GEMM needs the CPU device's stream");
    const OpenBlas& blas = openblas(simd_);
    const TaskLabel label{"gemm", g.dtype == Dtype::fp32 ? "sgemm" : "dgemm", false, {g.m, g.n, g.k}};
    s->enqueue([g, &blas] {
        if (g.dtype == Dtype::fp32)
            blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k,
                        static_cast<float>(g.alpha), static_cast<const float*>(g.a), g.k,
                        static_cast<const float*>(g.b), g.n, static_cast<float>(g.beta),
                        static_cast<float*>(g.c), g.n);
        else
            blas.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, g.alpha,
                        static_cast<const double*>(g.a), g.k, static_cast<const double*>(g.b), g.n,
                        g.beta, static_cast<double*>(g.c), g.n);
    }, label);
}

bool CpuDevice::trace_begin(std::string& note) {
    note.clear();
    stream_->trace_begin();
    return true;
}

std::vector<TraceEvent> CpuDevice::trace_end() { return stream_->trace_end(); }

}  // namespace lab::cpu

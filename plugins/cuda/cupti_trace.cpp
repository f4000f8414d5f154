// Tracing with the CUPTI Activity API (see cupti_trace.hpp). CUPTI fills buffers we hand it with
// activity records and hands them back, often from its own thread; each returned buffer is
// converted to lab::TraceEvents at once and freed, so memory stays bounded by the event cap,
// not by how long the lesson ran. The callbacks are plain C functions, so the state they share
// with ActivityTracer lives in one file-local struct; one trace runs per process at a time
// (CUPTI's activity buffers are process-wide anyway). Nothing here throws out of a callback:
// CUPTI calls them from code that cannot unwind.
// The record structs are the newest the CUDA 13.0 headers declare: CUpti_ActivityKernel10,
// CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityAPI, CUpti_ActivitySynchronization2.
#include "cupti_trace.hpp"

#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lab::cuda {

namespace {

// 8 MiB holds ~30,000 kernel records: few enough buffers for a full lesson, small enough that
// CUPTI's several in-flight buffers cost little. CUPTI wants 8-byte aligned buffers (calloc's
// are 16-byte aligned). They are handed over zeroed (calloc maps fresh zero pages lazily), and
// CUPTI is told so: otherwise it zeroes each 8 MiB on the traced thread, a stall at the start of
// every traced window.
constexpr std::size_t kBufferBytes = 8u << 20;

// Activity kinds traced, with their names for error messages.
struct Kind {
    CUpti_ActivityKind kind;
    const char* name;
};
constexpr Kind kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    // Driver calls a library makes itself (cuBLASLt's cuLaunchKernelEx, Triton's cuLaunchKernel):
    // without them its kernels have no launch on the host track. CUPTI leaves out the driver
    // calls the runtime makes inside a runtime call, so nothing shows twice (as in Kineto's).
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
};

std::string cupti_error(CUptiResult r, const char* call) {
    const char* text = nullptr;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
    return std::string(call) + " failed: " + text + " (CUPTI error " + std::to_string(static_cast<int>(r)) + ")";
}

// A synchronisation record names no thread; it is placed on the thread of the runtime call with
// the same correlation ID once all records are in, since the two may arrive in either order.
struct PendingSync {
    TraceEvent event;
    std::uint32_t correlation = 0;
};

// Everything the callbacks and the tracer share; `mutex` guards all of it.
struct State {
    std::mutex mutex;
    bool collecting = false;                  // records arriving while false are discarded
    std::uint64_t origin_ns = 0;              // cuptiGetTimestamp() at start()
    std::vector<TraceEvent> events;
    std::vector<PendingSync> syncs;
    std::size_t dropped = 0;                  // over the cap, or lost by CUPTI
    std::size_t untimed = 0;                  // records CUPTI handed back without a start or an end
    // CUPTI thread ID -> 0, 1, 2, ... in order of first appearance, kept for the whole process so
    // that a thread keeps its track number in every segment of a windowed trace.
    std::unordered_map<std::uint32_t, int> thread_track;
    std::unordered_map<std::uint32_t, int> runtime_track;       // correlation -> track, for syncs
    // CUPTI shares one name pointer per kernel: mangled name as read then, and its demangled form.
    // The pointer is only a fast key: a module unloaded (a lesson's companion) can free a name whose
    // address a later module's kernel reuses, so the text is compared before the entry is trusted.
    std::unordered_map<const char*, std::pair<std::string, std::string>> kernel_names;
    std::unordered_map<std::uint32_t, std::string> api_names;     // runtime callback ID -> name
    std::unordered_map<std::uint32_t, std::string> driver_names;  // driver callback ID -> name
};

State& state() {
    static State* s = new State;  // never destroyed: CUPTI may call back during process exit
    return *s;
}

double seconds(const State& s, std::uint64_t ns) {
    return static_cast<double>(static_cast<std::int64_t>(ns - s.origin_ns)) * 1e-9;
}

std::string demangle(const char* mangled) {
    if (!mangled) return "(unnamed kernel)";
    int status = 0;
    char* plain = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    if (status != 0 || !plain) return mangled;  // extern "C" kernels are not mangled
    std::string out = plain;
    std::free(plain);
    return out;
}

const std::string& kernel_name(State& s, const char* mangled) {
    auto it = s.kernel_names.find(mangled);
    if (it == s.kernel_names.end() || (mangled && it->second.first != mangled))
        it = s.kernel_names.insert_or_assign(mangled, std::pair{std::string(mangled ? mangled : ""), demangle(mangled)}).first;
    return it->second.second;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the suffix is the API version, noise in a trace
// and absent from the names students look up.
const std::string& api_name(State& s, std::uint32_t cbid, bool driver) {
    auto& names = driver ? s.driver_names : s.api_names;
    auto it = names.find(cbid);
    if (it != names.end()) return it->second;
    const char* raw = nullptr;
    std::string name;
    if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &raw) == CUPTI_SUCCESS && raw) {
        name = raw;
        auto v = name.rfind("_v");
        if (v != std::string::npos && v + 2 < name.size() &&
            std::all_of(name.begin() + static_cast<std::ptrdiff_t>(v) + 2, name.end(),
                        [](char c) { return c >= '0' && c <= '9'; }))
            name.erase(v);
    } else {
        name = (driver ? "driver API " : "runtime API ") + std::to_string(cbid);
    }
    return names.emplace(cbid, std::move(name)).first->second;
}

int thread_track(State& s, std::uint32_t thread_id) {
    auto it = s.thread_track.find(thread_id);
    if (it == s.thread_track.end())
        it = s.thread_track.emplace(thread_id, static_cast<int>(s.thread_track.size())).first;
    return it->second;
}

const char* copy_kind(std::uint8_t kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
        case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
        case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
        default: return "unknown";
    }
}

// Pageable host memory is why a copy runs at half speed: worth showing beside the copy.
const char* memory_kind(unsigned kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
        case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
        case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
        case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "array";
        case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
        case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "device static";
        case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "managed static";
        default: return "unknown";
    }
}

const char* sync_name(CUpti_ActivitySynchronizationType type) {
    switch (type) {
        case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event synchronize";
        case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream wait event";
        case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream synchronize";
        case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context synchronize";
        default: return "synchronize";
    }
}

std::string dims(int x, int y, int z) {
    return std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z);
}

// Bytes per nanosecond is GB/s (10^9 B/s), the unit Kineto and Nsight show.
std::string gb_per_s(std::uint64_t bytes, std::uint64_t start, std::uint64_t end) {
    if (end <= start) return "0";
    return std::to_string(static_cast<double>(bytes) / static_cast<double>(end - start));
}

// Room for one more event; counts the loss when there is none.
bool room(State& s) {
    if (s.events.size() + s.syncs.size() < ActivityTracer::kMaxEvents) return true;
    ++s.dropped;
    return false;
}

// A record without both times is work CUPTI could not time: no device memory for timestamps,
// or work still running when a forced flush handed its buffer back (CUPTI never completes such a
// record later). Counted apart from the records the buffers had no room for.
bool timed(State& s, std::uint64_t start, std::uint64_t end) {
    if (start != 0 && end >= start) return true;
    ++s.untimed;
    return false;
}

TraceEvent timed_event(const State& s, std::string name, const char* category, std::uint64_t start,
                       std::uint64_t end) {
    TraceEvent e;
    e.name = std::move(name);
    e.category = category;
    e.start_s = seconds(s, start);
    e.duration_s = end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
    return e;
}

void convert(State& s, const CUpti_Activity* record) {
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            if (!timed(s, k->start, k->end) || !room(s)) return;
            TraceEvent e = timed_event(s, kernel_name(s, k->name), "kernel", k->start, k->end);
            e.track = static_cast<int>(k->streamId);
            e.args["grid"] = dims(k->gridX, k->gridY, k->gridZ);
            e.args["block"] = dims(k->blockX, k->blockY, k->blockZ);
            e.args["registers per thread"] = std::to_string(k->registersPerThread);
            e.args["shared memory"] = std::to_string(static_cast<std::int64_t>(k->staticSharedMemory) +
                                                     k->dynamicSharedMemory);
            e.args["stream"] = std::to_string(k->streamId);
            e.args["device"] = std::to_string(k->deviceId);
            e.args["correlation"] = std::to_string(k->correlationId);
            s.events.push_back(std::move(e));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
            if (!timed(s, m->start, m->end) || !room(s)) return;
            TraceEvent e = timed_event(s, std::string("memcpy ") + copy_kind(m->copyKind), "memcpy", m->start, m->end);
            e.track = static_cast<int>(m->streamId);
            e.args["bytes"] = std::to_string(m->bytes);
            e.args["memory bandwidth (GB/s)"] = gb_per_s(m->bytes, m->start, m->end);
            e.args["src"] = memory_kind(m->srcKind);
            e.args["dst"] = memory_kind(m->dstKind);
            e.args["stream"] = std::to_string(m->streamId);
            e.args["device"] = std::to_string(m->deviceId);
            // The runtime call that asked for the copy, when there was one (the launch arrow).
            e.args["correlation"] = std::to_string(m->runtimeCorrelationId ? m->runtimeCorrelationId : m->correlationId);
            s.events.push_back(std::move(e));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
            if (!timed(s, m->start, m->end) || !room(s)) return;
            TraceEvent e = timed_event(s, "memset", "memset", m->start, m->end);
            e.track = static_cast<int>(m->streamId);
            e.args["bytes"] = std::to_string(m->bytes);
            e.args["value"] = std::to_string(m->value);
            e.args["memory bandwidth (GB/s)"] = gb_per_s(m->bytes, m->start, m->end);
            e.args["memory"] = memory_kind(m->memoryKind);
            e.args["stream"] = std::to_string(m->streamId);
            e.args["device"] = std::to_string(m->deviceId);
            e.args["correlation"] = std::to_string(m->correlationId);
            s.events.push_back(std::move(e));
            return;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            const bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
            auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
            const int track = thread_track(s, a->threadId);
            s.runtime_track.emplace(a->correlationId, track);
            if (!timed(s, a->start, a->end) || !room(s)) return;
            TraceEvent e = timed_event(s, api_name(s, a->cbid, driver), driver ? "driver" : "runtime", a->start, a->end);
            e.host = true;
            e.track = track;
            e.args["correlation"] = std::to_string(a->correlationId);
            if (a->returnValue != 0) e.args["return"] = std::to_string(a->returnValue);
            s.events.push_back(std::move(e));
            return;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
            auto* y = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
            if (!timed(s, y->start, y->end) || !room(s)) return;
            TraceEvent e = timed_event(s, sync_name(y->type), "sync", y->start, y->end);
            e.host = true;
            if (y->streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) e.args["stream"] = std::to_string(y->streamId);
            if (y->cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) e.args["event"] = std::to_string(y->cudaEventId);
            // As Kineto's cuda_sync: no device event shares it, so no launch arrow is drawn.
            e.args["correlation"] = std::to_string(y->correlationId);
            s.syncs.push_back({std::move(e), y->correlationId});
            return;
        }
        default:
            return;  // a kind we did not enable (CUPTI may add some); nothing to show
    }
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    // A null buffer makes CUPTI drop records (it counts them); better than failing the run.
    *buffer = static_cast<std::uint8_t*>(std::calloc(1, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t size,
                               std::size_t valid) {
    (void)size;
    try {
        State& s = state();
        std::lock_guard lock(s.mutex);
        if (s.collecting && buffer) {
            CUpti_Activity* record = nullptr;
            while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) convert(s, record);
            std::size_t lost = 0;
            if (cuptiActivityGetNumDroppedRecords(context, stream_id, &lost) == CUPTI_SUCCESS) s.dropped += lost;
        }
    } catch (...) {
        // Out of memory while converting: the rest of this buffer is lost, the run goes on.
    }
    std::free(buffer);
}

// The callbacks are registered once per process: CUPTI owns them from then on, and registering
// again while it still holds buffers from the first registration gains nothing.
bool register_callbacks(std::string& note) {
    static std::once_flag once;
    static CUptiResult result = CUPTI_SUCCESS;
    std::call_once(once, [] {
        // Our buffers come zeroed (buffer_requested); if CUPTI refuses to hear it, it zeroes them
        // itself, which costs a stall and nothing else.
        std::uint8_t zeroed = 1;
        std::size_t size = sizeof zeroed;
        cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
        result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    });
    if (result == CUPTI_SUCCESS) return true;
    note = cupti_error(result, "cuptiActivityRegisterCallbacks");
    return false;
}

void disable_all() {
    for (const Kind& k : kKinds) cuptiActivityDisable(k.kind);  // a kind not enabled is harmless here
}

}  // namespace

ActivityTracer::~ActivityTracer() {
    if (running_) stop();
}

bool ActivityTracer::start(std::string& note) {
    const char* untraced = "; the run goes on untraced";
    State& s = state();
    {
        std::lock_guard lock(s.mutex);
        if (s.collecting) {
            note = std::string("another CUPTI trace is already running in this process") + untraced;
            return false;
        }
    }
    if (!register_callbacks(note)) {
        note += untraced;
        return false;
    }
    {
        std::lock_guard lock(s.mutex);
        s.collecting = true;
        s.events.clear();
        s.syncs.clear();
        s.dropped = 0;
        s.untimed = 0;
        s.runtime_track.clear();
    }
    auto give_up = [&] {
        disable_all();
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        std::lock_guard lock(s.mutex);
        s.collecting = false;
        s.events.clear();
        s.syncs.clear();
    };
    for (const Kind& k : kKinds) {
        if (CUptiResult r = cuptiActivityEnable(k.kind); r != CUPTI_SUCCESS) {
            // Typically another profiler (Nsight Systems, a second CUPTI client) holds CUPTI.
            note = cupti_error(r, (std::string("cuptiActivityEnable(") + k.name + ")").c_str()) + untraced;
            give_up();
            return false;
        }
    }
    // The origin is read last, after CUPTI's set-up (its first enable can take milliseconds):
    // the caller reads its own clock when start() returns, and the two must agree. A record from
    // the moment between the enables and this read gets a slightly negative time.
    std::uint64_t origin = 0;
    if (CUptiResult r = cuptiGetTimestamp(&origin); r != CUPTI_SUCCESS) {
        note = cupti_error(r, "cuptiGetTimestamp") + untraced;
        give_up();
        return false;
    }
    {
        std::lock_guard lock(s.mutex);
        s.origin_ns = origin;
    }
    note.clear();
    running_ = true;
    return true;
}

std::vector<TraceEvent> ActivityTracer::stop(std::size_t* truncated, std::size_t* untimed) {
    if (truncated) *truncated = 0;
    if (untimed) *untimed = 0;
    if (!running_) return {};
    running_ = false;
    State& s = state();
    // Flush before disabling so nothing recorded so far waits in a half-full buffer, then again
    // after, for what completed in between. FORCED also hands back buffers still being filled.
    // The completion callback may run on this thread inside the flush: the lock is not held here.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disable_all();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

    std::lock_guard lock(s.mutex);
    s.collecting = false;
    std::vector<TraceEvent> out;
    out.swap(s.events);
    out.reserve(out.size() + s.syncs.size());
    for (auto& p : s.syncs) {
        auto t = s.runtime_track.find(p.correlation);
        p.event.track = t == s.runtime_track.end() ? 0 : t->second;
        out.push_back(std::move(p.event));
    }
    s.syncs.clear();
    s.runtime_track.clear();
    std::stable_sort(out.begin(), out.end(),
                     [](const TraceEvent& a, const TraceEvent& b) { return a.start_s < b.start_s; });
    if (truncated) *truncated = s.dropped;
    if (untimed) *untimed = s.untimed;
    return out;
}

}  // namespace lab::cuda

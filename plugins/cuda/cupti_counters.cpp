// Hardware counters for one CUDA device with the CUPTI Range Profiler (see cupti_counters.hpp).
// One measurement = one user range around the caller's `run()`, replayed by us (user replay) as
// many times as CUPTI needs passes, then decoded and evaluated to metric values on the host.
// Counters are often refused (non-admin users without NVreg_RestrictProfilingToAdminUsers=0,
// virtual machines, confidential computing, another profiler holding the hardware): every such
// case turns into a note and an empty map, so a lesson degrades to timing only and never aborts.
// The driver API is reached only through the runtime's entry-point table: this file needs
// libcupti and libcudart, not libcuda (which the lab must not link; it may be absent).
#include "cupti_counters.hpp"

#include <cuda.h>  // types only (CUcontext, CUdevice, CUresult); no cu* function is linked
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>
#include <utility>

namespace lab::cuda {

namespace {

// Name of the single user range; shows up in CUPTI's range tree only.
constexpr const char* kRangeName = "lab";
// Replay passes allowed before giving up. CUPTI schedules a handful for any sane metric list;
// this only guards against a loop that never reports "all passes submitted".
constexpr std::size_t kMaxPasses = 64;
// Driver ABI version asked of the runtime's entry-point table. cuCtxGetCurrent and cuDeviceGet
// have had one ABI since CUDA 4.0; 12.0 is old enough for every driver CUDA 13 runs on.
constexpr unsigned kDriverAbiVersion = 12000;

// Why counters failed, which decides the wording and whether retrying can help.
enum class Failure {
    privileges,   // the driver refuses counters to this user or this guest
    unsupported,  // this GPU/configuration cannot profile at all (vGPU, MIG, CC, CMP, WSL, ...)
    busy,         // another profiler holds the counters right now
    other,
};

Failure classify(CUptiResult r) {
    switch (r) {
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
            return Failure::privileges;
        case CUPTI_ERROR_NOT_SUPPORTED:
        case CUPTI_ERROR_NOT_COMPATIBLE:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
        case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
        case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_INVALID_CHIP_NAME:
            return Failure::unsupported;
        case CUPTI_ERROR_HARDWARE_BUSY:
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
            return Failure::busy;
        default:
            return Failure::other;
    }
}

// Pure: the note shown to the user for a failed call. `result` is CUPTI's name for the code.
std::string failure_note(std::string_view call, std::string_view result, Failure kind) {
    const std::string where = std::string(result) + " from " + std::string(call);
    switch (kind) {
        case Failure::privileges:
            return "hardware counters refused by the driver (" + where +
                   "): timing only. Counters need profiling permission: run as admin or load the "
                   "driver with NVreg_RestrictProfilingToAdminUsers=0 "
                   "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
        case Failure::unsupported:
            return "hardware counters not available on this GPU or machine (" + where +
                   "): timing only";
        case Failure::busy:
            return "hardware counters busy (" + where +
                   "): another profiler (Nsight Compute, DCGM profiling, a second CUPTI client) "
                   "holds them; timing only";
        case Failure::other:
            break;
    }
    return "hardware counters failed (" + where + "): timing only";
}

std::string result_name(CUptiResult r) {
    const char* s = nullptr;
    if (cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s != nullptr) return s;
    return "CUPTI error " + std::to_string(static_cast<int>(r));
}

std::string cuda_note(std::string_view call, cudaError_t e) {
    const char* name = cudaGetErrorName(e);
    return "hardware counters unavailable (" + std::string(name ? name : "cudaError") + " from " +
           std::string(call) + "): timing only";
}

// Why the profiling API is unsupported, from cuptiProfilerDeviceSupported's per-feature flags.
std::string unsupported_reason(const CUpti_Profiler_DeviceSupported_Params& p) {
    auto bad = [](CUpti_Profiler_Support_Level l) { return l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED; };
    if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) return "profiling is disabled on this vGPU";
    if (bad(p.vGpu)) return "profiling is not supported on this vGPU";
    if (bad(p.confidentialCompute)) return "confidential computing is on";
    if (bad(p.architecture)) return "the GPU architecture has no profiling support";
    if (bad(p.cmp)) return "crypto-mining processors cannot profile";
    if (bad(p.sli)) return "SLI is enabled";
    if (bad(p.wsl)) return "WSL does not support profiling here";
    return "the profiling API is not supported in this configuration";
}

// Requested names without repeats, first occurrence first (CUPTI is not asked twice for one).
std::vector<std::string> unique_names(const std::vector<std::string>& metrics) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& m : metrics)
        if (seen.insert(m).second) out.push_back(m);
    return out;
}

std::string cache_key(const std::vector<std::string>& names) {
    std::string key;
    for (const auto& n : names) key += n + '\n';
    return key;
}

std::vector<const char*> c_names(const std::vector<std::string>& names) {
    std::vector<const char*> out;
    out.reserve(names.size());
    for (const auto& n : names) out.push_back(n.c_str());
    return out;
}

// A driver function through cudaGetDriverEntryPointByVersion (CUDA >= 12.5; the unversioned
// cudaGetDriverEntryPoint is deprecated in CUDA 13), so libcuda is never linked.
template <class Fn> Fn driver_function(const char* name, std::string& note) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, kDriverAbiVersion, cudaEnableDefault, &found);
    if (e != cudaSuccess) {
        note = cuda_note(std::string("cudaGetDriverEntryPointByVersion(") + name + ")", e);
        return nullptr;
    }
    if (fn == nullptr || found != cudaDriverEntryPointSuccess) {
        note = std::string("hardware counters unavailable: the driver does not export ") + name + ": timing only";
        return nullptr;
    }
    return reinterpret_cast<Fn>(fn);
}

using CuCtxGetCurrent = CUresult (*)(CUcontext*);
using CuDeviceGet = CUresult (*)(CUdevice*, int);

}  // namespace

struct RangeProfiler::State {
    // A config image and the host object that built it, per distinct metric list. The host
    // object is kept because evaluating counter data needs one for the same chip; building
    // either costs far more than a short kernel, so both are made once per list.
    struct Config {
        CUpti_Profiler_Host_Object* host = nullptr;
        std::vector<std::uint8_t> image;
        std::size_t passes = 0;  // CUPTI's estimate; 0 when it would not say
    };

    bool initialized = false;     // cuptiProfilerInitialize succeeded (undo in the destructor)
    bool ready = false;           // context, chip and availability image obtained
    std::string refused;          // set once the device or driver will never give counters
    CUcontext ctx = nullptr;
    std::string chip;
    std::vector<std::uint8_t> availability;
    std::map<std::string, Config> configs;

    ~State() {
        for (auto& [key, config] : configs) deinit_host(config.host);
        if (initialized) {
            CUpti_Profiler_DeInitialize_Params p{};
            p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
            (void)cuptiProfilerDeInitialize(&p);  // nothing useful to do with a failure here
        }
    }

    static void deinit_host(CUpti_Profiler_Host_Object* host) {
        if (host == nullptr) return;
        CUpti_Profiler_Host_Deinitialize_Params p{};
        p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
        p.pHostObject = host;
        (void)cuptiProfilerHostDeinitialize(&p);
    }

    Failure last_failure = Failure::other;  // kind of the latest failed CUPTI call

    // Records a failed call in `note`; remembers it when retrying cannot help. Always false.
    bool fail(CUptiResult r, const char* call, std::string& note) {
        last_failure = classify(r);
        note = failure_note(call, result_name(r), last_failure);
        if (last_failure == Failure::privileges || last_failure == Failure::unsupported) refused = note;
        return false;
    }
    bool check(CUptiResult r, const char* call, std::string& note) {
        return r == CUPTI_SUCCESS || fail(r, call, note);
    }

    // Context, CUPTI profiler, chip name, counter availability: once per device. A failure here
    // will not heal within this process (except counters held by another profiler), so it is
    // remembered in `refused` and later measurements answer at once.
    bool prepare(int device, std::string& note) {
        if (ready) return true;
        last_failure = Failure::other;
        if (!prepare_once(device, note)) {
            if (refused.empty() && last_failure != Failure::busy) refused = note;
            return false;
        }
        ready = true;
        return true;
    }

    bool prepare_once(int device, std::string& note) {
        // cudaFree(nullptr) is the documented way to make the runtime create the primary
        // context and bind it to this thread, so cuCtxGetCurrent sees it.
        if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
            note = cuda_note("cudaFree(nullptr)", e);
            return false;
        }
        auto get_ctx = driver_function<CuCtxGetCurrent>("cuCtxGetCurrent", note);
        if (get_ctx == nullptr) return false;
        if (CUresult r = get_ctx(&ctx); r != CUDA_SUCCESS || ctx == nullptr) {
            note = "hardware counters unavailable: no current CUDA context (cuCtxGetCurrent returned " +
                   std::to_string(static_cast<int>(r)) + "): timing only";
            return false;
        }

        if (!initialized) {  // once: a retry after "busy" must not take a second reference
            CUpti_Profiler_Initialize_Params init{};
            init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
            if (!check(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize", note)) return false;
            initialized = true;
        }

        // Diagnostic only: says *why* a VM or CC machine cannot profile, which the later error
        // codes do not. If the query itself fails, the calls below report what goes wrong.
        std::string skipped;  // a missing cuDeviceGet only skips the diagnostic
        if (auto device_get = driver_function<CuDeviceGet>("cuDeviceGet", skipped); device_get != nullptr) {
            CUdevice cu_device = 0;
            if (device_get(&cu_device, device) == CUDA_SUCCESS) {
                CUpti_Profiler_DeviceSupported_Params s{};
                s.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
                s.cuDevice = cu_device;
                s.api = CUPTI_PROFILER_RANGE_PROFILING;
                if (cuptiProfilerDeviceSupported(&s) == CUPTI_SUCCESS &&
                    s.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
                    note = "hardware counters not available: " + unsupported_reason(s) + ": timing only";
                    refused = note;
                    return false;
                }
            }
        }

        CUpti_Device_GetChipName_Params name{};
        name.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
        name.deviceIndex = static_cast<std::size_t>(device);
        if (!check(cuptiDeviceGetChipName(&name), "cuptiDeviceGetChipName", note)) return false;
        if (name.pChipName == nullptr) {
            note = "hardware counters unavailable: CUPTI returned no chip name: timing only";
            return false;
        }
        chip = name.pChipName;

        // Size first, then the image; the image tells the host API which counters this context
        // may read (it can be smaller under a hypervisor).
        CUpti_Profiler_GetCounterAvailability_Params avail{};
        avail.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
        avail.ctx = ctx;
        if (!check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", note))
            return false;
        availability.assign(avail.counterAvailabilityImageSize, 0);
        avail.pCounterAvailabilityImage = availability.data();
        if (!check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", note))
            return false;
        availability.resize(avail.counterAvailabilityImageSize);  // bytes actually written
        return true;
    }

    // Names among `names` the host API does not know for this chip (empty if it cannot tell).
    static std::vector<std::string> unknown_names(CUpti_Profiler_Host_Object* host,
                                                  const std::vector<std::string>& names) {
        std::vector<std::string> unknown;
        for (const auto& n : names) {
            CUpti_Profiler_Host_GetMetricProperties_Params p{};
            p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
            p.pHostObject = host;
            p.pMetricName = n.c_str();
            if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) unknown.push_back(n);
        }
        return unknown;
    }

    // The cached config for `names`, building it on first use. nullptr with `note` on failure.
    const Config* config_for(const std::vector<std::string>& names, std::string& note) {
        const std::string key = cache_key(names);
        if (auto it = configs.find(key); it != configs.end()) return &it->second;

        Config config;
        CUpti_Profiler_Host_Initialize_Params hi{};
        hi.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
        hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        hi.pChipName = chip.c_str();
        hi.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
        if (!check(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize", note)) return nullptr;
        config.host = hi.pHostObject;
        // Until the config is cached, the host object is ours to release on every early return.
        struct HostGuard {
            CUpti_Profiler_Host_Object*& host;
            ~HostGuard() { deinit_host(host); }
        } guard{config.host};

        std::vector<const char*> cnames = c_names(names);
        CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
        add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
        add.pHostObject = config.host;
        add.ppMetricNames = cnames.data();
        add.numMetrics = cnames.size();
        if (CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
            // Name the culprits: a typo or a metric this chip lacks is the usual cause, and it is
            // not a property of the device, so it is not remembered in `refused`.
            const std::vector<std::string> unknown = unknown_names(config.host, names);
            if (r == CUPTI_ERROR_INVALID_METRIC_NAME || !unknown.empty()) {
                std::string list;
                for (const auto& n : unknown) list += (list.empty() ? "" : ", ") + n;
                note = "hardware counters skipped: unknown metric name" +
                       std::string(unknown.size() == 1 ? "" : "s") + " for chip " + chip + ": " +
                       (list.empty() ? std::string("(CUPTI did not say which)") : list) + " (" +
                       result_name(r) + "); list valid names with `ncu --query-metrics --chip " +
                       chip + "`";
                return nullptr;
            }
            fail(r, "cuptiProfilerHostConfigAddMetrics", note);
            return nullptr;
        }

        CUpti_Profiler_Host_GetConfigImageSize_Params size{};
        size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
        size.pHostObject = config.host;
        if (!check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize", note))
            return nullptr;
        config.image.assign(size.configImageSize, 0);

        CUpti_Profiler_Host_GetConfigImage_Params image{};
        image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
        image.pHostObject = config.host;
        image.configImageSize = config.image.size();
        image.pConfigImage = config.image.data();
        if (!check(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage", note))
            return nullptr;

        // Informational; the replay loop trusts isAllPassSubmitted, not this number.
        CUpti_Profiler_Host_GetNumOfPasses_Params passes{};
        passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
        passes.configImageSize = config.image.size();
        passes.pConfigImage = config.image.data();
        if (cuptiProfilerHostGetNumOfPasses(&passes) == CUPTI_SUCCESS) config.passes = passes.numOfPasses;

        CUpti_Profiler_Host_Object* host = std::exchange(config.host, nullptr);  // disarm the guard
        Config& cached = configs[key];
        cached = std::move(config);
        cached.host = host;
        return &cached;
    }

    // The range profiler enabled on the context for one measurement. Its destructor unwinds
    // whatever is still open (a throwing run(), a failed call), so the context is always left
    // with profiling disabled.
    struct Session {
        CUpti_RangeProfiler_Object* object = nullptr;
        bool started = false;
        bool pushed = false;

        Session() = default;
        Session(const Session&) = delete;
        Session& operator=(const Session&) = delete;
        ~Session() {
            if (object == nullptr) return;
            if (pushed) {
                CUpti_RangeProfiler_PopRange_Params p{};
                p.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
                p.pRangeProfilerObject = object;
                (void)cuptiRangeProfilerPopRange(&p);
            }
            if (started) {
                CUpti_RangeProfiler_Stop_Params p{};
                p.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
                p.pRangeProfilerObject = object;
                (void)cuptiRangeProfilerStop(&p);
            }
            CUpti_RangeProfiler_Disable_Params p{};
            p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
            p.pRangeProfilerObject = object;
            (void)cuptiRangeProfilerDisable(&p);
        }
    };

    std::map<std::string, double> measure(int device, const std::function<void()>& run,
                                          const std::vector<std::string>& metrics, std::string& note,
                                          const std::function<void()>& before_pass) {
        if (metrics.empty()) {
            note = "hardware counters skipped: no metrics requested";
            return {};
        }
        if (!refused.empty()) {
            note = refused;
            return {};
        }
        // The header promises `device` is current; setting it again is free and makes sure the
        // profiled context is the one run() launches into.
        if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
            note = cuda_note("cudaSetDevice", e);
            return {};
        }
        if (!prepare(device, note)) return {};

        const std::vector<std::string> names = unique_names(metrics);
        const Config* config = config_for(names, note);
        if (config == nullptr) return {};
        std::vector<const char*> cnames = c_names(names);

        Session session;
        CUpti_RangeProfiler_Enable_Params enable{};
        enable.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
        enable.ctx = ctx;
        if (!check(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable", note)) return {};
        session.object = enable.pRangeProfilerObject;

        // A fresh counter data image per measurement, sized for exactly one range.
        CUpti_RangeProfiler_GetCounterDataSize_Params data_size{};
        data_size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
        data_size.pRangeProfilerObject = session.object;
        data_size.pMetricNames = cnames.data();
        data_size.numMetrics = cnames.size();
        data_size.maxNumOfRanges = 1;
        data_size.maxNumRangeTreeNodes = 1;
        if (!check(cuptiRangeProfilerGetCounterDataSize(&data_size), "cuptiRangeProfilerGetCounterDataSize", note))
            return {};
        std::vector<std::uint8_t> counter_data(data_size.counterDataSize, 0);

        CUpti_RangeProfiler_CounterDataImage_Initialize_Params data_init{};
        data_init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
        data_init.pRangeProfilerObject = session.object;
        data_init.counterDataSize = counter_data.size();
        data_init.pCounterData = counter_data.data();
        if (!check(cuptiRangeProfilerCounterDataImageInitialize(&data_init),
                   "cuptiRangeProfilerCounterDataImageInitialize", note))
            return {};

        CUpti_RangeProfiler_SetConfig_Params set{};
        set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
        set.pRangeProfilerObject = session.object;
        set.configSize = config->image.size();
        set.pConfig = config->image.data();
        set.counterDataImageSize = counter_data.size();
        set.pCounterDataImage = counter_data.data();
        set.range = CUPTI_UserRange;
        set.replayMode = CUPTI_UserReplay;
        set.maxRangesPerPass = 1;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        if (!check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig", note)) return {};

        // User replay: the same work once per pass until CUPTI has scheduled every counter.
        bool all_submitted = false;
        for (std::size_t pass = 0; !all_submitted; ++pass) {
            if (pass == kMaxPasses) {
                note = "hardware counters failed: CUPTI still wanted more passes after " +
                       std::to_string(kMaxPasses) + " replays (expected " + std::to_string(config->passes) +
                       "): timing only";
                return {};
            }
            if (before_pass) before_pass();  // before Start: its work is not counted
            CUpti_RangeProfiler_Start_Params start{};
            start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
            start.pRangeProfilerObject = session.object;
            if (!check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart", note)) return {};
            session.started = true;

            CUpti_RangeProfiler_PushRange_Params push{};
            push.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
            push.pRangeProfilerObject = session.object;
            push.pRangeName = kRangeName;
            if (!check(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange", note)) return {};
            session.pushed = true;

            run();  // a workload error propagates; `session` unwinds the profiler first

            CUpti_RangeProfiler_PopRange_Params pop{};
            pop.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
            pop.pRangeProfilerObject = session.object;
            session.pushed = false;  // whatever PopRange says, do not pop twice
            if (!check(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange", note)) return {};

            CUpti_RangeProfiler_Stop_Params stop{};
            stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
            stop.pRangeProfilerObject = session.object;
            session.started = false;
            if (!check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", note)) return {};
            all_submitted = stop.isAllPassSubmitted != 0;
        }

        CUpti_RangeProfiler_DecodeData_Params decode{};
        decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
        decode.pRangeProfilerObject = session.object;
        if (!check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData", note)) return {};
        if (decode.numOfRangeDropped != 0) {
            note = "hardware counters failed: CUPTI dropped the measured range: timing only";
            return {};
        }

        CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
        info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
        info.pCounterDataImage = counter_data.data();
        info.counterDataImageSize = counter_data.size();
        if (!check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo", note))
            return {};
        if (info.numTotalRanges < 1) {
            note = "hardware counters empty: no range was recorded (did run() launch work on device " +
                   std::to_string(device) + "?): timing only";
            return {};
        }

        std::vector<double> values(names.size(), 0.0);
        CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
        eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
        eval.pHostObject = config->host;
        eval.pCounterDataImage = counter_data.data();
        eval.counterDataImageSize = counter_data.size();
        eval.rangeIndex = 0;
        eval.ppMetricNames = cnames.data();
        eval.numMetrics = cnames.size();
        eval.pMetricValues = values.data();
        if (!check(cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues", note))
            return {};

        // Keyed by the caller's exact names, so derived figures (FLOP = fadd + fmul + 2 ffma,
        // DRAM bytes = read + write) are plain look-ups on the caller's side.
        std::map<std::string, double> out;
        for (std::size_t i = 0; i < names.size(); ++i) out[names[i]] = values[i];
        return out;  // `session` disables the range profiler on the way out
    }
};

RangeProfiler::RangeProfiler(int device_index) : state_(std::make_unique<State>()), device_(device_index) {}

RangeProfiler::~RangeProfiler() = default;

std::map<std::string, double> RangeProfiler::measure(const std::function<void()>& run,
                                                     const std::vector<std::string>& metrics, std::string& note,
                                                     const std::function<void()>& before_pass) {
    return state_->measure(device_, run, metrics, note, before_pass);
}

}  // namespace lab::cuda

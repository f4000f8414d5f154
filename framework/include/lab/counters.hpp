// Hardware counters for the roofline: the metric names a workload asks a GPU for (Nsight
// Compute's, read through the CUPTI Range Profiler) and how they turn into FLOP and DRAM bytes,
// so a lesson can place a kernel from counters as well as from its analytic counts.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace lab::counters {

inline const std::vector<std::string>& roofline_metric_names() {
    static const std::vector<std::string> names = {
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", "dram__bytes_read.sum",
        "dram__bytes_write.sum",
    };
    return names;
}

struct Counted {
    double flops = 0;
    double bytes = 0;
    bool has_flops = false;
    bool has_bytes = false;
};

// FLOP = fadd + fmul + 2 ffma, the same for d* (fp64); the h* (fp16) instructions are packed
// pairs: hadd and hmul count 2, hfma 4 (Nsight Compute's roofline). Tensor-core work does not
// appear in these counters at all. Bytes = DRAM read + write.
inline Counted from_counters(const std::map<std::string, double>& c) {
    auto get = [&](const char* suffix, double weight, bool& found) {
        auto it = c.find(std::string("smsp__sass_thread_inst_executed_op_") + suffix + "_pred_on.sum");
        if (it == c.end()) return 0.0;
        found = true;
        return weight * it->second;
    };
    Counted r;
    r.flops = get("fadd", 1, r.has_flops) + get("fmul", 1, r.has_flops) + get("ffma", 2, r.has_flops) +
              get("dadd", 1, r.has_flops) + get("dmul", 1, r.has_flops) + get("dfma", 2, r.has_flops) +
              get("hadd", 2, r.has_flops) + get("hmul", 2, r.has_flops) + get("hfma", 4, r.has_flops);
    auto rd = c.find("dram__bytes_read.sum"), wr = c.find("dram__bytes_write.sum");
    if (rd != c.end() && wr != c.end()) {
        r.bytes = rd->second + wr->second;
        r.has_bytes = true;
    }
    return r;
}

}  // namespace lab::counters

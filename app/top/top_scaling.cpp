#include "top/top_scaling.hpp"

#include <fmt/format.h>

#include "curve_store/curve_store_path.hpp"
#include "model/user_error.hpp"
#include "planner/classification.hpp"
#include "planner/scaling_curve.hpp"

namespace gpupart::top {

std::string scaling_text(const StoredCurve& curve) {
    try {
        const CurveFit fit = fit_curve(curve.points);
        const Classification c = classify_measured(curve.points, fit, curve.total_tpcs, curve.memory_throughput);
        return fmt::format("{} {:.2f}x", c.intensity == Intensity::memory ? "memory" : "compute", c.half_to_full_speedup);
    } catch (const UserError&) {
        return "";  // a curve that cannot be fitted says nothing about the process's class
    }
}

ScalingClasses::ScalingClasses(std::string dir) : dir_(std::move(dir)) {
    if (dir_.empty()) {
        try {
            dir_ = default_curve_directory();
        } catch (const UserError&) {
            dir_.clear();  // no HOME and no XDG_STATE_HOME: nobody saved a curve here
        }
    }
}

void ScalingClasses::add_to(TopData& data, const std::string& gpu_key, std::chrono::steady_clock::time_point now) {
    if (!dir_.empty() && (!read_at_ || now - *read_at_ >= reread)) {
        read_at_ = now;
        text_.clear();
        std::vector<std::string> unreadable;  // a corrupt curve file is the CLI's to report, not top's
        for (const StoredCurve& curve : CurveStore{dir_}.list(&unreadable))
            text_[{one_line(curve.identity.command), one_line(curve.identity.user), curve.identity.gpu}] = scaling_text(curve);
    }
    for (TopProcess& process : data.processes)
        if (const auto it = text_.find({process.command, process.user, gpu_key}); it != text_.end()) process.scaling = it->second;
}

}  // namespace gpupart::top

#include "fleet/claim_book.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/gpu_queries.hpp"
#include "model/placement.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

// "GPU-... (NVIDIA H200)": how messages name the GPU.
std::string gpu_words(const Gpu& gpu) { return fmt::format("GPU {} ({}, {})", gpu.index, gpu_display_name(gpu), gpu_key(gpu)); }

std::string request_words(const ClaimRequest& request) {
    return fmt::format("{} {}", request.count, request.unit == ClaimUnit::gpcs ? "whole GPCs" : "TPCs");
}

}  // namespace

ClaimBook::ClaimBook(std::string gpu_key, TpcMask real_tpcs) : gpu_key_(std::move(gpu_key)), real_tpcs_(real_tpcs) {}

ClaimBook::ClaimBook(std::string gpu_key, TpcMask real_tpcs, std::vector<Claim> claims)
    : ClaimBook(std::move(gpu_key), real_tpcs) {
    TpcMask held;
    for (Claim& claim : claims) {
        check_claim_uid(claim.uid);
        if (find(claim.uid) != nullptr) throw UserError(fmt::format("claim {} is recorded twice", claim.uid));
        if (claim.tpcs.empty()) throw UserError(fmt::format("claim {} holds no TPC", claim.uid));
        if ((claim.tpcs & ~real_tpcs_) != TpcMask{})
            throw UserError(fmt::format("claim {} holds TPCs {}, which are not real TPCs of {}", claim.uid,
                                        (claim.tpcs & ~real_tpcs_).to_list(), gpu_key_));
        if ((claim.tpcs & held) != TpcMask{})
            throw UserError(fmt::format("claim {} shares TPCs {} with another claim", claim.uid,
                                        (claim.tpcs & held).to_list()));
        held |= claim.tpcs;
        claims_.push_back(std::move(claim));
    }
}

const Claim* ClaimBook::find(const std::string& uid) const {
    const auto it = std::find_if(claims_.begin(), claims_.end(), [&](const Claim& c) { return c.uid == uid; });
    return it == claims_.end() ? nullptr : &*it;
}

TpcMask ClaimBook::held() const {
    TpcMask held;
    for (const Claim& claim : claims_) held |= claim.tpcs;
    return held;
}

ClaimBook::Prepared ClaimBook::prepare(const Gpu& gpu, const ClaimRequest& request, const std::string& now_utc) {
    check_claim_request(request);
    if (gpupart::gpu_key(gpu) != gpu_key_ || gpupart::real_tpcs(gpu) != real_tpcs_)
        throw UserError(fmt::format("{} is not the GPU these claims were recorded for ({}, real TPCs {}): the GPU or "
                                    "its floorsweeping changed; nothing prepared",
                                    gpu_words(gpu), gpu_key_, real_tpcs_.to_list()));
    if (const Claim* known = find(request.uid)) {
        if (known->unit == request.unit && known->count == request.count && known->namespace_name == request.namespace_name)
            return {*known, true};
        throw UserError(fmt::format("claim {} is already prepared on {} with {} {} in namespace {}; it asks {} in "
                                    "namespace {} now: unprepare it first; nothing changed",
                                    request.uid, gpu_key_, known->count, to_string(known->unit), known->namespace_name,
                                    request_words(request), request.namespace_name));
    }
    const TpcMask available = free();
    const int total = real_tpcs_.count();
    TpcMask placed;
    if (request.unit == ClaimUnit::tpcs) {
        if (request.count > total)
            throw UserError(fmt::format("claim {} asks {} TPCs; {} has {}: it can never fit", request.uid, request.count,
                                        gpu_words(gpu), total));
        if (request.count > available.count())
            throw UserError(fmt::format("claim {} asks {} TPCs; {} of the {} TPCs of {} are free ({} {} the rest): it "
                                        "does not fit now; nothing changed",
                                        request.uid, request.count, available.count(), total, gpu_words(gpu),
                                        claims_.size(), claims_.size() == 1 ? "claim holds" : "claims hold"));
        placed = place_tpcs_packed(gpu, request.count, available);
    } else {
        try {
            placed = place_whole_gpcs(gpu, request.count, available);
        } catch (const UserError& error) {
            throw UserError(fmt::format("claim {}: {}", request.uid, error.what()));
        }
    }
    Claim claim{request.uid, request.namespace_name, request.name, request.unit, request.count,
                placed,      claim_job(request.namespace_name, request.uid), now_utc};
    claims_.push_back(claim);
    return {std::move(claim), false};
}

std::optional<Claim> ClaimBook::release(const std::string& uid) {
    const auto it = std::find_if(claims_.begin(), claims_.end(), [&](const Claim& c) { return c.uid == uid; });
    if (it == claims_.end()) return std::nullopt;
    Claim released = std::move(*it);
    claims_.erase(it);
    return released;
}

TpcMask place_whole_gpcs(const Gpu& gpu, int count, const TpcMask& available) {
    if (count < 1) throw UserError("a GPC count must be at least 1");
    struct Whole {
        int index;
        TpcMask tpcs;
    };
    std::vector<Whole> whole;
    int with_tpcs = 0;
    for (const Gpc& gpc : gpu.gpcs) {
        const TpcMask tpcs = gpc_tpcs(gpu, gpc.index);
        if (tpcs.empty()) continue;
        ++with_tpcs;
        if ((tpcs & available) == tpcs) whole.push_back({gpc.index, tpcs});
    }
    if (count > with_tpcs)
        throw UserError(fmt::format("{} whole GPCs asked; {} has {}: it can never fit", count, gpu_display_name(gpu),
                                    with_tpcs));
    if (count > static_cast<int>(whole.size())) {
        std::vector<std::string> names;
        for (const Whole& w : whole) names.push_back(gpc_name(w.index));
        throw UserError(fmt::format("{} whole GPCs asked; {} of the {} GPCs of {} are wholly free{}: it does not fit "
                                    "now; nothing changed",
                                    count, whole.size(), with_tpcs, gpu_display_name(gpu),
                                    names.empty() ? std::string() : fmt::format(" ({})", fmt::join(names, ", "))));
    }
    std::stable_sort(whole.begin(), whole.end(),
                     [](const Whole& a, const Whole& b) { return a.tpcs.count() < b.tpcs.count(); });
    TpcMask placed;
    for (int i = 0; i < count; ++i) placed |= whole[static_cast<std::size_t>(i)].tpcs;
    return placed;
}

}  // namespace gpupart

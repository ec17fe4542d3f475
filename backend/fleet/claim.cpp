#include "fleet/claim.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

bool uid_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool uid_alnum(char c) { return uid_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// RFC 1123 label as Kubernetes checks it (IsDNS1123Label): a-z 0-9 '-', alphanumeric at both ends.
bool dns_label(std::string_view text, std::size_t max) {
    if (text.empty() || text.size() > max) return false;
    if (!uid_lower_alnum(text.front()) || !uid_lower_alnum(text.back())) return false;
    return std::all_of(text.begin(), text.end(), [](char c) { return uid_lower_alnum(c) || c == '-'; });
}

}  // namespace

std::string_view to_string(ClaimUnit unit) { return unit == ClaimUnit::gpcs ? "gpcs" : "tpcs"; }

void check_claim_uid(std::string_view uid) {
    const bool ok = !uid.empty() && uid.size() <= 64 && uid_alnum(uid.front()) &&
                    std::all_of(uid.begin(), uid.end(), [](char c) { return uid_alnum(c) || c == '-'; });
    if (!ok)
        throw UserError(fmt::format("claim uid '{}': not a Kubernetes uid (1 to 64 of a-z A-Z 0-9 '-', starting "
                                    "with a letter or digit; the claim's metadata.uid)",
                                    one_line(uid, 80)));
}

void check_claim_namespace(std::string_view namespace_name) {
    if (!dns_label(namespace_name, 63))
        throw UserError(fmt::format("namespace '{}': not a Kubernetes namespace (an RFC 1123 label: 1 to 63 of "
                                    "a-z 0-9 '-', a letter or digit at both ends)",
                                    one_line(namespace_name, 80)));
}

void check_claim_name(std::string_view name) {
    if (name.empty()) return;
    bool ok = name.size() <= 253;
    std::size_t start = 0;
    while (ok && start <= name.size()) {  // every dot-separated part is a label
        const std::size_t dot = std::min(name.find('.', start), name.size());
        ok = dns_label(name.substr(start, dot - start), 63);
        start = dot + 1;
    }
    if (!ok)
        throw UserError(fmt::format("claim name '{}': not a Kubernetes object name (an RFC 1123 subdomain: up to "
                                    "253 of a-z 0-9 '-' '.')",
                                    one_line(name, 80)));
}

void check_claim_request(const ClaimRequest& request) {
    check_claim_uid(request.uid);
    check_claim_namespace(request.namespace_name);
    check_claim_name(request.name);
    if (request.count < 1)
        throw UserError(fmt::format("claim {}: a request of {} {}; it must be at least 1", request.uid, request.count,
                                    to_string(request.unit)));
}

std::string claim_job(std::string_view namespace_name, std::string_view uid) {
    std::string job = fmt::format("k8s:{}/{}", namespace_name, uid);
    if (job.size() > kJobMaxBytes) job = fmt::format("k8s:{}", uid);
    return job;
}

}  // namespace gpupart

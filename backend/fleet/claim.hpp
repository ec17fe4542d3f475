#pragma once
// A Kubernetes ResourceClaim's share of one GPU as gpupart keeps it (docs/kubernetes.md): which claim, what it
// asked for (N TPCs, or N whole GPCs) and the TPCs it was given. The names a claim carries come from the API
// server through the kubelet, so each is checked against Kubernetes' own syntax before it reaches a file name,
// a CDI device name or the registry's job field.
#include <string>
#include <string_view>

#include "model/tpc_mask.hpp"

namespace gpupart {

enum class ClaimUnit { tpcs, gpcs };
std::string_view to_string(ClaimUnit unit);  // "tpcs", "gpcs"

struct ClaimRequest {
    std::string uid;        // metadata.uid of the ResourceClaim (the API server makes it a UUID)
    std::string namespace_name;
    std::string name;       // metadata.name; for people only, may be empty
    ClaimUnit unit = ClaimUnit::tpcs;
    int count = 0;          // TPCs, or whole GPCs
    bool operator==(const ClaimRequest&) const = default;
};

struct Claim {
    std::string uid;
    std::string namespace_name;
    std::string name;
    ClaimUnit unit = ClaimUnit::tpcs;
    int count = 0;
    TpcMask tpcs;           // what it was given: GPC-packed, disjoint from every other claim on the GPU
    std::string job;        // GPUPART_JOB of its processes (claim_job)
    std::string prepared;   // when, UTC, "2026-11-24T10:00:00Z"
    bool operator==(const Claim&) const = default;
};

// Each throws UserError with one line when the text is not what Kubernetes allows (and gpupart can use in a
// file name): a uid is 1 to 64 of a-z A-Z 0-9 '-' starting with a letter or digit; a namespace is an RFC 1123
// label (1 to 63 of a-z 0-9 '-', alphanumeric at both ends); a name is an RFC 1123 subdomain (up to 253 of
// a-z 0-9 '-' '.'), or empty.
void check_claim_uid(std::string_view uid);
void check_claim_namespace(std::string_view namespace_name);
void check_claim_name(std::string_view name);
void check_claim_request(const ClaimRequest& request);  // the three above and a count of at least 1

// The registry slot header's `job` (63 printable bytes and a NUL, registry_layout.h) for the claim's
// processes: "k8s:<namespace>/<uid>" when it fits, else "k8s:<uid>" (a uid is unique in the cluster; the
// claim state file keeps the namespace).
std::string claim_job(std::string_view namespace_name, std::string_view uid);
inline constexpr std::size_t kJobMaxBytes = 63;

}  // namespace gpupart

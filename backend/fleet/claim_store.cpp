#include "fleet/claim_store.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fleet/owned_directory.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

using Json = nlohmann::ordered_json;
constexpr std::string_view kFormat = "gpupart-k8s-claims";
constexpr int kVersion = 2;        // masks are TPC numbers ("numbering": "tpc")
constexpr int kBitsVersion = 1;    // masks were launch-descriptor bits (before TPC numbers)
constexpr std::string_view kNumbering = "tpc";
constexpr std::size_t kMaxFileBytes = 1 << 20;  // 128 claims of a few hundred bytes each fit many times over
constexpr std::size_t kMaxClaims = TpcMask::kWidth;  // every claim holds at least one TPC
// A prepare holds the lock for milliseconds; longer means a gpupart is stopped or stuck.
constexpr auto kLockWait = std::chrono::seconds(10);

[[noreturn]] void refuse_claims_file(const std::string& origin, const std::string& what) {
    throw UserError(fmt::format("claims file {}: {}; nothing changed (move the file away only once its claims' pods "
                                "are gone)",
                                one_line(origin), one_line(what)));
}

const Json& field(const Json& object, const char* key, const std::string& origin) {
    const auto it = object.find(key);
    if (it == object.end()) refuse_claims_file(origin, fmt::format("'{}' is missing", key));
    return *it;
}

std::string text(const Json& object, const char* key, const std::string& origin) {
    const Json& value = field(object, key, origin);
    if (!value.is_string()) refuse_claims_file(origin, fmt::format("'{}' must be a string", key));
    const auto& result = value.get_ref<const std::string&>();
    if (result.size() > 512) refuse_claims_file(origin, fmt::format("'{}' is longer than 512 bytes", key));
    return result;
}

// A mask of the file in TPC numbers: as written (version 2), or a version 1 file's descriptor bits through the
// GPU's map (`bits_map`; the caller refused such a file without one).
TpcMask mask(const Json& object, const char* key, const std::string& origin, const TpcNumbering* bits_map = nullptr) {
    const auto parsed = TpcMask::parse_hex(text(object, key, origin));
    if (!parsed) refuse_claims_file(origin, fmt::format("'{}' is not a TPC mask (0x and hex digits)", key));
    if (bits_map == nullptr) return *parsed;
    TpcMask holes;
    const TpcMask numbers = bits_map->to_numbers(*parsed, &holes);
    if (!holes.empty())
        refuse_claims_file(origin, fmt::format("'{}' holds launch-descriptor bits {}, which are no TPC of this GPU", key,
                                               holes.to_list()));
    return numbers;
}

int count(const Json& object, const char* key, const std::string& origin) {
    const Json& value = field(object, key, origin);
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > TpcMask::kWidth)
        refuse_claims_file(origin, fmt::format("'{}' must be a whole number from 1 to {}", key, TpcMask::kWidth));
    return value.get<int>();
}

Claim claim_from(const Json& item, const std::string& origin, const TpcNumbering* bits_map) {
    if (!item.is_object()) refuse_claims_file(origin, "a claim must be an object");
    Claim claim;
    claim.uid = text(item, "uid", origin);
    claim.namespace_name = text(item, "namespace", origin);
    claim.name = text(item, "name", origin);
    try {
        check_claim_uid(claim.uid);
        check_claim_namespace(claim.namespace_name);
        check_claim_name(claim.name);
    } catch (const UserError& error) {
        refuse_claims_file(origin, error.what());
    }
    const std::string unit = text(item, "unit", origin);
    if (unit != "tpcs" && unit != "gpcs") refuse_claims_file(origin, fmt::format("claim {}: unit '{}' is neither tpcs nor gpcs", claim.uid, unit));
    claim.unit = unit == "gpcs" ? ClaimUnit::gpcs : ClaimUnit::tpcs;
    claim.count = count(item, "count", origin);
    claim.tpcs = mask(item, "tpcs", origin, bits_map);
    if (claim.unit == ClaimUnit::tpcs && claim.tpcs.count() != claim.count)
        refuse_claims_file(origin, fmt::format("claim {} asked {} TPCs but holds {}", claim.uid, claim.count, claim.tpcs.count()));
    claim.job = text(item, "job", origin);
    if (claim.job != claim_job(claim.namespace_name, claim.uid))
        refuse_claims_file(origin, fmt::format("claim {}: job '{}' is not the claim's", claim.uid, claim.job));
    claim.prepared = text(item, "prepared", origin);
    return claim;
}

// A GPU key is a UUID ("GPU-..." or "MIG-..."): it becomes a file name only when it holds nothing else.
bool plain_gpu_key(std::string_view key) {
    return !key.empty() && key.size() <= 64 && key.front() != '-' &&
           key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") == std::string_view::npos;
}

void lock_claims(int fd, const std::string& path) {
    const auto deadline = std::chrono::steady_clock::now() + kLockWait;
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK)
            throw UserError(fmt::format("claims lock {}: cannot lock it: {}; nothing changed", one_line(path),
                                        std::strerror(errno)));
        if (std::chrono::steady_clock::now() > deadline)
            throw UserError(fmt::format("claims lock {}: another gpupart has held it for {} s (stopped or stuck?); "
                                        "nothing changed: retry",
                                        one_line(path), kLockWait.count()));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace

std::string claim_time_now() {
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

std::string claim_book_json(const ClaimBook& book) {
    Json claims = Json::array();
    for (const Claim& claim : book.claims())
        claims.push_back({{"uid", claim.uid},
                          {"namespace", claim.namespace_name},
                          {"name", claim.name},
                          {"unit", std::string(to_string(claim.unit))},
                          {"count", claim.count},
                          {"tpcs", claim.tpcs.to_hex()},
                          {"job", claim.job},
                          {"prepared", claim.prepared}});
    const Json file{{"format", kFormat},
                    {"version", kVersion},
                    {"numbering", kNumbering},
                    {"gpu", book.gpu_key()},
                    {"real_tpcs", book.real_tpcs().to_hex()},
                    {"claims", std::move(claims)}};
    return file.dump(2) + "\n";
}

ClaimBook claim_book_from_json(std::string_view text_in, const std::string& origin, const std::string& gpu_key,
                               const std::optional<TpcMask>& expected_real, const TpcNumbering* bits_map) {
    const Json file = Json::parse(text_in, nullptr, false);
    if (file.is_discarded() || !file.is_object()) refuse_claims_file(origin, "not a JSON object");
    if (text(file, "format", origin) != kFormat) refuse_claims_file(origin, fmt::format("'format' is not {}", kFormat));
    const Json& version = field(file, "version", origin);
    const bool numbers = version.is_number_integer() && version.get<std::int64_t>() == kVersion;
    const bool bits = version.is_number_integer() && version.get<std::int64_t>() == kBitsVersion;
    if (!numbers && !bits)
        refuse_claims_file(origin, fmt::format("version {} is not {} (written by another gpupart?)", version.dump(), kVersion));
    if (numbers && text(file, "numbering", origin) != kNumbering)
        refuse_claims_file(origin, fmt::format("'numbering' is not {}", kNumbering));
    if (text(file, "gpu", origin) != gpu_key)
        refuse_claims_file(origin, fmt::format("it is for GPU {}, not {}", text(file, "gpu", origin), gpu_key));
    // Version 1 masks are descriptor bits: never read them as numbers (they name other TPCs).
    if (bits && bits_map == nullptr)
        refuse_claims_file(origin, "it was written by an older gpupart in launch-descriptor bits (version 1) and this GPU's "
                                   "TPC map is not known here: run `gpupart probe` on the GPU, then again; a prepare then "
                                   "writes it in TPC numbers");
    const TpcNumbering* from_bits = bits ? bits_map : nullptr;
    const TpcMask recorded = mask(file, "real_tpcs", origin, from_bits);
    const TpcMask real_tpcs = expected_real.value_or(recorded);
    if (recorded != real_tpcs)
        refuse_claims_file(origin, fmt::format("recorded when the GPU's real TPCs were {}; they are {} now (another GPU, or another "
                                 "floorsweeping)",
                                 recorded.to_list(), real_tpcs.to_list()));
    const Json& items = field(file, "claims", origin);
    if (!items.is_array()) refuse_claims_file(origin, "'claims' must be an array");
    if (items.size() > kMaxClaims) refuse_claims_file(origin, fmt::format("more than {} claims", kMaxClaims));
    std::vector<Claim> claims;
    for (const Json& item : items) claims.push_back(claim_from(item, origin, from_bits));
    try {
        return ClaimBook(gpu_key, real_tpcs, std::move(claims));
    } catch (const UserError& error) {
        refuse_claims_file(origin, error.what());
    }
}

ClaimStore::ClaimStore(std::string directory, Access access) : directory_(std::move(directory)), access_(access) {
    if (!use_owned_directory(directory_, "claims directory", access == Access::change)) return;
    if (access != Access::change) return;  // files are replaced whole: a reader never sees half of one
    const std::string lock_path = directory_ + "/lock";
    auto opened = open_regular(lock_path, O_RDWR | O_CREAT, Links::refuse, "claims lock", false, 0600);
    lock_ = std::move(opened->fd);
    lock_claims(lock_.get(), lock_path);
}

std::string ClaimStore::path_of(const std::string& gpu_key) const {
    if (!plain_gpu_key(gpu_key)) throw UserError(fmt::format("GPU '{}': not a GPU UUID gpupart keeps claims for", one_line(gpu_key, 80)));
    return fmt::format("{}/{}.claims.json", directory_, gpu_key);
}

ClaimBook ClaimStore::load(const std::string& gpu_key, const TpcMask& real_tpcs, const TpcNumbering* bits_map) const {
    const std::string path = path_of(gpu_key);
    const auto content = read_regular_file_if_exists(path, kMaxFileBytes, Links::refuse, "claims file");
    if (!content) return ClaimBook(gpu_key, real_tpcs);
    return claim_book_from_json(*content, path, gpu_key, real_tpcs, bits_map);
}

ClaimBook ClaimStore::load_as_recorded(const std::string& gpu_key, const TpcNumbering* bits_map) const {
    const std::string path = path_of(gpu_key);
    const auto content = read_regular_file_if_exists(path, kMaxFileBytes, Links::refuse, "claims file");
    if (!content) return ClaimBook(gpu_key, TpcMask{});
    return claim_book_from_json(*content, path, gpu_key, std::nullopt, bits_map);
}

std::vector<std::string> ClaimStore::gpu_keys() const {
    std::vector<std::string> keys;
    std::error_code error;
    std::filesystem::directory_iterator it(directory_, error);
    if (error) {
        if (error == std::errc::no_such_file_or_directory) return keys;
        throw UserError(fmt::format("claims directory {}: cannot read it: {}", one_line(directory_), error.message()));
    }
    constexpr std::string_view kSuffix = ".claims.json";
    for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (!name.ends_with(kSuffix)) continue;
        const std::string key = name.substr(0, name.size() - kSuffix.size());
        if (plain_gpu_key(key)) keys.push_back(key);
    }
    if (error) throw UserError(fmt::format("claims directory {}: cannot read it: {}", one_line(directory_), error.message()));
    std::sort(keys.begin(), keys.end());
    return keys;
}

void ClaimStore::save(const ClaimBook& book) const {
    if (access_ != Access::change) throw std::logic_error("ClaimStore::save on a store opened for reading");
    replace_file(path_of(book.gpu_key()), claim_book_json(book), 0644, "claims file");
}

}  // namespace gpupart

#include "curve_store/curve_store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <sys/stat.h>

#include "model/user_error.hpp"
#include "platform/make_directories.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

bool is_curve_name(const std::string& name) {
    return name.size() == std::string_view("curve-0123456789abcdef.json").size() && name.starts_with("curve-") &&
           name.ends_with(".json");
}

}  // namespace

std::string CurveStore::path_of(const CurveIdentity& identity) const {
    return dir + "/" + curve_file_name(identity);
}

std::string CurveStore::save(const StoredCurve& curve) const {
    if (dir.empty()) throw UserError("scaling curves: no directory given for the curves");
    const std::string text = curve_to_json(curve);
    parse_curve_json(text, "the curve to save");  // never write what could not be read back
    make_directories(dir, 0700, "scaling curves");  // private: a curve file names the user's commands
    const std::string path = path_of(curve.identity);
    replace_file(path, text, 0600, "scaling curve");
    return path;
}

std::optional<StoredCurve> CurveStore::load(const CurveIdentity& identity) const {
    const std::string path = path_of(identity);
    const auto text = read_regular_file_if_exists(path, kMaxCurveBytes, Links::refuse, "scaling curve");
    if (!text) return std::nullopt;
    StoredCurve curve = parse_curve_json(*text, path);
    // The name is a 64-bit hash: a file of another identity under it is not this process's curve.
    if (curve.identity != identity) return std::nullopt;
    return curve;
}

std::vector<StoredCurve> CurveStore::list(std::vector<std::string>* problems) const {
    std::vector<StoredCurve> curves;
    std::error_code error;
    std::filesystem::directory_iterator it(dir, error);
    if (error) {
        if (error != std::errc::no_such_file_or_directory && problems)
            problems->push_back(fmt::format("scaling curves {}: cannot list: {}", dir, error.message()));
        return curves;
    }
    std::vector<std::string> names;
    for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
        if (error) break;
        const std::string name = it->path().filename().string();
        if (is_curve_name(name)) names.push_back(name);
    }
    std::sort(names.begin(), names.end());  // a stable order for front ends and tests
    for (const std::string& name : names) {
        const std::string path = dir + "/" + name;
        try {
            const auto text = read_regular_file_if_exists(path, kMaxCurveBytes, Links::refuse, "scaling curve");
            if (!text) continue;  // removed meanwhile
            StoredCurve curve = parse_curve_json(*text, path);
            if (curve_file_name(curve.identity) != name) {
                if (problems)
                    problems->push_back(fmt::format("{}: its identity does not match its file name; it was renamed "
                                                    "or edited: measure the process again or delete the file",
                                                    path));
                continue;
            }
            curves.push_back(std::move(curve));
        } catch (const UserError& e) {
            if (problems) problems->push_back(e.what());
        }
    }
    return curves;
}

}  // namespace gpupart

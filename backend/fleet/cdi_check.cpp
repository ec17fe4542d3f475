// cdi_spec_problems (cdi_spec.hpp): the CDI specification's rules as gpupart's authors know them
// (container-device-interface SPEC.md, versions 0.3.0 to 0.8.0), written from the specification's text, not
// from its Go validation; a cluster must still run the real one (`cdi validate` or the runtime) on our output.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "fleet/cdi_spec.hpp"

namespace gpupart {
namespace {

using AnyJson = nlohmann::json;
using Problems = std::vector<std::string>;

bool cdi_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Letters and digits at both ends, letters, digits and `extra` between.
bool name_like(std::string_view text, std::string_view extra) {
    if (text.empty() || !cdi_alnum(text.front()) || !cdi_alnum(text.back())) return false;
    return std::all_of(text.begin(), text.end(), [&](char c) { return cdi_alnum(c) || extra.find(c) != std::string_view::npos; });
}

bool absolute(const AnyJson& value) { return value.is_string() && value.get_ref<const std::string&>().starts_with('/'); }

void only_keys(const AnyJson& object, std::initializer_list<std::string_view> known, const std::string& where, Problems& out) {
    for (const auto& [key, value] : object.items())
        if (std::find(known.begin(), known.end(), key) == known.end()) out.push_back(fmt::format("{}: unknown field '{}'", where, key));
}

void check_strings(const AnyJson& value, const std::string& where, Problems& out) {
    if (!value.is_array()) return out.push_back(fmt::format("{}: must be an array of strings", where));
    for (const AnyJson& item : value)
        if (!item.is_string()) return out.push_back(fmt::format("{}: must be an array of strings", where));
}

void check_annotations(const AnyJson& spec_part, const std::string& where, Problems& out) {
    const auto it = spec_part.find("annotations");
    if (it == spec_part.end()) return;
    if (!it->is_object()) return out.push_back(fmt::format("{}.annotations: must be an object of strings", where));
    for (const auto& [key, value] : it->items())
        if (key.empty() || !value.is_string()) out.push_back(fmt::format("{}.annotations.{}: must be a string", where, key));
}

void check_edits(const AnyJson& edits, const std::string& where, Problems& out) {
    if (!edits.is_object()) return out.push_back(fmt::format("{}: must be an object", where));
    only_keys(edits, {"env", "deviceNodes", "mounts", "hooks", "intelRdt", "additionalGids"}, where, out);
    if (edits.empty()) out.push_back(fmt::format("{}: no edits", where));
    if (const auto env = edits.find("env"); env != edits.end()) {
        check_strings(*env, where + ".env", out);
        if (env->is_array())
            for (const AnyJson& entry : *env) {
                if (!entry.is_string()) continue;
                const std::size_t equals = entry.get_ref<const std::string&>().find('=');
                if (equals == std::string::npos || equals == 0)
                    out.push_back(fmt::format("{}.env: '{}' is not NAME=value", where, entry.get<std::string>()));
            }
    }
    if (const auto nodes = edits.find("deviceNodes"); nodes != edits.end()) {
        if (!nodes->is_array()) return out.push_back(fmt::format("{}.deviceNodes: must be an array", where));
        for (const AnyJson& node : *nodes) {
            const std::string at = where + ".deviceNodes[]";
            if (!node.is_object()) { out.push_back(at + ": must be an object"); continue; }
            only_keys(node, {"path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid", "gid"}, at, out);
            if (!absolute(node.value("path", AnyJson()))) out.push_back(at + ": 'path' must be an absolute path");
            if (node.contains("hostPath") && !absolute(node["hostPath"])) out.push_back(at + ": 'hostPath' must be an absolute path");
            const std::string type = node.value("type", std::string("c"));
            if (type != "b" && type != "c" && type != "u" && type != "p") out.push_back(fmt::format("{}: type '{}' is not b, c, u or p", at, type));
            const std::string permissions = node.value("permissions", std::string("rw"));
            if (permissions.find_first_not_of("rwm") != std::string::npos)
                out.push_back(fmt::format("{}: permissions '{}' are not of r, w, m", at, permissions));
        }
    }
    if (const auto mounts = edits.find("mounts"); mounts != edits.end()) {
        if (!mounts->is_array()) return out.push_back(fmt::format("{}.mounts: must be an array", where));
        for (const AnyJson& mount : *mounts) {
            const std::string at = where + ".mounts[]";
            if (!mount.is_object()) { out.push_back(at + ": must be an object"); continue; }
            only_keys(mount, {"hostPath", "containerPath", "type", "options"}, at, out);
            if (!mount.contains("hostPath") || !mount["hostPath"].is_string() || mount["hostPath"].get<std::string>().empty())
                out.push_back(at + ": 'hostPath' is required");
            if (!absolute(mount.value("containerPath", AnyJson()))) out.push_back(at + ": 'containerPath' must be an absolute path");
            if (mount.contains("options")) check_strings(mount["options"], at + ".options", out);
        }
    }
    if (const auto hooks = edits.find("hooks"); hooks != edits.end()) {
        static const std::set<std::string> names = {"prestart", "createRuntime", "createContainer", "startContainer",
                                                    "poststart", "poststop"};
        if (!hooks->is_array()) return out.push_back(fmt::format("{}.hooks: must be an array", where));
        for (const AnyJson& hook : *hooks) {
            const std::string at = where + ".hooks[]";
            if (!hook.is_object()) { out.push_back(at + ": must be an object"); continue; }
            only_keys(hook, {"hookName", "path", "args", "env", "timeout"}, at, out);
            if (!hook.contains("hookName") || !hook["hookName"].is_string() || names.count(hook["hookName"].get<std::string>()) == 0)
                out.push_back(at + ": 'hookName' must be one of the OCI hook names");
            if (!absolute(hook.value("path", AnyJson()))) out.push_back(at + ": 'path' must be an absolute path");
        }
    }
}

}  // namespace

std::vector<std::string> cdi_spec_problems(const nlohmann::json& spec) {
    Problems out;
    if (!spec.is_object()) return {"the spec must be a JSON object"};
    only_keys(spec, {"cdiVersion", "kind", "annotations", "devices", "containerEdits"}, "spec", out);
    static const std::set<std::string> versions = {"0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0"};
    const AnyJson version = spec.value("cdiVersion", AnyJson());
    if (!version.is_string() || versions.count(version.get<std::string>()) == 0)
        out.push_back("cdiVersion: required, one of the released versions (0.3.0 to 0.8.0)");
    else if (spec.contains("annotations") && version.get<std::string>() < "0.6.0")
        out.push_back("annotations: need cdiVersion 0.6.0 or later");
    const AnyJson kind = spec.value("kind", AnyJson());
    const std::string kind_text = kind.is_string() ? kind.get<std::string>() : "";
    const std::size_t slash = kind_text.find('/');
    if (slash == std::string::npos || !name_like(kind_text.substr(0, slash), "-_.") ||
        !name_like(kind_text.substr(slash + 1), "-_"))
        out.push_back(fmt::format("kind '{}': required, vendor/class (vendor: letters, digits, - _ .; class: letters, "
                                  "digits, - _; each starting and ending with a letter or digit)",
                                  kind_text));
    check_annotations(spec, "spec", out);
    if (spec.contains("containerEdits")) check_edits(spec["containerEdits"], "spec.containerEdits", out);
    const AnyJson devices = spec.value("devices", AnyJson());
    if (!devices.is_array() || devices.empty()) {
        out.push_back("devices: required, at least one");
        return out;
    }
    std::set<std::string> names;
    for (const AnyJson& device : devices) {
        if (!device.is_object()) { out.push_back("devices[]: must be an object"); continue; }
        const std::string name = device.value("name", AnyJson()).is_string() ? device["name"].get<std::string>() : "";
        const std::string at = fmt::format("devices[{}]", name);
        only_keys(device, {"name", "annotations", "containerEdits"}, at, out);
        if (!name_like(name, "-_.:")) out.push_back(fmt::format("{}: name required, letters, digits, - _ . : (a letter or digit at both ends)", at));
        if (!names.insert(name).second) out.push_back(fmt::format("{}: name used twice", at));
        check_annotations(device, at, out);
        if (!device.contains("containerEdits")) out.push_back(at + ": containerEdits required");
        else check_edits(device["containerEdits"], at + ".containerEdits", out);
    }
    return out;
}

}  // namespace gpupart

#pragma once
// JSON written as block-style YAML, as `kubectl get -o yaml` shows objects, for `gpupart k8s resource-slice`.
// Every string is double-quoted with JSON's escapes, which YAML 1.2 reads the same (so "1" stays a string, a
// Quantity, and no text from a GPU record can become YAML syntax); keys are quoted unless they are plain words.
#include <string>

#include <nlohmann/json.hpp>

namespace gpupart {

std::string yaml_text(const nlohmann::ordered_json& value);

}  // namespace gpupart

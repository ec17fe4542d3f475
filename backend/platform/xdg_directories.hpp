#pragma once
// The XDG base directories gpupart keeps per-user files in (the probe cache, the history, scaling curves).
#include <optional>
#include <string>

namespace gpupart {

enum class XdgBase { cache, state };

// $XDG_CACHE_HOME / $XDG_STATE_HOME when it is an absolute path (the XDG spec ignores a relative one), else
// $HOME/.cache / $HOME/.local/state; nullopt when HOME is unset or empty (the caller says what to set).
std::optional<std::string> xdg_base_directory(XdgBase base);

}  // namespace gpupart

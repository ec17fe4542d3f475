#pragma once
// Directories the Kubernetes driver's state and its claims' registries live in (docs/kubernetes.md). What is
// in them decides which TPCs a container gets, so a directory is used only when nobody but its owner can
// change it: a real directory (not a symlink), owned by this user or root, not writable by group or others.
// Per-claim registry directories are the exception (made here, sticky and world-writable like /run/gpupart,
// because a container's processes of any uid register in them) and are removed without following anything
// a container left in them.
#include <string>

namespace gpupart {

// Creates `path` (and missing parents, mode 0755) when `create` and it is missing; then checks it as above.
// Throws UserError "<what> <path>: <why>" otherwise; false (nothing checked) when it is missing and !create.
bool use_owned_directory(const std::string& path, const std::string& what, bool create);

// "<root>/<uid>": the registry root one claim's containers see as /run/gpupart. Made mode 01777 (sticky: a
// process may remove only its own files) under an owned `root`, which is made mode 0700 so that only the
// claim's containers (through their bind mount) reach it, never another user of the node; an existing one
// is kept when it is a real directory of this user. Returns its path.
std::string make_claim_registry(const std::string& root, const std::string& uid);

// Removes "<root>/<uid>" and what is in it, never following a symlink (each level is opened with O_NOFOLLOW
// relative to the one above, so nothing a container swaps in meanwhile is followed), with at most 8 levels
// open at once (the shim makes two): a directory deeper than that is moved up to the top and removed from
// there, so nesting of any depth goes. False when it was not there. Throws UserError when it cannot be
// removed; part of it may be gone by then (the message never says "nothing changed").
bool remove_claim_registry(const std::string& root, const std::string& uid);

}  // namespace gpupart

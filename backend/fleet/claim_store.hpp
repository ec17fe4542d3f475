#pragma once
// Where the Kubernetes driver keeps its claims so that a restarted plugin (or `gpupart k8s`) finds them again:
// one JSON file per GPU, "<dir>/<gpu key>.claims.json", replaced whole (platform/safe_file.hpp), and
// "<dir>/lock", which whoever changes claims holds (flock) from reading the books to writing them, so two
// prepares at once never hand out one TPC twice. The directory must be owned (fleet/owned_directory.hpp).
// A file that is not exactly what this code writes (a FIFO, a symlink, over 1 MiB, not JSON, claims that
// overlap, a GPU whose real TPCs changed) is refused in one line naming it, never repaired or ignored.
// Masks are TPC numbers (version 2, "numbering": "tpc"). Files of version 1 hold launch-descriptor bits: they are
// read through the GPU's map (model/tpc_numbering.hpp) when the reader gives it, refused in one line when not, and
// the next change writes them again as version 2.
#include <optional>
#include <string>
#include <vector>

#include "fleet/claim_book.hpp"
#include "model/tpc_numbering.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {

class ClaimStore {
public:
    enum class Access { read, change };
    // Access::change creates the directory when missing and waits up to 10 s for the lock (UserError after).
    // Access::read of a missing directory reads empty books.
    ClaimStore(std::string directory, Access access);

    // The claims of the GPU `gpu_key` whose real TPCs are `real_tpcs` (an empty book when none are recorded).
    // `bits_map`, the GPU's map, reads a version 1 file (descriptor bits); without it such a file is refused.
    ClaimBook load(const std::string& gpu_key, const TpcMask& real_tpcs, const TpcNumbering* bits_map = nullptr) const;
    // The claims of the GPU `gpu_key` as its file records them, checked against the real TPCs recorded there:
    // for finding and releasing claims on a GPU whose topology is not at hand (gone, not probed), never for placing.
    ClaimBook load_as_recorded(const std::string& gpu_key, const TpcNumbering* bits_map = nullptr) const;
    // The GPUs that have a claims file, sorted (names that are no GPU key are not claims files and are left alone).
    std::vector<std::string> gpu_keys() const;
    // Replaces the GPU's file (Access::change only).
    void save(const ClaimBook& book) const;
    std::string path_of(const std::string& gpu_key) const;
    const std::string& directory() const { return directory_; }

private:
    std::string directory_;
    Access access_;
    FileDescriptor lock_;
};

// The file's text and back. `origin` names it in errors.
std::string claim_book_json(const ClaimBook& book);
// With `real_tpcs` nullopt, the real TPCs the file records are taken (load_as_recorded). `bits_map` as for load.
ClaimBook claim_book_from_json(std::string_view text, const std::string& origin, const std::string& gpu_key,
                               const std::optional<TpcMask>& real_tpcs, const TpcNumbering* bits_map = nullptr);

// Now, UTC, as claims record it: "2026-11-24T10:00:00Z".
std::string claim_time_now();

}  // namespace gpupart

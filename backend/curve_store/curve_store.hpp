#pragma once
// Where measured scaling curves are kept between `gpupart measure` and `gpupart plan`: one JSON file per
// process identity (command line, user, GPU) in a directory the caller chooses. A layer of its own
// (model, platform, planner) because it reads and writes files through platform's safe_file, which the
// planner itself may not use.
//  - Reading: Links::refuse (O_NOFOLLOW: a curve name inside the directory is never a symlink), regular
//    files only (a FIFO cannot block, a device node is never opened), at most kMaxCurveBytes.
//  - Writing: a temporary file with a random name, fsync'd, renamed over the old curve (atomic: a reader
//    sees the old curve or the new one, never half of one).
#include <optional>
#include <string>
#include <vector>

#include "planner/curve_json.hpp"

namespace gpupart {

struct CurveStore {
    std::string dir;  // created (mode 0700, parents too) on the first save

    // Saves `curve` (replacing an older curve of the same identity); returns its path. Throws UserError.
    std::string save(const StoredCurve& curve) const;
    // The curve of `identity`, nullopt when none was saved. Throws UserError when the file is there but
    // is not a readable curve (not a regular file, too large, corrupt), naming the file and what to do.
    std::optional<StoredCurve> load(const CurveIdentity& identity) const;
    // Every readable curve in the directory; files that are not (corrupt, not regular) are skipped and
    // described in `problems`, one line each. A missing directory holds no curves.
    std::vector<StoredCurve> list(std::vector<std::string>* problems = nullptr) const;
    std::string path_of(const CurveIdentity& identity) const;
};

}  // namespace gpupart

#pragma once
// Verifying the driver's per-stream TPC mask (docs/launch-path.md) on the driver build the probe runs on.
// The driver keeps a TPC mask in each stream object: a 32-bit enable word and four 32-bit words in which a
// set bit keeps that TPC out, at an offset that is not part of any API and moves between CUDA releases.
// gpupart writes it only where the probe has shown, on this GPU and driver, that launches on a stream so
// masked ran exactly on the SMs the mask names. Its bits are the TPC numbers gpupart shows (TPC k drives
// SMs 2k and 2k+1, model/tpc_numbering.hpp), not launch-descriptor bits, which have holes: the driver
// translates one into the other (measured on the H200: bit 1 ran on SMs 2,3, which descriptor bit 9 drives).
//
// The procedure, apart from CUDA so that CI runs it against simulated GPUs:
//  1. A mask that keeps nothing out: every SM the scan found must answer.
//  2. For each TPC number k: a mask that keeps every other number out must reach exactly the SMs of the
//     descriptor bit the scan found driving SMs 2k and 2k+1.
//  3. The first and the last number together: the union of their SMs.
// No launch allows a number beyond the real TPCs (that kernel would never be scheduled).
#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpupart {

// Runs one bounded kernel of `blocks` blocks on a stream whose mask field holds `disable` (enable word
// set) and returns the distinct SM ids reached, sorted. Throws StreamMaskUnusable when the field cannot
// be used at all (no stream object, the words there are not an empty mask on a fresh stream).
class StreamMaskLauncher {
public:
    virtual ~StreamMaskLauncher() = default;
    virtual std::vector<int> launch(const std::array<std::uint32_t, 4>& disable, int blocks) = 0;
};

class StreamMaskUnusable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct StreamMaskVerdict {
    bool verified = false;
    std::string why;  // one line: what was shown, or what did not match
    int launches = 0;
};

// `bit_sms`: the probe's scan (every descriptor bit; a hole has no SMs); `blocks`: a launch's blocks when it
// may reach every SM (launches confined to one or two TPCs use at most 8). Never throws
// StreamMaskUnusable: that is a verdict, not verified.
StreamMaskVerdict verify_stream_mask(StreamMaskLauncher& launcher, const std::map<int, std::vector<int>>& bit_sms,
                                     int blocks);

}  // namespace gpupart

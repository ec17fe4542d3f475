#pragma once
// What gpupart-probe prints and gpupart reads back: one GPU's mask-bit scan as line-oriented text.
// Lines, so that a probe killed half-way still leaves readable output and the cache is the same text;
// writer and parser live together so they cannot drift. The format (version 2; version 1, read as well,
// has no stream_mask line):
//
//   gpupart-probe 2
//   index 0                      CUDA device ordinal (PCI bus order)
//   name NVIDIA H100 80GB HBM3   (rest of the line)
//   uuid GPU-8e6e...
//   pci 00000000:04:00.0
//   cc 9.0
//   sms 132
//   cuda 13000                   cuDriverGetVersion
//   driver 580.159.04            kernel driver version, "unknown" when it could not be read
//   descriptor 0x40              launch descriptor version the shim saw
//   width 128                    mask bits the descriptor holds
//   anchor 0                     the real bit every one-bit launch also enabled
//   bit 0 0 1                    one line per mask bit 0..width-1: the SMs it drives, "-" for a hole
//   stream_mask 0x51c verified each of the 66 TPC numbers ran exactly on its SMs (68 launches)
//                                the driver's per-stream TPC mask (probe_stream_mask.hpp): its offset in the
//                                stream object and "verified", or "none"; then why, to the end of the line
//   launches 129
//   elapsed_ms 231.5             from cuInit to the last launch, inside the probe
//   end
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart {

struct ProbeDevice {
    int index = 0;
    std::string name;
    std::string uuid;
    std::string pci_bus_id;
    std::string compute_capability;
    int sm_count = 0;
    int cuda_driver_version = 0;
    std::string driver_version;
};

struct ProbeReport {
    static constexpr int kFormatVersion = 2;
    static constexpr int kOldestFormatVersion = 1;
    ProbeDevice device;
    int descriptor_version = 0;
    int mask_width = 0;
    int anchor_bit = -1;
    std::map<int, std::vector<int>> bit_sms;  // every probed bit; a hole has no SMs
    int stream_mask_offset = -1;  // where the stream mask was verified on this driver; -1: not verified
    std::string stream_mask_note; // why (empty in a version 1 report: not checked)
    int launches = 0;
    double elapsed_ms = 0;
};

std::string write_probe_report(const ProbeReport& report);

// Throws UserError "probe output line N: ..." for anything that is not a complete report of this
// format (a missing "end" means the probe was cut off).
ProbeReport parse_probe_report(std::string_view text);

}  // namespace gpupart

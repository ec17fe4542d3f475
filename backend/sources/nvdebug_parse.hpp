#pragma once
// Parsers for the text nvdebug (github.com/JoshuaJB/nvdebug, the kernel module of Bakita & Anderson, RTAS 2024) prints in
// its /proc/gpuN/ files, written from its print formats: register files ("%#0x\n"), device_info
// (PTOP_DEVICE_INFO, Ampere+ and pre-Ampere layouts), copy_topology and runlistR/runlist. Pure
// functions on text, so CI tests them; each throws UserError "LINE N: ..." on text nvdebug never prints.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart {

// One register file: "0x1f\n", or "0\n"/"0x0\n" for zero (glibc and the kernel differ there).
std::uint32_t parse_nvdebug_register(std::string_view text);

// One engine of device_info (one "+---...---+"-terminated block). Which fields a block has depends on
// the GPU generation; absent ones stay empty.
struct NvdebugEngine {
    std::optional<int> engine_type;  // PTOP engine type enum (0 graphics, 19 LCE, ...)
    std::string type_name;           // nvdebug's name for it: "Graphics/Compute", "LCE: Logical Copy Engine"
    std::optional<int> instance;
    std::optional<int> fault_id;
    std::optional<std::uint32_t> pri_base;          // "BAR0 Base"
    std::optional<int> reset_id;
    std::optional<bool> is_engine;                  // Ampere+
    std::optional<int> runlist_engine_id;           // Ampere+: "Runlist Eng. ID"
    std::optional<std::uint32_t> runlist_pri_base;  // Ampere+: "RL Base"
    std::optional<int> host_engine_id;              // pre-Ampere
    std::optional<int> runlist_id;                  // pre-Ampere
    std::optional<int> interrupt_id;                // pre-Ampere
};
std::vector<NvdebugEngine> parse_nvdebug_device_info(std::string_view text);

// copy_topology: "GRCE0 -> LCE02", "LCE04 -> PCE11". nvdebug prints one target per LCE (the highest PCE
// mapped to it), so it shows which PCE an LCE reaches, not all of them.
struct NvdebugCopyLink {
    std::string from;  // "GRCE0", "LCE02"
    int from_lce = 0;  // GRCEn is LCE n
    enum class To { pce, lce } to = To::pce;
    int to_index = 0;
};
std::vector<NvdebugCopyLink> parse_nvdebug_copy_topology(std::string_view text);

struct NvdebugChannel {
    int id = 0;
    std::optional<int> runqueue_selector;
    std::optional<std::uint64_t> instance_ptr;
    std::string instance_target;                // "VID_MEM", "SYS_MEM_COHERENT", ...
    std::map<std::string, std::string> details;  // DETAILED_CHANNEL_INFO lines: "Enabled" -> "1", ...
    bool operator==(const NvdebugChannel&) const = default;
};

struct NvdebugTsg {
    int id = 0;
    int timeslice_scale = 0;
    int timeslice_timeout = 0;
    int length = 0;  // channels the TSG entry announces
    std::vector<NvdebugChannel> channels;
    int missing_channels = 0;  // "[missing channel]" lines nvdebug printed for it
};

struct NvdebugRunlist {
    std::vector<NvdebugTsg> tsgs;
    std::vector<NvdebugChannel> bare_channels;  // channels outside any TSG (pre-Volta GPUs)
};
NvdebugRunlist parse_nvdebug_runlist(std::string_view text);

}  // namespace gpupart

#include "sources/rm_abi.hpp"

#include <fmt/format.h>

namespace gpupart::rm {

std::string status_name(std::uint32_t status) {
    const char* name = nullptr;
    switch (status) {
        case kOk: name = "NV_OK"; break;
        case kErrInsufficientPermissions: name = "NV_ERR_INSUFFICIENT_PERMISSIONS"; break;
        case kErrInvalidArgument: name = "NV_ERR_INVALID_ARGUMENT"; break;
        case 0x22: name = "NV_ERR_INVALID_CLASS"; break;
        case kErrInvalidParamStruct: name = "NV_ERR_INVALID_PARAM_STRUCT"; break;
        case 0x40: name = "NV_ERR_INVALID_STATE"; break;
        case kErrNotSupported: name = "NV_ERR_NOT_SUPPORTED"; break;
        case 0x57: name = "NV_ERR_OBJECT_NOT_FOUND"; break;
        default: return fmt::format("RM status 0x{:x}", status);
    }
    return fmt::format("{} (0x{:x})", name, status);
}

}  // namespace gpupart::rm

#pragma once
// Transitional: process identity moved to the platform layer (platform/process_identity.hpp), which
// sources and registry both use. Kept only for app/top/top_data.cpp and widgets/process_rows.cpp, which
// are being rewritten on main; delete this header once they include platform/process_identity.hpp.
#include "platform/process_identity.hpp"

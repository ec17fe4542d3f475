// smlp-fixture-tool: writes an SMLP component file into this user's directory of a registry, as
// libgpupart.so would, for the end-to-end tests of the views (top in tmux, the CLI) that cannot call the
// fixture library. The component is TPCs 36-43 (gpc4 of the built-in H200), h 2, M 2; HOLDER holds 36-39
// ("detect", SQ), WAITER waits in the FQ ("plan"), HOLDER also in the PQ ("batch").
//   smlp-fixture-tool REGISTRY_ROOT NAME HOLDER_PID WAITER_PID
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <unistd.h>

#include "registry/registry.hpp"
#include "smlp_fixture.hpp"

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: smlp-fixture-tool REGISTRY_ROOT NAME HOLDER_PID WAITER_PID\n");
        return 2;
    }
    try {
        const auto dir = gpupart::user_directory(argv[1], ::getuid(), true);
        gpupart::test::FixtureComponent component;
        component.name = argv[2];
        component.gpu = "GPU-00000000-0000-0000-0000-000000000001";
        component.tpcs = gpupart::TpcMask::range(36, 43);
        component.h = 2;
        const int holder = std::atoi(argv[3]);
        const int waiter = std::atoi(argv[4]);
        component.requests = {{GPUPART_SMLP_SQ, holder, 0, 5, 1, gpupart::TpcMask::range(36, 39), "detect", 4},
                              {GPUPART_SMLP_FQ, waiter, 0, 9, 2, {}, "plan", 2},
                              {GPUPART_SMLP_PQ, holder, 0, 1, 3, {}, "batch", 1}};
        std::printf("%s\n", gpupart::test::write_smlp_file(*dir, *gpupart::test::make_smlp_file(component)).c_str());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "smlp-fixture-tool: %s\n", error.what());
        return 1;
    }
    return 0;
}

// Writes the built-in snapshots (resources/snapshots/*.json) from the raw recordings in
// tests/fixtures/ and the seed-003 tables. CI runs it and compares its output with the committed
// files byte for byte, so the built-in snapshots can never drift from the logs.
//   gpupart-generate-snapshots FIXTURES_DIR OUTPUT_DIR
#include <cstdio>
#include <exception>
#include <string>

#include "h200_snapshot.hpp"
#include "snapshot/snapshot_file.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s FIXTURES_DIR OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    const std::string fixtures = argv[1];
    const std::string output = argv[2];
    try {
        gpupart::save_snapshot(gpupart::recorded::make_h200_snapshot(fixtures), output + "/h200.json");
        gpupart::save_snapshot(gpupart::recorded::make_gtx1060_snapshot(), output + "/gtx1060.json");
        gpupart::save_snapshot(gpupart::recorded::make_rtx6000ada_snapshot(), output + "/rtx6000ada.json");
    } catch (const std::exception& error) {
        std::fprintf(stderr, "gpupart-generate-snapshots: %s\n", error.what());
        return 1;
    }
    return 0;
}

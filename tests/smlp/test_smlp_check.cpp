// Making, validating and repairing SMLP component files in memory (smlp_core.h): a corrupt file is an
// error with one line; a crash's leftovers (what a locker killed mid-change can leave) are repaired.
#include <cstring>

#include <gtest/gtest.h>

#include "smlp_test_support.hpp"

namespace {

using namespace gpupart::smlp_test;

std::string validation_error(const gpupart_smlp_file& file) {
    char why[200] = "";
    const int error = gpupart_smlp_core_validate(&file, why, sizeof why);
    if (error == 0) return "";
    EXPECT_EQ(error, -EPROTO);
    EXPECT_TRUE(one_line(why));
    return why;
}

TEST(SmlpCheck, InitRefusesImpossibleShapes) {
    gpupart_smlp_file file{};
    char why[200] = "";
    gpupart_smlp_shape shape{};
    low_bits(6, shape.tpcs);
    shape.h = 4;
    shape.fq_length = 2;
    EXPECT_EQ(gpupart_smlp_core_init(&file, "x", &shape, 0, 0, why, sizeof why), -EINVAL);
    EXPECT_NE(std::strstr(why, "does not divide"), nullptr) << why;
    shape.h = 2;
    shape.fq_length = 0;
    EXPECT_EQ(gpupart_smlp_core_init(&file, "x", &shape, 0, 0, why, sizeof why), -EINVAL);
    shape.fq_length = GPUPART_SMLP_MAX_REQUESTS + 1;
    EXPECT_EQ(gpupart_smlp_core_init(&file, "x", &shape, 0, 0, why, sizeof why), -EINVAL);
    shape.fq_length = 2;
    shape.gpc_count = 2;
    shape.gpc_tpcs[0][0] = 0x7;
    shape.gpc_tpcs[1][0] = 0x4;  // TPC 2 in two GPCs
    EXPECT_EQ(gpupart_smlp_core_init(&file, "x", &shape, 0, 0, why, sizeof why), -EINVAL);
    shape.gpc_tpcs[1][0] = 0x38;
    EXPECT_EQ(gpupart_smlp_core_init(&file, "x", &shape, 0, 0, why, sizeof why), 0) << why;
    gpupart_smlp_shape none{};
    none.h = 1;
    none.fq_length = 1;
    EXPECT_EQ(gpupart_smlp_core_init(&file, "x", &none, 0, 0, why, sizeof why), -EINVAL);
    for (const char* bad : {"", ".hidden", "a/b", "../up", "sp ace", "tab\t", "\x1b[2J",
                            "0123456789012345678901234567890123456789012345678901234567890123"})
        EXPECT_EQ(gpupart_smlp_core_init(&file, bad, &shape, 0, 0, why, sizeof why), -EINVAL) << bad;
    EXPECT_TRUE(gpupart_smlp_core_name_valid("vision-2.front_cam"));
}

TEST(SmlpCheck, GpcMapIsStoredInsideTheComponent) {
    gpupart_smlp_shape shape{};
    shape.tpcs[0] = 0x0f0;
    shape.h = 1;
    shape.fq_length = 1;
    shape.gpc_count = 2;
    shape.gpc_tpcs[0][0] = 0x0ff;
    shape.gpc_tpcs[1][0] = 0xf00;
    gpupart_smlp_file file{};
    char why[200] = "";
    ASSERT_EQ(gpupart_smlp_core_init(&file, "x", &shape, 0, 0, why, sizeof why), 0) << why;
    EXPECT_EQ(file.header.gpc_tpcs[0][0], 0x0f0u);
    EXPECT_EQ(file.header.gpc_tpcs[1][0], 0u);
    gpupart_smlp_shape stored{};
    gpupart_smlp_core_shape(&file, &stored);
    EXPECT_EQ(gpupart_smlp_core_shape_match(&stored, &shape, why, sizeof why), 0) << why;
    shape.fq_length = 2;
    EXPECT_EQ(gpupart_smlp_core_shape_match(&stored, &shape, why, sizeof why), -EEXIST);
    EXPECT_STREQ(why, "its M is 1");
}

TEST(SmlpCheck, CorruptFilesAreErrorsWithOneLine) {
    const auto fresh = [] {
        auto file = make_component(8, 2, 2);
        issue(*file, 1, 1, {4, 3, 2, 1}, 1);  // SQ: all 8
        issue(*file, 2, 1, {1}, 2);           // FQ
        issue(*file, 3, 1, {1}, 3);           // FQ
        issue(*file, 4, 1, {1}, 4);           // PQ
        return file;
    };
    EXPECT_EQ(validation_error(*fresh()), "");
    const std::vector<std::pair<std::string, std::function<void(gpupart_smlp_file&)>>> corruptions{
        {"not an SMLP component file", [](gpupart_smlp_file& f) { f.header.magic[0] = 'X'; }},
        {"registry layout 4", [](gpupart_smlp_file& f) { f.header.layout_version = 4; }},
        {"bytes, not", [](gpupart_smlp_file& f) { f.header.file_size = 4096; }},
        {"not completely made", [](gpupart_smlp_file& f) { f.header.state = 0; }},
        {"does not divide", [](gpupart_smlp_file& f) { f.header.h = 3; }},
        {"M (the FQ's length)", [](gpupart_smlp_file& f) { f.header.fq_length = 0; }},
        {"component name", [](gpupart_smlp_file& f) { std::memset(f.header.name, 'a', sizeof f.header.name); }},
        {"queue value 7", [](gpupart_smlp_file& f) { f.requests[1].queue = 7; }},
        {"more than M", [](gpupart_smlp_file& f) { f.requests[3].queue = GPUPART_SMLP_FQ; }},
        {"holds 8 TPCs but counts 6", [](gpupart_smlp_file& f) { f.requests[0].granted_tpcs = 6; }},
        {"outside the component", [](gpupart_smlp_file& f) { f.requests[0].granted[1] = 1; f.requests[0].granted[0] = 0x7f; }},
        {"another record holds", [](gpupart_smlp_file& f) {
             f.requests[1].queue = GPUPART_SMLP_SQ;
             f.requests[1].granted[0] = 0x3;
             f.requests[1].granted_tpcs = 2;
         }},
        {"lengths", [](gpupart_smlp_file& f) { f.requests[2].level_count = 5; }},
        {"names pid", [](gpupart_smlp_file& f) { f.requests[2].pid = -4; }},
        {"not below the next", [](gpupart_smlp_file& f) { f.requests[2].ticket = 1u << 30; }},
        {"malformed tolerance", [](gpupart_smlp_file& f) { std::memset(f.requests[2].label, 'x', sizeof f.requests[2].label); }},
        {"GPC 0", [](gpupart_smlp_file& f) { f.header.gpc_count = 1; f.header.gpc_tpcs[0][2] = 1; }},
    };
    for (const auto& [expected, corrupt] : corruptions) {
        auto file = fresh();
        corrupt(*file);
        const std::string why = validation_error(*file);
        EXPECT_NE(why.find(expected), std::string::npos) << "expected '" << expected << "', got '" << why << "'";
    }
}

// What a locker killed mid-change can leave (smlp_layout.h): a finalize without Rules 4-5, a ticket
// taken twice, next_ticket behind, a miscounted grant, an FQ past M.
TEST(SmlpCheck, RepairFinishesWhatAKilledLockerLeft) {
    auto file = make_component(4, 1, 2);
    const int holder = issue(*file, 1, 1, {4, 3, 2, 1}, 1);
    const int first = issue(*file, 2, 1, {1, 1, 1, 1}, 2);
    const int second = issue(*file, 3, 1, {1, 1, 1, 1}, 3);
    const int third = issue(*file, 4, 1, {1, 1, 1, 1}, 4);
    ASSERT_EQ(file->requests[third].queue, GPUPART_SMLP_PQ);
    // Killed inside finalize: the holder's record is free, Rules 4 and 5 never ran.
    file->requests[holder].queue = GPUPART_SMLP_FREE;
    EXPECT_GT(gpupart_smlp_core_repair(file.get(), 5), 0);
    EXPECT_EQ(file->requests[first].queue, GPUPART_SMLP_SQ);
    EXPECT_EQ(file->requests[second].queue, GPUPART_SMLP_SQ);
    EXPECT_EQ(file->requests[third].queue, GPUPART_SMLP_SQ);
    EXPECT_EQ(validation_error(*file), "");

    auto tickets = make_component(2, 1, 3);
    const int a = issue(*tickets, 1, 1, {2, 1}, 1);
    const int b = issue(*tickets, 2, 1, {1, 1}, 2);
    const int c = issue(*tickets, 3, 1, {1, 1}, 3);
    tickets->requests[c].ticket = tickets->requests[b].ticket;  // the same ticket twice in the FQ
    tickets->header.next_ticket = 1;                            // and the counter behind
    tickets->requests[a].granted_tpcs = 1;                      // a grant miscounted
    EXPECT_GT(gpupart_smlp_core_repair(tickets.get(), 4), 0);
    EXPECT_EQ(validation_error(*tickets), "");
    EXPECT_EQ(tickets->requests[a].granted_tpcs, 2u);
    EXPECT_LT(tickets->requests[b].ticket, tickets->requests[c].ticket);  // order kept (index breaks the tie)
    EXPECT_GT(tickets->header.next_ticket, tickets->requests[c].ticket);
    tickets->requests[3] = tickets->requests[c];  // an FQ past M = 3 (a record copied in)
    tickets->requests[3].ticket = tickets->header.next_ticket++;
    auto extra = tickets->requests[3];
    extra.ticket = tickets->header.next_ticket++;
    tickets->requests[4] = extra;
    ASSERT_NE(validation_error(*tickets), "");
    EXPECT_GT(gpupart_smlp_core_repair(tickets.get(), 5), 0);
    EXPECT_EQ(validation_error(*tickets), "");
    EXPECT_EQ(tickets->requests[4].queue, GPUPART_SMLP_PQ);  // the latest arrival went back

    // A record half written by a killed issuer is still FREE: repair leaves it alone; garbage queue values go.
    auto half = make_component(2, 1, 1);
    half->requests[9].pid = 77;
    half->requests[9].level_count = 1;
    half->requests[10].queue = 0xdeadbeef;
    gpupart_smlp_core_repair(half.get(), 1);
    EXPECT_EQ(half->requests[9].queue, GPUPART_SMLP_FREE);
    EXPECT_EQ(half->requests[10].queue, GPUPART_SMLP_FREE);
    EXPECT_EQ(validation_error(*half), "");
}

}  // namespace

#include <gtest/gtest.h>

#include "model/user_error.hpp"
#include "planner/target_text.hpp"

using namespace gpupart;

TEST(TargetText, RatesAndShares) {
    const ProcessTarget rate = parse_process_target("4242=300");
    EXPECT_EQ(rate.pid, 4242);
    EXPECT_EQ(rate.target.kind, Target::Kind::rate);
    EXPECT_DOUBLE_EQ(rate.target.value, 300);
    const ProcessTarget share = parse_process_target("17=12.5%");
    EXPECT_EQ(share.pid, 17);
    EXPECT_EQ(share.target.kind, Target::Kind::share);
    EXPECT_DOUBLE_EQ(share.target.value, 0.125);
    EXPECT_DOUBLE_EQ(parse_process_target("17=100%").target.value, 1.0);
}

TEST(TargetText, MalformedTargetsSayWhatATargetIs) {
    for (const char* bad : {"4242", "4242=", "4242=fast", "4242=0", "4242=-5", "4242=150%", "=300", "0=300", "4242=30%%", "4242=1e999"}) {
        try {
            parse_process_target(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const UserError& error) {
            EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << bad;
        }
    }
    try {
        parse_process_target("4242=fast");
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find("PID=RATE"), std::string::npos);
    }
}

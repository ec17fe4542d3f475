// GPU meters (backend/sources/gpu_meters.hpp) through dlopen of a stand-in NVML (fake_nvml_meters.c):
// every meter, the GPU chosen by UUID, a refused reading left empty, a missing NVML said in one line.
#include <gtest/gtest.h>

#include <cstdlib>

#include "sources/gpu_meters.hpp"

using namespace gpupart;

namespace {
const std::string kFirst = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
}

TEST(GpuMeters, ReadsEveryMeterOfTheGpuNamedByUuid) {
    ::unsetenv("FAKE_NVML_POWER");
    GpuMeterReader reader(GPUPART_FAKE_NVML_METERS);
    const auto meters = reader.read(kFirst);
    ASSERT_TRUE(meters.has_value()) << reader.problem();
    EXPECT_EQ(meters->gpu_percent, 87);
    EXPECT_EQ(meters->memory_percent, 40);
    EXPECT_EQ(meters->memory_used_bytes, 1024ull << 20);
    EXPECT_EQ(meters->memory_total_bytes, 80ull << 30);
    ASSERT_TRUE(meters->power_watts.has_value());
    EXPECT_DOUBLE_EQ(*meters->power_watts, 412.345);
    EXPECT_DOUBLE_EQ(*meters->power_limit_watts, 700.0);
    EXPECT_EQ(meters->sm_clock_mhz, 1755);
    EXPECT_EQ(meters->max_sm_clock_mhz, 1980);
    EXPECT_EQ(meters->temperature_c, 61);
    // A process NVML gives no figure for (NVML_VALUE_NOT_AVAILABLE) is not given a made-up one.
    ASSERT_EQ(meters->process_memory.size(), 1u);
    EXPECT_EQ(meters->process_memory.at(4242), 3ull << 30);
    const auto parts = meter_parts(*meters);
    ASSERT_EQ(parts.size(), 5u);
    EXPECT_EQ(parts[0], "GPU 87%");
    EXPECT_EQ(parts[1], "mem 1.0/80.0 GiB");
    EXPECT_EQ(parts[2], "412/700 W");
    EXPECT_EQ(parts[3], "SM 1755/1980 MHz");
    EXPECT_EQ(parts[4], "61°C");
    // The other GPU is another device.
    const auto second = reader.read("GPU-bbbbbbbb-1111-2222-3333-444444444444");
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->gpu_percent, 5);
    EXPECT_TRUE(second->process_memory.empty());
}

TEST(GpuMeters, EachReadIsFreshAndARefusedMeterStaysEmpty) {
    GpuMeterReader reader(GPUPART_FAKE_NVML_METERS);
    ::setenv("FAKE_NVML_SM_MHZ", "1500", 1);
    ::setenv("FAKE_NVML_POWER", "refuse", 1);
    auto meters = reader.read(kFirst);
    ASSERT_TRUE(meters.has_value());
    EXPECT_EQ(meters->sm_clock_mhz, 1500);
    EXPECT_FALSE(meters->power_watts.has_value());
    EXPECT_EQ(meter_parts(*meters).size(), 4u);  // no "0 W"
    ::setenv("FAKE_NVML_SM_MHZ", "1980", 1);
    ::unsetenv("FAKE_NVML_POWER");
    meters = reader.read(kFirst);
    ASSERT_TRUE(meters.has_value());
    EXPECT_EQ(meters->sm_clock_mhz, 1980);
    EXPECT_TRUE(meters->power_watts.has_value());
    ::unsetenv("FAKE_NVML_SM_MHZ");
}

TEST(GpuMeters, NoNvmlOrNoSuchGpuIsSaidInOneLine) {
    GpuMeterReader missing("/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(missing.read(kFirst).has_value());
    EXPECT_EQ(missing.problem().rfind("no GPU meters: no NVML", 0), 0u) << missing.problem();
    GpuMeterReader reader(GPUPART_FAKE_NVML_METERS);
    EXPECT_FALSE(reader.read("GPU-00000000-0000-0000-0000-000000000001").has_value());
    EXPECT_EQ(reader.problem(), "no GPU meters: NVML has no GPU (a recording)");
}

TEST(GpuMeters, EachProcessGetsItsLatestSampleOfTheLastThreeSeconds) {
    ::unsetenv("FAKE_NVML_PROC_UTIL");
    GpuMeterReader reader(GPUPART_FAKE_NVML_METERS);
    auto meters = reader.read(kFirst);
    ASSERT_TRUE(meters.has_value()) << reader.problem();
    ASSERT_TRUE(meters->process_utilization_read);
    // 4242's newer sample (63%) wins over its older one (10%), whatever their order; 4343's 5 s old
    // sample is outside the window and was not asked for.
    ASSERT_EQ(meters->process_utilization.size(), 1u);
    EXPECT_EQ(meters->process_utilization.at(4242).sm_percent, 63);
    EXPECT_EQ(meters->process_utilization.at(4242).memory_percent, 20);
    ::setenv("FAKE_NVML_PROC_UTIL", "250", 1);  // a value NVML should never give is capped, not shown as 250%
    meters = reader.read(kFirst);
    EXPECT_EQ(meters->process_utilization.at(4242).sm_percent, 100);
}

TEST(GpuMeters, NoRecentSampleIsAReadOfIdleProcessesAndARefusalIsUnknown) {
    GpuMeterReader reader(GPUPART_FAKE_NVML_METERS);
    ::setenv("FAKE_NVML_PROC_UTIL", "idle", 1);
    auto meters = reader.read(kFirst);
    ASSERT_TRUE(meters.has_value());
    EXPECT_TRUE(meters->process_utilization_read) << "NOT_FOUND: nothing ran, a valid reading";
    EXPECT_TRUE(meters->process_utilization.empty());
    ::setenv("FAKE_NVML_PROC_UTIL", "refuse", 1);
    meters = reader.read(kFirst);
    ASSERT_TRUE(meters.has_value());
    EXPECT_FALSE(meters->process_utilization_read) << "Not Supported: the views show '-', never 0%";
    ::unsetenv("FAKE_NVML_PROC_UTIL");
}

#pragma once
// Reading a `gpupart top` frame in the layout tests: its lines of text, whether it holds a text, whether it fits.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "top/top_screen.hpp"

namespace gpupart::top::test {

inline std::vector<std::string> lines_of(const Screen& screen) {
    std::vector<std::string> lines;
    std::istringstream in(screen.text());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

inline bool contains(const Screen& screen, const std::string& text) { return screen.text().find(text) != std::string::npos; }

// Every row fits the width and the frame has exactly `height` rows.
inline void expect_fits(const Screen& screen) {
    const auto lines = lines_of(screen);
    EXPECT_EQ(static_cast<int>(lines.size()), screen.height());
    for (const auto& line : lines) EXPECT_LE(text_width(line), screen.width()) << line;
}

}  // namespace gpupart::top::test

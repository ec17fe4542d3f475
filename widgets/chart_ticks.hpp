#pragma once
// Axis ticks the charts share (charts panel, scaling panel): steps a reader can count in.
#include <cmath>

namespace gpupart::widgets {

// A tick step of 1, 2 or 5 times a power of ten giving about `intervals` intervals up to `top`, so an axis
// reads 0, 20, 40 rather than 0, 16.5, 33.
inline double nice_step(double top, int intervals) {
    const double rough = top / intervals;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    for (const double factor : {1.0, 2.0, 5.0})
        if (factor * power >= rough) return factor * power;
    return 10 * power;
}

}  // namespace gpupart::widgets

#pragma once
// Resolving functions of a library loaded at run time (libcuda, NVML): gpupart builds and runs without
// a GPU, so neither is linked.
#include <cstring>
#include <initializer_list>

#include <dlfcn.h>

namespace gpupart {

// Points `out` at the first of `names` the library has (newest versioned name first); false when it
// has none. `index`, when given, gets the chosen name's position (which ABI variant was found).
template <typename Function>
bool resolve_symbol(void* library, Function& out, std::initializer_list<const char*> names, int* index = nullptr) {
    int position = 0;
    for (const char* name : names) {
        if (void* symbol = ::dlsym(library, name); symbol != nullptr) {
            // POSIX hands functions out as object pointers; ISO C++ forbids the cast, so copy the bits.
            static_assert(sizeof(out) == sizeof(symbol));
            std::memcpy(&out, &symbol, sizeof out);
            if (index != nullptr) *index = position;
            return true;
        }
        ++position;
    }
    return false;
}

}  // namespace gpupart

#pragma once
// The usual helper to visit a std::variant with one lambda per alternative.
namespace gpupart {

template <class... Ts>
struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;  // C++20 deduces this itself; clang before 17 needs it said

}  // namespace gpupart

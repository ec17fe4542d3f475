// Empty on purpose: gpupart_gtest_pch (and gpupart_qtest_pch) compile this file only to make the
// precompiled header that the GoogleTest (and QtTest) executables reuse (tests/CMakeLists.txt,
// tests/widgets/CMakeLists.txt).

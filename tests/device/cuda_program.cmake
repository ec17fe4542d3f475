# gpupart_cuda_program(TARGET SOURCE): one plain CUDA program of tests/device or tests/bench, built
# into ${CMAKE_BINARY_DIR}/device-bin. Included from tests/CMakeLists.txt once CUDA is enabled,
# before those directories.
find_package(CUDAToolkit REQUIRED)

# The project's add_compile_options() flags are GCC flags that nvcc rejects, so CUDA targets
# drop them and ask the host compiler for its warnings through -Xcompiler instead.
function(gpupart_cuda_program target source)
  add_executable(${target} ${source})
  set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS "")
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow,-Wconversion,-Wno-sign-conversion>)
  if(NOT DEFINED GPUPART_WERROR OR GPUPART_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror>)
  endif()
  set_target_properties(${target} PROPERTIES
    CUDA_ARCHITECTURES 90
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    # The static runtime, linked explicitly: the binaries need only the driver where they run.
    CUDA_RUNTIME_LIBRARY None
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/device-bin)
  target_link_libraries(${target} PRIVATE CUDA::cudart_static)
endfunction()

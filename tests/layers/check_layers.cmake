# Proves that the build enforces the backend's layers (backend/CMakeLists.txt): for every layer, a file
# compiled with that layer's include directories (the ones its library really gets, transitive ones
# included) can #include a header of each layer it may use, and including a header of any layer it may
# not use fails with "No such file". The table below is the architecture, written down independently of
# the CMake code that builds the include roots: loosen a root there and this test fails.
#
# The front ends are held to it the same way (the include directories their targets really get), each with
# the layers it may not use. The CLI may use every layer and is not listed.
#
# cmake -DCXX=<compiler> -DSCRATCH=<dir> -DIMPLICIT=<a|b> -DINCLUDES_<layer or front end>=<a|b|...>
#       [-DFRONTENDS=<a|b>] -P check_layers.cmake
cmake_minimum_required(VERSION 3.25)
set(layers model platform sources snapshot report registry smlp controller metrics planner curve_store fleet)
set(forbidden_model      platform sources snapshot report registry smlp controller metrics planner curve_store fleet)
set(forbidden_platform   sources snapshot report registry smlp controller metrics planner curve_store fleet)
set(forbidden_sources    snapshot report registry smlp controller metrics planner curve_store fleet)
set(forbidden_snapshot   report registry smlp controller metrics planner curve_store fleet)
set(forbidden_report     snapshot registry smlp controller metrics planner curve_store fleet)
set(forbidden_registry   sources snapshot report smlp controller metrics planner curve_store fleet)  # never the controller, never the sources
# The SMLP reader reads components through the registry's files; it knows nothing of the controller.
set(forbidden_smlp       sources snapshot report controller metrics planner curve_store fleet)
set(forbidden_controller metrics planner curve_store fleet)  # the exporter's layer reads the controller, never the other way
set(forbidden_metrics    planner curve_store fleet)
# The planner is pure computation on the model's types; its curves reach the disk through
# curve_store, the one planner-side layer that may use platform's safe files.
set(forbidden_planner    platform sources snapshot report registry smlp controller metrics curve_store fleet)
set(forbidden_curve_store sources snapshot report registry smlp controller metrics fleet)
# TPCs as a cluster scheduler's resource: placement and its own files, nothing that reads or
# changes live processes.
set(forbidden_fleet      sources snapshot report registry smlp controller metrics planner curve_store)

# Front ends: the probe measures (sources) and writes the shim's layout (registry); a demo worker only
# registers; drawing a GPU and the desktop app and gpupart top act through the controller, never the
# exporter's metrics or the cluster scheduler's fleet; the render library draws, without the planner.
set(forbidden_probe       snapshot report smlp controller metrics planner curve_store fleet)
set(forbidden_demo_worker sources snapshot report smlp controller metrics planner curve_store fleet)
set(forbidden_render      metrics planner curve_store fleet)
set(forbidden_widgets     metrics fleet)
set(forbidden_gui         metrics fleet)
set(forbidden_top         metrics fleet)

# One light header per layer, the one a probe includes.
set(header_model      model/gpu.hpp)
set(header_platform   platform/proc_file.hpp)
set(header_sources    sources/source_status.hpp)
set(header_snapshot   snapshot/snapshot_file.hpp)
set(header_report     report/csv_text.hpp)
set(header_registry   registry/registry_layout.h)
set(header_smlp       smlp/smlp_file.hpp)
set(header_controller controller/finding.hpp)
set(header_metrics    metrics/set_latency.hpp)
set(header_planner    planner/scaling_curve.hpp)
set(header_curve_store curve_store/curve_store.hpp)
set(header_fleet      fleet/claim.hpp)

foreach(var CXX SCRATCH)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_layers.cmake: -D${var}= is missing")
  endif()
endforeach()
string(REPLACE "|" ";" implicit "${IMPLICIT}")
file(REMOVE_RECURSE ${SCRATCH})
file(MAKE_DIRECTORY ${SCRATCH})

string(REPLACE "|" ";" frontends "${FRONTENDS}")
set(failures 0)
set(checks 0)
foreach(layer IN LISTS layers frontends)
  if(NOT DEFINED INCLUDES_${layer})
    message(FATAL_ERROR "check_layers.cmake: -DINCLUDES_${layer}= is missing")
  endif()
  string(REPLACE "|" ";" includes "${INCLUDES_${layer}}")
  set(flags -std=c++20 -fsyntax-only)
  foreach(dir IN LISTS includes)
    if(NOT dir IN_LIST implicit)  # -I/usr/include would break the standard library's #include_next
      list(APPEND flags "-I${dir}")
    endif()
  endforeach()

  # The control: every layer it may use (itself included) is reachable. Without it a broken compiler
  # command would make every "forbidden" probe fail and the test pass for the wrong reason.
  set(allowed ${layers})
  list(REMOVE_ITEM allowed ${forbidden_${layer}})
  set(probe ${SCRATCH}/${layer}_allowed.cpp)
  set(text "// ${layer} may use: ${allowed}\n")
  foreach(other IN LISTS allowed)
    string(APPEND text "#include \"${header_${other}}\"\n")
  endforeach()
  file(WRITE ${probe} "${text}")
  execute_process(COMMAND ${CXX} ${flags} ${probe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  math(EXPR checks "${checks} + 1")
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "${layer}: including the layers it may use (${allowed}) failed:\n${out}")
    math(EXPR failures "${failures} + 1")
  endif()

  foreach(other IN LISTS forbidden_${layer})
    set(probe ${SCRATCH}/${layer}_uses_${other}.cpp)
    file(WRITE ${probe} "// ${layer} must not use ${other}: this must not compile\n#include \"${header_${other}}\"\n")
    execute_process(COMMAND ${CXX} ${flags} ${probe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    math(EXPR checks "${checks} + 1")
    string(REPLACE "." "\\." header_regex "${header_${other}}")
    if(rc EQUAL 0)
      message(SEND_ERROR "${layer} can #include \"${header_${other}}\": the ${layer} layer must not use ${other}")
      math(EXPR failures "${failures} + 1")
    elseif(NOT out MATCHES "${header_regex}'?: No such file|'${header_regex}' file not found")
      message(SEND_ERROR "${layer} -> ${other}: the probe failed, but not for want of the header:\n${out}")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
endforeach()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} of ${checks} layer checks failed")
endif()
message(STATUS "${checks} layer checks passed: every layer and front end (${frontends}) reaches what it may use and nothing else")

# Tests the layering check (tests/layering.cmake) itself (issue 38): a copy of src/ must pass
# it, and the same copy with one forbidden include added must fail it, naming that include.
# Each case adds one probe file and removes it again. Run by ctest as `layering_check`; by hand:
#   cmake -DSOURCE_DIR=$PWD -DWORK_DIR=/tmp/layering-test -P tests/layering_test.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT WORK_DIR)
  message(FATAL_ERROR "layering_check: pass -DSOURCE_DIR=<checkout> -DWORK_DIR=<scratch folder>")
endif()

file(REMOVE_RECURSE ${WORK_DIR})
file(COPY ${SOURCE_DIR}/src DESTINATION ${WORK_DIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.cc")

# Runs the check on the copy; sets `rc` and `out` in the caller.
macro(run_check)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${WORK_DIR} -P
                          ${SOURCE_DIR}/tests/layering.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
endmacro()

set(failures "")
run_check()
if(NOT rc EQUAL 0)
  list(APPEND failures "the unchanged copy of src/ fails the check:\n${out}")
endif()

# Case: name | probe file (relative to the copy) | the include it holds. Each must fail.
set(cases
    # A new cycle between core folders: cycle/ includes model/, so model/ may not include it.
    "core folder cycle|src/core/model/layering_probe.h|core/cycle/scheduler.h"
    # A lower core folder including a higher one further up (alloc -> admission).
    "core include upwards|src/core/alloc/layering_probe.cc|core/admission/policy.h"
    # A skip inside the core: the driver goes through the cycle, not to the allocator.
    "core folder skipped|src/core/driver/layering_probe.cc|core/alloc/capacity.h"
    # A new core folder that is not placed in the folder order.
    "core folder outside the order|src/core/newfolder/layering_probe.h|core/model/job.h"
    # A skip from above: the agent speaks the wire layer, not the core.
    "agent skips the wire layer|src/agent/layering_probe.cc|core/model/job.h"
    # A skip from above: the simulator drives the cycle, not the admission policies.
    "sim skips into admission|src/sim/layering_probe.cc|core/admission/cycle_context.h"
    # A layer including a layer it may not use (the client and the allocator).
    "client reads the allocator|src/client/layering_probe.cc|core/alloc/allocator.h"
    # Upwards between layers: the core includes a driver.
    "core includes a driver|src/core/model/layering_probe.cc|sim/simulator.h"
    # The wire layer includes the server.
    "wire includes the server|src/wire/layering_probe.h|server/controller.h")

foreach(case ${cases})
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 probe)
  list(GET fields 2 header)
  get_filename_component(probe_dir ${WORK_DIR}/${probe} DIRECTORY)
  set(new_dir FALSE)
  if(NOT EXISTS ${probe_dir})
    set(new_dir TRUE)
  endif()
  file(WRITE ${WORK_DIR}/${probe} "#pragma once\n\n#include \"${header}\"\n")
  run_check()
  # The check names the file, or for a new folder the folder.
  get_filename_component(probe_rel_dir ${probe} DIRECTORY)
  if(rc EQUAL 0)
    list(APPEND failures "${name}: the check passed with ${probe} including ${header}")
  elseif(NOT out MATCHES "${probe}" AND NOT (new_dir AND out MATCHES "${probe_rel_dir}:"))
    list(APPEND failures "${name}: the check failed without naming ${probe}:\n${out}")
  endif()
  file(REMOVE ${WORK_DIR}/${probe})
  if(new_dir)
    file(REMOVE_RECURSE ${probe_dir})
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "layering_check:\n  ${text}")
endif()
list(LENGTH cases count)
message(STATUS
        "layering_check: the check passes src/ and fails each of ${count} forbidden includes")

# The layering rule of docs/design/architecture.md, checked on the sources (issues 13, 38): each
# layer of src/ may include project headers only from the layers listed for it, and each folder
# of src/core only from the core folders listed for it. Run by ctest as `layering` (and tested
# by `layering_check`, tests/layering_test.cmake); by hand:
#   cmake -DSOURCE_DIR=$PWD -P tests/layering.cmake
# A project header is a quoted include whose first folder is a folder of src/. Tests and
# benchmarks are not checked (they may include what they test).
cmake_minimum_required(VERSION 3.25)  # IN_LIST, list(TRANSFORM)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "layering: pass -DSOURCE_DIR=<checkout>")
endif()

# Layer -> what it may include besides itself: a layer, or core/<folder> for one folder of the
# core ("core" alone: all of it). A layer missing here (cli) may include everything.
# An include of a layer, or of a core folder, that is not listed fails, whether it points up
# (a cycle) or skips the layer it should go through (an agent that reads the core instead of
# the wire layer, a client or the wire layer that reaches into the allocator).
set(allowed_base "")
set(allowed_core "base")
set(allowed_wire "core/model;core/reasons;core/explain;core/driver;base")
set(allowed_config "core/model;core/resreq;base")
set(allowed_store "base")
set(allowed_auth "base")
# What the daemons tell the service manager (systemd's notify protocol, journald).
set(allowed_daemon "base")
# The simulator reads request text in its workloads (a JSONL job's `gpus`) and checks it
# where it is read, as the config reader does.
set(allowed_sim "wire;core/model;core/resreq;core/reasons;core/explain;core/cycle;core/driver;base")
set(allowed_server "store;wire;config;auth;daemon;core/model;core/reasons;core/explain;core/alloc;\
core/admission;core/cycle;core/driver;base")
set(allowed_agent "wire;auth;daemon;base")
set(allowed_client "wire;auth;core/reasons;core/explain;base")
# libsluice-drmaa (issue 46) speaks to the controller only through the client's REST path.
set(allowed_drmaa "client;base")

# The core's folders in their written order, lowest first, and what each may include besides
# itself and base. A folder may list only folders before it, so the order is a DAG by
# construction; a folder missing here (a new one) fails until it is placed in the order.
set(core_order resreq reasons model alloc admission cycle explain driver)
set(core_allowed_resreq "")
set(core_allowed_reasons "")
set(core_allowed_model "resreq;reasons")
set(core_allowed_alloc "model;resreq;reasons")
set(core_allowed_admission "alloc;model;reasons")
set(core_allowed_cycle "admission;alloc;model;reasons")
set(core_allowed_explain "alloc;model;reasons")
set(core_allowed_driver "cycle;admission;model;reasons")

set(violations "")

# The table itself: every folder listed only folders below it.
foreach(folder ${core_order})
  list(FIND core_order ${folder} rank)
  foreach(below ${core_allowed_${folder}})
    list(FIND core_order ${below} below_rank)
    if(below_rank LESS 0 OR below_rank GREATER_EQUAL rank)
      list(APPEND violations
           "tests/layering.cmake: core/${folder} lists core/${below}, which is not below it")
    endif()
  endforeach()
endforeach()

# `what` (a layer or core/<folder>) may be included by a file of `layer`.
function(layer_may_include layer what out)
  set(allowed ${layer} ${allowed_${layer}})
  string(REGEX REPLACE "/.*" "" what_layer "${what}")
  list(FIND allowed ${what} exact)
  list(FIND allowed ${what_layer} whole)
  if(exact GREATER_EQUAL 0 OR whole GREATER_EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

file(GLOB layers RELATIVE ${SOURCE_DIR}/src LIST_DIRECTORIES true ${SOURCE_DIR}/src/*)
list(FILTER layers EXCLUDE REGEX "\\.")
file(GLOB core_folders RELATIVE ${SOURCE_DIR}/src/core LIST_DIRECTORIES true
     ${SOURCE_DIR}/src/core/*)
list(FILTER core_folders EXCLUDE REGEX "\\.")
foreach(folder ${core_folders})
  if(NOT folder IN_LIST core_order)
    list(APPEND violations "src/core/${folder}: a core folder missing from the folder order")
  endif()
endforeach()
file(GLOB core_loose RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/src/core/*.h ${SOURCE_DIR}/src/core/*.cc)
foreach(file ${core_loose})
  list(APPEND violations "${file}: a core file outside the core's folders")
endforeach()

foreach(layer ${layers})
  if(NOT DEFINED allowed_${layer})
    continue()
  endif()
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${layer}/*.h ${SOURCE_DIR}/src/${layer}/*.cc)
  foreach(file ${files})
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${file})
    # The file's core folder (src/core/<folder>/...), for the core's own rule.
    string(REGEX REPLACE "^src/core/([^/]+)/.*" "\\1" own_folder "${rel}")
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" path "${line}")
      string(REGEX REPLACE "/.*" "" target "${path}")
      if(target STREQUAL path OR NOT target IN_LIST layers)
        continue()  # no folder, or not a folder of src/: not a project header
      endif()
      string(STRIP "${line}" line)
      if(target STREQUAL "core")
        string(REGEX REPLACE "^core/([^/]+)/.*" "\\1" target_folder "${path}")
        if(target_folder STREQUAL path)
          set(target_folder "${path}")  # a header directly in src/core: in no folder
        endif()
        set(what "core/${target_folder}")
      else()
        set(what "${target}")
      endif()
      if(layer STREQUAL "core" AND target STREQUAL "core")
        # Between core folders: the folder's own list.
        if(target_folder STREQUAL own_folder)
          continue()
        endif()
        if(NOT own_folder IN_LIST core_order)
          continue()  # reported above, as a folder missing from the order
        endif()
        if(NOT target_folder IN_LIST core_allowed_${own_folder})
          set(listed ${core_allowed_${own_folder}})
          list(TRANSFORM listed PREPEND "core/")
          list(JOIN listed ", " listed_text)
          if(NOT listed_text)
            set(listed_text "no other core folder")
          endif()
          list(APPEND violations
               "${rel}: ${line} (core/${own_folder} may include ${listed_text}, and base)")
        endif()
        continue()
      endif()
      layer_may_include(${layer} ${what} ok)
      if(NOT ok)
        set(listed ${allowed_${layer}})
        list(JOIN listed ", " listed_text)
        if(NOT listed_text)
          set(listed_text "no other layer")
        endif()
        list(APPEND violations "${rel}: ${line} (${layer} may include ${listed_text})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering: includes across the layering rule:\n  ${text}")
endif()
message(STATUS "layering: ok")

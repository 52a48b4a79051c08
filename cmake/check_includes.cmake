# Fails when a library file includes a header of a library above it in the dependency order.
#   cmake -DROOT=<source tree> -P cmake/check_includes.cmake
# The order is the one the CMake targets link in; each folder may include its own headers and
# those of the folders before it. A path matches its longest listed prefix.
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT)
  message(FATAL_ERROR "check_includes: pass -DROOT=<source tree>")
endif()

# One entry per level; folders joined by "|" are siblings: they share a level and may not
# include each other (evoformer/ and structure/ both build on ops/, neither on the other).
set(levels
  memory
  io
  ops
  "evoformer|structure"
  pipeline/search
  pipeline/features
  pipeline/templates
  pipeline/runner
  pipeline/output
  pipeline/batch
  pipeline/cli)

# The level index and the folder of a repository path (-1 and "" when no listed folder holds
# it). A path matches its longest listed folder.
function(level_of path out_level out_folder)
  set(best -1)
  set(best_folder "")
  set(best_len 0)
  set(i 0)
  foreach(level IN LISTS levels)
    string(REPLACE "|" ";" folders "${level}")
    foreach(prefix IN LISTS folders)
      string(LENGTH "${prefix}" len)
      string(LENGTH "${path}" path_len)
      if(len LESS path_len)
        string(SUBSTRING "${path}" 0 ${len} head)
        string(SUBSTRING "${path}" ${len} 1 next)
        if(head STREQUAL prefix AND next STREQUAL "/" AND len GREATER best_len)
          set(best ${i})
          set(best_folder "${prefix}")
          set(best_len ${len})
        endif()
      endif()
    endforeach()
    math(EXPR i "${i} + 1")
  endforeach()
  set(${out_level} ${best} PARENT_SCOPE)
  set(${out_folder} "${best_folder}" PARENT_SCOPE)
endfunction()

set(errors "")
# The folders to read: the build passes its own list (CPUFOLD_LIBRARY_DIRS, comma-separated), so
# a new library is checked from the day it is added; run by hand, every folder of the order.
if(LIBRARY_DIRS)
  string(REPLACE "," ";" roots "${LIBRARY_DIRS}")
else()
  set(roots memory io ops evoformer structure pipeline)
endif()
foreach(root IN LISTS roots)
  file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/${root}/*.h" "${ROOT}/${root}/*.cpp")
  foreach(file IN LISTS files)
    level_of("${file}" mine my_folder)
    if(mine EQUAL -1)
      string(APPEND errors "${file}: not in a library folder of the order (cmake/check_includes.cmake)\n")
      continue()
    endif()
    file(STRINGS "${ROOT}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" header "${line}")
      string(REGEX MATCH "^[^/]+" header_root "${header}")
      if(NOT header_root IN_LIST roots)
        continue()  # a dependency's header or a file beside this one
      endif()
      level_of("${header}" theirs their_folder)
      if(theirs GREATER mine)
        string(APPEND errors
               "${file}: includes \"${header}\" of ${their_folder}/, which comes after "
               "${my_folder}/ in the library order\n")
      elseif(theirs EQUAL mine AND NOT their_folder STREQUAL my_folder)
        string(APPEND errors
               "${file}: includes \"${header}\" of ${their_folder}/, a sibling of "
               "${my_folder}/ in the library order (both build on the levels before them)\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(errors)
  string(REPLACE ";" " -> " order "${levels}")
  message(FATAL_ERROR "include order violated (allowed: each folder uses only the ones before "
                      "it: ${order}):\n${errors}")
endif()

# Fails when a library file includes a header of a library above it in the dependency order.
#   cmake -DROOT=<source tree> -P cmake/check_includes.cmake
# The order is the one the CMake targets link in; each folder may include its own headers and
# those of the folders before it. A path matches its longest listed prefix.
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT)
  message(FATAL_ERROR "check_includes: pass -DROOT=<source tree>")
endif()

set(levels
  memory
  io
  evoformer
  structure
  pipeline/features
  pipeline/runner
  pipeline/output
  pipeline/batch
  pipeline/cli)
# Files still at pipeline/'s top level until they move into pipeline/output: their level.
set(aliases "pipeline/plots=pipeline/output" "pipeline/bitmap_font=pipeline/output")

# The level index of a repository path, or -1 when no listed folder holds it.
function(level_of path out)
  set(best -1)
  set(best_len 0)
  set(candidates)
  set(i 0)
  foreach(prefix IN LISTS levels)
    list(APPEND candidates "${prefix}=${i}")
    math(EXPR i "${i} + 1")
  endforeach()
  foreach(alias IN LISTS aliases)
    string(REPLACE "=" ";" pair "${alias}")
    list(GET pair 0 prefix)
    list(GET pair 1 target)
    list(FIND levels "${target}" index)
    list(APPEND candidates "${prefix}=${index}")
  endforeach()
  foreach(candidate IN LISTS candidates)
    string(REPLACE "=" ";" pair "${candidate}")
    list(GET pair 0 prefix)
    list(GET pair 1 index)
    string(LENGTH "${prefix}" len)
    string(LENGTH "${path}" path_len)
    if(len GREATER_EQUAL path_len)
      continue()
    endif()
    string(SUBSTRING "${path}/" 0 ${len} head)
    string(SUBSTRING "${path}/" ${len} 1 next)
    # A folder holds "prefix/..."; an alias names one file stem ("prefix.h", "prefix.cpp").
    if(head STREQUAL prefix AND (next STREQUAL "/" OR next STREQUAL ".") AND len GREATER best_len)
      set(best ${index})
      set(best_len ${len})
    endif()
  endforeach()
  set(${out} ${best} PARENT_SCOPE)
endfunction()

set(errors "")
set(roots memory io evoformer structure pipeline)
foreach(root IN LISTS roots)
  file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/${root}/*.h" "${ROOT}/${root}/*.cpp")
  foreach(file IN LISTS files)
    level_of("${file}" mine)
    if(mine EQUAL -1)
      string(APPEND errors "${file}: not in a library folder of the order (cmake/check_includes.cmake)\n")
      continue()
    endif()
    list(GET levels ${mine} my_folder)
    file(STRINGS "${ROOT}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" header "${line}")
      string(REGEX MATCH "^[^/]+" header_root "${header}")
      if(NOT header_root IN_LIST roots)
        continue()  # a dependency's header or a file beside this one
      endif()
      level_of("${header}" theirs)
      if(theirs GREATER mine)
        list(GET levels ${theirs} their_folder)
        string(APPEND errors
               "${file}: includes \"${header}\" of ${their_folder}/, which comes after "
               "${my_folder}/ in the library order\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(errors)
  string(REPLACE ";" " -> " order "${levels}")
  message(FATAL_ERROR "include order violated (allowed: each folder uses only the ones before "
                      "it: ${order}):\n${errors}")
endif()

# What keeps a build on a 2-core machine short (docs/build.md "Build time"): line-table debug
# info, test programs built with -Og, and precompiled headers for the targets with the most
# nlohmann/json translation units.

# RelWithDebInfo carries line tables (-g1): backtraces, perf and callgrind still name the
# function and line, and the compile is 10-40% shorter per file than with -g (variables and
# types left out). -DKVFDP_FULL_DEBUGINFO=ON keeps CMake's -g. BPF objects have their own -g
# (cmake/KvfdpBpf.cmake): BTF needs it.
option(KVFDP_FULL_DEBUGINFO "RelWithDebInfo with full -g instead of line tables (-g1)" OFF)
if(NOT KVFDP_FULL_DEBUGINFO)
  foreach(lang C CXX)
    string(REGEX REPLACE "(^| )-g( |$)" "\\1-g1\\2" CMAKE_${lang}_FLAGS_RELWITHDEBINFO
      "${CMAKE_${lang}_FLAGS_RELWITHDEBINFO}")
  endforeach()
endif()

# kvfdp_precompile(TARGET HEADER...): the headers parsed once for TARGET instead of once per file
# (nlohmann/json costs about 2.4 s of every file that includes it). Called at
# the end of the top-level CMakeLists, once every target exists; cli/ and tests/cli
# precompile theirs in their own CMakeLists.
function(kvfdp_precompile target)
  if(TARGET ${target})
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()

# kvfdp_test_optimization(TARGET): a test program's own files built with -Og instead of the
# build type's -O2. What a test checks is compiled into the libraries it links, which keep the
# build type's flags; the test's files (doctest cases, fixtures, golden tables) compile in about
# 60% of the time (docs/build.md). Bench programs keep -O2: their figures time their own loops.
# -DKVFDP_TESTS_OPTIMIZED=ON builds tests with the build type's flags.
option(KVFDP_TESTS_OPTIMIZED "build test programs with the build type's optimization, not -Og" OFF)
function(kvfdp_test_optimization target)
  if(NOT KVFDP_TESTS_OPTIMIZED)
    target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-Og>)
  endif()
endfunction()

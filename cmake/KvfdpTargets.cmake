# Helpers that give every kvfdp target the same shape.

# kvfdp_library(NAME SOURCES ... [DEPS ...]): a static library whose headers are included
# from the repository root ("nvme/commands.hpp").
function(kvfdp_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${name} PUBLIC ${A_DEPS} PRIVATE kvfdp_warnings)
endfunction()

# kvfdp_header_library(NAME HEADERS ...): header-only value types, constants and pure inline
# functions (an INTERFACE library, nothing to link), so that a library can use a module's
# facts without linking the module's code.
function(kvfdp_header_library name)
  cmake_parse_arguments(A "" "" "HEADERS" ${ARGN})
  add_library(${name} INTERFACE ${A_HEADERS})
  target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
endfunction()

# kvfdp_binary(NAME SOURCES ... [DEPS ...]): a program users run, placed in build/bin.
function(kvfdp_binary name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_DEPS} kvfdp_warnings)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${KVFDP_BIN_DIR})
endfunction()

# kvfdp_vm_binary(NAME SOURCES ... [DEPS ...]): a test-only program the VM harness copies
# into the guest (build/vm-bin).
function(kvfdp_vm_binary name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_DEPS} kvfdp_warnings)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${KVFDP_VM_BIN_DIR})
endfunction()

# kvfdp_test(NAME SOURCES ... [DEPS ...] [LABELS ...] [TIMEOUT s]): a doctest executable
# registered with ctest. Exit code 77 means skipped (a capability is missing); such tests
# print why. Labels: unit, bpf, vm, gpu, bench.
function(kvfdp_test name)
  cmake_parse_arguments(A "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_DEPS} kvfdp_doctest_main kvfdp_warnings)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}" SKIP_RETURN_CODE 77
    TIMEOUT ${A_TIMEOUT})
  if(NOT "bench" IN_LIST A_LABELS)
    kvfdp_test_optimization(${name})
  endif()
endfunction()

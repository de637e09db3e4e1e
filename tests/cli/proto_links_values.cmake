# ctest test_proto_links_values_only: kvfdp_proto, the contract, links no module's code. None of
# its link dependencies is a static library (the nvme and placement facts it reports come as
# header-only ones: kvfdp_nvme_values, kvfdp_placement_values), and every kvfdp symbol its
# objects use is defined in them. Run:
#   cmake -DNM=nm -DLIB=build/proto/libkvfdp_proto.a -DSTATIC_DEPS= -P proto_links_values.cmake
if(STATIC_DEPS)
  message(FATAL_ERROR "kvfdp_proto links static libraries (${STATIC_DEPS}): give it their "
    "facts as header-only libraries (kvfdp_header_library), not their code")
endif()
execute_process(COMMAND ${NM} -C --undefined-only ${LIB} OUTPUT_VARIABLE undefined
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -C --undefined-only ${LIB} failed (${rc})")
endif()
execute_process(COMMAND ${NM} -C --defined-only ${LIB} OUTPUT_VARIABLE defined
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -C --defined-only ${LIB} failed (${rc})")
endif()
if(NOT defined MATCHES " T kvfdp::proto::")
  message(FATAL_ERROR "${LIB} defines no kvfdp::proto function: is it kvfdp_proto?")
endif()
string(APPEND defined "\n")
string(REGEX MATCHALL "[^\n]* U [^\n]*kvfdp::[^\n]*" uses "${undefined}")
list(REMOVE_DUPLICATES uses)
set(missing "")
set(n 0)
foreach(line IN LISTS uses)
  string(REGEX REPLACE "^ *U " "" sym "${line}")
  string(FIND "${defined}" " ${sym}\n" at)
  if(at EQUAL -1)
    string(APPEND missing "\n  ${sym}")
    math(EXPR n "${n} + 1")
  endif()
endforeach()
if(n GREATER 0)
  message(FATAL_ERROR "${LIB} uses ${n} kvfdp symbols it does not define (code of another "
    "library; make it a header-only fact or move it into proto):${missing}")
endif()
list(LENGTH uses used)
message(STATUS "${LIB}: no static library linked, its ${used} kvfdp symbols from elsewhere in it")

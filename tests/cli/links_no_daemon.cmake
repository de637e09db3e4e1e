# ctest test_cli_links_no_daemon: the kvfdp binary holds no kvfdpd object (no kvfdp::daemon or
# kvfdp::twin symbol) and does hold the shared contract (kvfdp::proto), so the CLI links kvfdp_proto and
# never kvfdp_core. Run: cmake -DNM=nm -DBIN=build/bin/kvfdp -P links_no_daemon.cmake
execute_process(COMMAND ${NM} -C ${BIN} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -C ${BIN} failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]*kvfdp::(daemon|twin)::[^\n]*" daemon_syms "${syms}")
list(LENGTH daemon_syms n)
if(n GREATER 0)
  list(SUBLIST daemon_syms 0 5 first)
  string(REPLACE ";" "\n" first "${first}")
  message(FATAL_ERROR "${BIN} links ${n} kvfdpd symbols (kvfdp::daemon, kvfdp::twin), e.g.:\n${first}\n"
    "the CLI must link kvfdp_proto, not kvfdp_core or kvfdp_twin")
endif()
if(NOT syms MATCHES "kvfdp::proto::")
  message(FATAL_ERROR "${BIN} has no kvfdp::proto symbol: is it the kvfdp CLI?")
endif()
message(STATUS "${BIN}: no kvfdp::daemon or kvfdp::twin symbol, kvfdp::proto linked")

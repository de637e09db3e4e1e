# Third-party libraries, all from Debian bookworm packages (tools/setup.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
pkg_check_modules(NVME IMPORTED_TARGET libnvme)
if(KVFDP_WITH_BPF)
  pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)

find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h REQUIRED)
add_library(kvfdp_doctest INTERFACE)
target_include_directories(kvfdp_doctest SYSTEM INTERFACE ${DOCTEST_INCLUDE_DIR})
# Use the real <ostream>, so CHECK can print std::error_code and other std types.
target_compile_definitions(kvfdp_doctest INTERFACE DOCTEST_CONFIG_USE_STD_HEADERS)

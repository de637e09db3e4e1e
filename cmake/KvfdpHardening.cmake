# Hardening of every C and C++ object and program the project builds, as Debian's
# dpkg-buildflags (hardening=+all) sets it: fortified libc calls, stack protector and stack
# clash protection, control-flow protection, full RELRO (-z relro -z now) and PIE. lintian's
# hardening-no-* tags check the packaged binaries (tests/package/check_deb.sh reads the same
# with readelf). BPF objects (clang -target bpf, cmake/KvfdpBpf.cmake) are not C/C++ objects
# here; no target compiles CUDA sources (libkvgpu's copy_cuda.cpp is C++ over the CUDA runtime
# API, built by the C++ compiler with these flags).
include(CheckPIESupported)
check_pie_supported(LANGUAGES C CXX)
add_compile_options(
  $<$<COMPILE_LANGUAGE:C,CXX>:-fstack-protector-strong>
  $<$<COMPILE_LANGUAGE:C,CXX>:-fstack-clash-protection>
  $<$<COMPILE_LANGUAGE:C,CXX>:-fcf-protection>
  # _FORTIFY_SOURCE needs the optimiser; a Debug build leaves it out.
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<NOT:$<CONFIG:Debug>>>:-U_FORTIFY_SOURCE>
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<NOT:$<CONFIG:Debug>>>:-D_FORTIFY_SOURCE=2>)
add_link_options(LINKER:-z,relro LINKER:-z,now)

# Feature options, each ON by default when its toolchain is found.

find_program(KVFDP_CLANG NAMES clang clang-14 clang-16 clang-19)
find_program(KVFDP_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
find_library(KVFDP_LIBBPF NAMES bpf)
if(KVFDP_CLANG AND KVFDP_BPFTOOL AND KVFDP_LIBBPF)
  set(_kvfdp_bpf_default ON)
else()
  set(_kvfdp_bpf_default OFF)
endif()
option(KVFDP_WITH_BPF "Build the eBPF tagger (needs clang, bpftool, libbpf)" ${_kvfdp_bpf_default})

# Debian's hardening flags (cmake/KvfdpHardening.cmake). The package is built with them; OFF
# builds a tree comparable with one from before them (docs/perf.md, section 1).
option(KVFDP_HARDENING "Build with Debian's hardening flags" ON)

# nvcc 13 accepts C++20 at most; the CUDA parts are compiled as CUDA 20.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_kvfdp_cuda_default ON)
else()
  set(_kvfdp_cuda_default OFF)
endif()
option(KVFDP_WITH_CUDA "Build libkvgpu's CUDA path (needs nvcc)" ${_kvfdp_cuda_default})
if(KVFDP_WITH_CUDA)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  find_package(CUDAToolkit REQUIRED)
endif()

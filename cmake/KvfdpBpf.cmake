# BPF build pipeline: clang -target bpf compiles a CO-RE object against bpf/include/vmlinux.h,
# then `bpftool gen skeleton` turns it into a header in the build tree.
#
# kvfdp_bpf_program(NAME SOURCE file.bpf.c [HEADERS h...]) produces
#   build/bpf/NAME.bpf.o                  (also copied into the VM guest)
#   build/generated/bpf/NAME.skel.h       (include as "bpf/NAME.skel.h")
# and an INTERFACE target kvfdp_bpf_NAME that carries the include path, libbpf and the
# build dependency.

set(KVFDP_BPF_CFLAGS -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86
  -Wall -Wno-unused-function -Wno-compare-distinct-pointer-types
  -I${PROJECT_SOURCE_DIR}/bpf/include -I${PROJECT_SOURCE_DIR}
  -idirafter /usr/include/x86_64-linux-gnu -idirafter /usr/include)

function(kvfdp_bpf_program name)
  cmake_parse_arguments(A "" "SOURCE" "HEADERS" ${ARGN})
  set(obj ${KVFDP_BPF_OBJ_DIR}/${name}.bpf.o)
  set(skel_dir ${PROJECT_BINARY_DIR}/generated/bpf)
  set(skel ${skel_dir}/${name}.skel.h)
  get_filename_component(src ${A_SOURCE} ABSOLUTE)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${KVFDP_BPF_OBJ_DIR}
    COMMAND ${KVFDP_CLANG} ${KVFDP_BPF_CFLAGS} -c ${src} -o ${obj}
    DEPENDS ${src} ${A_HEADERS} ${PROJECT_SOURCE_DIR}/bpf/include/vmlinux.h
    COMMENT "BPF ${name}.bpf.o"
    VERBATIM)
  add_custom_command(OUTPUT ${skel}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${skel_dir}
    COMMAND ${KVFDP_BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(kvfdp_bpf_${name}_gen DEPENDS ${skel})
  add_library(kvfdp_bpf_${name} INTERFACE)
  add_dependencies(kvfdp_bpf_${name} kvfdp_bpf_${name}_gen)
  # SYSTEM: the generated skeleton is C-style code outside the project's warning set.
  target_include_directories(kvfdp_bpf_${name} SYSTEM INTERFACE ${PROJECT_BINARY_DIR}/generated)
  target_include_directories(kvfdp_bpf_${name} INTERFACE ${PROJECT_SOURCE_DIR})
  target_link_libraries(kvfdp_bpf_${name} INTERFACE PkgConfig::LIBBPF)
endfunction()

# Install components and the Debian packages (CPack DEB), built by `./tools/dev.sh package`:
#   kvfdp          kvfdpd, the kvfdp CLI, the systemd unit, sysusers.d/modules-load.d snippets,
#                  /etc/kvfdp/kvfdp.toml and /etc/default/kvfdpd (conffiles), docs, the Grafana
#                  dashboard (share/kvfdp/grafana/kvfdp.json), the Prometheus alert rules
#                  (share/kvfdp/prometheus/kvfdp-alerts.yml)
#   libkvgpu-dev   libkvgpu (header, .so, .a, pkg-config file) and its Python binding
# Depends come from dpkg-shlibdeps; the version is the CMake project version.
include(GNUInstallDirs)

# `cmake --install` / cpack install what is built; they do not build everything first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

install(TARGETS kvfdp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kvfdp)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/cli.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT kvfdp)
install(FILES ${PROJECT_SOURCE_DIR}/monitoring/grafana/kvfdp.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/kvfdp/grafana COMPONENT kvfdp)
install(FILES ${PROJECT_SOURCE_DIR}/monitoring/prometheus/kvfdp-alerts.yml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/kvfdp/prometheus COMPONENT kvfdp)

# libkvgpu-dev, in the multiarch library directory (lib/x86_64-linux-gnu).
if(CMAKE_LIBRARY_ARCHITECTURE)
  set(KVGPU_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE})
  set(KVGPU_PC_PREFIX "\${pcfiledir}/../../..")
else()
  set(KVGPU_LIBDIR lib)
  set(KVGPU_PC_PREFIX "\${pcfiledir}/../..")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/kvgpu.pc.in ${PROJECT_BINARY_DIR}/pkg/kvgpu.pc @ONLY)
install(TARGETS kvgpu kvgpu_static
  LIBRARY DESTINATION ${KVGPU_LIBDIR} COMPONENT dev
  ARCHIVE DESTINATION ${KVGPU_LIBDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/kvgpu/kvgpu.h ${PROJECT_SOURCE_DIR}/kvgpu/kvgpu.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvgpu COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/pkg/kvgpu.pc DESTINATION ${KVGPU_LIBDIR}/pkgconfig
  COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/kvgpu/python/kvgpu.py
  DESTINATION lib/python3/dist-packages COMPONENT dev EXCLUDE_FROM_ALL)

# Per-package /usr/share/doc/PKG/{copyright,changelog.gz} (Debian policy 12.5, 12.7), only in
# the packages (EXCLUDE_FROM_ALL: a plain `cmake --install` skips them).
# The maintainer field: DEBFULLNAME and DEBEMAIL from the environment (Debian's convention),
# else a placeholder that lintian reports (docs/deploy.md, lintian).
if(DEFINED ENV{DEBEMAIL} AND NOT "$ENV{DEBEMAIL}" STREQUAL "")
  set(_kvfdp_deb_maint_default "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
else()
  set(_kvfdp_deb_maint_default "kvfdp maintainers <kvfdp@localhost>")
endif()
set(KVFDP_DEB_MAINTAINER "${_kvfdp_deb_maint_default}" CACHE STRING "Maintainer of the .deb packages")
string(TIMESTAMP _kvfdp_deb_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(pair "kvfdp;kvfdp" "libkvgpu-dev;dev")
  list(GET pair 0 pkg)
  list(GET pair 1 comp)
  set(PKG ${pkg})
  set(VERSION ${PROJECT_VERSION})
  set(MAINTAINER ${KVFDP_DEB_MAINTAINER})
  set(DATE ${_kvfdp_deb_date})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/changelog.in ${PROJECT_BINARY_DIR}/pkg/${pkg}/changelog @ONLY)
  install(CODE "execute_process(COMMAND gzip -9nf \"${PROJECT_BINARY_DIR}/pkg/${pkg}/changelog\"
                  -c OUTPUT_FILE \"${PROJECT_BINARY_DIR}/pkg/${pkg}/changelog.gz\")"
    COMPONENT ${comp} EXCLUDE_FROM_ALL)
  install(FILES ${PROJECT_BINARY_DIR}/pkg/${pkg}/changelog.gz ${CMAKE_CURRENT_LIST_DIR}/deb/copyright
    DESTINATION share/doc/${pkg} COMPONENT ${comp} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kvfdp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR kvfdp)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL kvfdp dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${KVFDP_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_KVFDP_PACKAGE_NAME kvfdp)
set(CPACK_DEBIAN_KVFDP_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_KVFDP_PACKAGE_RECOMMENDS "kmod, xfsprogs")
set(CPACK_DEBIAN_KVFDP_PACKAGE_DEPENDS "init-system-helpers (>= 1.54)")
set(CPACK_COMPONENT_KVFDP_DESCRIPTION "NVMe FDP placement for LLM KV-cache files
kvfdpd exposes an NVMe Flexible Data Placement namespace as a ublk block
disk and writes each file's blocks to the reclaim unit handle of its
lifetime class, which an eBPF tagger reads from fcntl(F_SET_RW_HINT) or
directory rules. The kvfdp command shows handle usage, FDP statistics and
WAF, tagged files and metrics, and projects WAF on a built-in FDP SSD model.")
set(CPACK_DEBIAN_KVFDP_PACKAGE_CONTROL_EXTRA
  ${CMAKE_CURRENT_LIST_DIR}/deb/conffiles ${CMAKE_CURRENT_LIST_DIR}/deb/postinst
  ${CMAKE_CURRENT_LIST_DIR}/deb/prerm ${CMAKE_CURRENT_LIST_DIR}/deb/postrm)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libkvgpu-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "python3")
# ldconfig by trigger; CPack's own postinst/postrm would call it directly.
set(CPACK_DEBIAN_DEV_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/dev/triggers
  ${CMAKE_CURRENT_LIST_DIR}/deb/dev/postinst ${CMAKE_CURRENT_LIST_DIR}/deb/dev/postrm)
set(CPACK_COMPONENT_DEV_DESCRIPTION "GPU KV-cache eviction into lifetime-tagged files (kvfdp)
libkvgpu evicts GPU KV-cache blocks into files tagged with their expected
lifetime, so that kvfdp places them on the matching NVMe FDP reclaim unit
handle, and loads them back. This package holds the C and C++ headers, the
shared and static library, the pkg-config file and the Python (ctypes)
binding.")
include(CPack)

# Install rules and Debian packages (CPack's DEB generator, one package per component):
#   tunefarm          (component workstation) the CLI, tuner-daemon, rpc_tracker, their units and
#                     /etc/default files, man pages, docs. Depends on tunefarm-server, whose
#                     tunefarm-measure-child measures kernels locally (`tunefarm tune` without a farm).
#   tunefarm-server   (component server) rpc_server + tunefarm-measure-child beside it, its unit and
#                     /etc/default file: small, for the boards.
#   tunefarm-runtime  (component runtime) libtunefarm_runtime.a, its C and C++ headers, a pkg-config
#                     file and tunefarm-run.
# Only what this configuration builds is installed (TUNEFARM_RUNTIME_ONLY has just the runtime,
# TUNEFARM_FARM_ONLY the server and the runtime), so the file is harmless everywhere; nothing here
# adds to the build. Packages: `cmake --build B && cd B && cpack` (scripts/package.sh does amd64 and
# the arm64 cross build; `cpack -D CPACK_COMPONENTS_ALL=server` for one). Man pages are generated
# from each program's --help by help2man at install time (under the cross emulator when
# cross-compiling). Units go to /lib/systemd/system and settings to /etc/default (Debian's paths,
# absolute whatever the prefix); the units are installed disabled (deploy/debian/postinst).
include_guard(GLOBAL)
include(GNUInstallDirs)

set(TUNEFARM_PACKAGE_MAINTAINER "tunefarm maintainers <tunefarm@example.org>" CACHE STRING
    "Maintainer field of the Debian packages (placeholder)")
set(TUNEFARM_PACKAGE_HOMEPAGE "https://example.org/tunefarm" CACHE STRING
    "Homepage field of the Debian packages (placeholder)")
set(TUNEFARM_PACKAGE_RELEASE "1" CACHE STRING "Debian revision of the packages (VERSION-RELEASE)")

set(_tf_debian ${CMAKE_SOURCE_DIR}/deploy/debian)
set(_tf_systemd ${CMAKE_SOURCE_DIR}/deploy/systemd)
set(_tf_pkg_dir ${CMAKE_BINARY_DIR}/packaging)
# Multiarch library directory (lib/x86_64-linux-gnu, lib/aarch64-linux-gnu) whatever the prefix:
# the packages install to /usr, the build directory may have been configured for /usr/local.
if(CMAKE_LIBRARY_ARCHITECTURE)
  set(_tf_libdir lib/${CMAKE_LIBRARY_ARCHITECTURE})
else()
  set(_tf_libdir ${CMAKE_INSTALL_LIBDIR})
endif()

set(_tf_have_workstation OFF)
set(_tf_have_server OFF)
set(_tf_have_runtime OFF)
if(TARGET tunefarm AND TARGET tuner-daemon AND TARGET rpc_tracker)
  set(_tf_have_workstation ON)
endif()
if(TARGET rpc_server AND TARGET tunefarm-measure-child)
  set(_tf_have_server ON)
endif()
if(TARGET tunefarm_runtime AND TARGET tunefarm-run)
  set(_tf_have_runtime ON)
endif()

# A man page for PROGRAM (a target) from its --help, installed with COMPONENT. help2man when it is
# there, else the --help text as a preformatted page. Runs at install time (cpack), never at build.
find_program(TUNEFARM_HELP2MAN help2man)
mark_as_advanced(TUNEFARM_HELP2MAN)
function(_tf_install_help_man target component synopsis)
  set(emulator "")
  if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
    list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " emulator)
  endif()
  set(code [=[
set(_tf_binary "$<TARGET_FILE:@target@>")
set(_tf_emulator "@emulator@")
set(_tf_out "@_tf_pkg_dir@/man/@target@.1")
file(MAKE_DIRECTORY "@_tf_pkg_dir@/man/wrap")
# A wrapper named like the program, so help2man (and the emulator, when cross-compiling) see its name.
set(_tf_wrapper "@_tf_pkg_dir@/man/wrap/@target@")
file(WRITE "${_tf_wrapper}" "#!/bin/sh\nexec ${_tf_emulator} \"${_tf_binary}\" \"$@\"\n")
file(CHMOD "${_tf_wrapper}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(_tf_help2man "@TUNEFARM_HELP2MAN@")
if(_tf_help2man)
  execute_process(COMMAND "${_tf_help2man}" --no-info --section=1 "--source=tunefarm @PROJECT_VERSION@"
                          "--version-string=@target@ @PROJECT_VERSION@" "--name=@synopsis@"
                          --output=${_tf_out} "${_tf_wrapper}"
                  RESULT_VARIABLE _tf_rc ERROR_VARIABLE _tf_err)
else()
  execute_process(COMMAND "${_tf_wrapper}" --help OUTPUT_VARIABLE _tf_help RESULT_VARIABLE _tf_rc ERROR_VARIABLE _tf_err)
  string(REPLACE "\\" "\\e" _tf_help "${_tf_help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" _tf_help "${_tf_help}")
  file(WRITE "${_tf_out}" ".TH @target@ 1 \"\" \"tunefarm @PROJECT_VERSION@\" \"User Commands\"\n.SH NAME\n@target@ \\- @synopsis@\n.SH DESCRIPTION\n.nf\n${_tf_help}.fi\n")
endif()
if(NOT _tf_rc EQUAL 0)
  message(FATAL_ERROR "man page of @target@ from --help failed: ${_tf_err}")
endif()
execute_process(COMMAND gzip -9nf "${_tf_out}" RESULT_VARIABLE _tf_rc)
if(NOT _tf_rc EQUAL 0)
  message(FATAL_ERROR "gzip ${_tf_out} failed")
endif()
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/@CMAKE_INSTALL_MANDIR@/man1" TYPE FILE FILES "${_tf_out}.gz")
]=])
  string(CONFIGURE "${code}" code @ONLY)
  install(CODE "${code}" COMPONENT ${component})
endfunction()

# /usr/share/doc/PACKAGE/{copyright,changelog.Debian.gz} for every package (Debian policy 12.5/12.7)
# and its lintian overrides.
# The license comes from a LICENSE file at the top of the source tree; without one the copyright
# file says that none has been chosen yet.
if(EXISTS ${CMAKE_SOURCE_DIR}/LICENSE)
  file(READ ${CMAKE_SOURCE_DIR}/LICENSE _tf_license_text)
  set(_tf_license_name "custom")
else()
  set(_tf_license_text "No license has been chosen for tunefarm yet: the source tree has no LICENSE file.\nUntil it has one, all rights are reserved by the tunefarm authors.\n")
  set(_tf_license_name "undecided")
endif()
string(STRIP "${_tf_license_text}" _tf_license_text)
string(REGEX REPLACE "\n[ \t]*\n" "\n.\n" _tf_license_text "${_tf_license_text}")
string(REGEX REPLACE "\n" "\n " _tf_license_text "${_tf_license_text}")
string(TIMESTAMP _tf_year "%Y" UTC)
string(TIMESTAMP _tf_date "%a, %d %b %Y %H:%M:%S +0000" UTC)  # honours SOURCE_DATE_EPOCH
set(_tf_deb_version "${PROJECT_VERSION}-${TUNEFARM_PACKAGE_RELEASE}")
function(_tf_install_debian_docs package component)
  set(echarts "")
  if(package STREQUAL "tunefarm")
    set(echarts "
Files: tuner/dashboard/web/node_modules/echarts/*
Copyright: The Apache Software Foundation
Comment: ECharts, embedded into tunefarm and tuner-daemon (the web dashboard).
License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
")
  endif()
  file(WRITE ${_tf_pkg_dir}/${package}/copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: tunefarm
Upstream-Contact: ${TUNEFARM_PACKAGE_MAINTAINER}
Source: ${TUNEFARM_PACKAGE_HOMEPAGE}

Files: *
Copyright: ${_tf_year} the tunefarm authors
License: ${_tf_license_name}
 ${_tf_license_text}
${echarts}")
  file(WRITE ${_tf_pkg_dir}/${package}/changelog.Debian
"${package} (${_tf_deb_version}) unstable; urgency=medium

  * Built from the tunefarm source tree with CPack (cmake/Packaging.cmake).

 -- ${TUNEFARM_PACKAGE_MAINTAINER}  ${_tf_date}
")
  # Lintian overrides, each with its reason.
  file(WRITE ${_tf_pkg_dir}/${package}/lintian-overrides
"# Built from the tunefarm source tree with CPack and not uploaded to Debian: there is no ITP bug
# for the first changelog entry to close.
${package}: initial-upload-closes-no-bugs
")
  install(FILES ${_tf_pkg_dir}/${package}/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}
          PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ COMPONENT ${component})
  install(FILES ${_tf_pkg_dir}/${package}/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
          RENAME ${package} PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ COMPONENT ${component})
  install(CODE "execute_process(COMMAND gzip -9nc \"${_tf_pkg_dir}/${package}/changelog.Debian\"
                                OUTPUT_FILE \"${_tf_pkg_dir}/${package}/changelog.Debian.gz\" RESULT_VARIABLE rc)
                if(NOT rc EQUAL 0)
                  message(FATAL_ERROR \"gzip changelog.Debian of ${package} failed\")
                endif()
                file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}\" TYPE FILE
                     FILES \"${_tf_pkg_dir}/${package}/changelog.Debian.gz\")"
          COMPONENT ${component})
endfunction()

# A unit (disabled: nothing enables it) and its /etc/default file (a conffile) for COMPONENT.
function(_tf_install_service unit default_name component)
  install(FILES ${_tf_systemd}/${unit} DESTINATION /lib/systemd/system
          PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ COMPONENT ${component})
  install(FILES ${_tf_debian}/${default_name}.default DESTINATION /etc/default RENAME ${default_name}
          PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ COMPONENT ${component})
  set_property(GLOBAL APPEND PROPERTY TUNEFARM_CONFFILES_${component} /etc/default/${default_name})
endfunction()

set(_tf_components "")
if(_tf_have_workstation)
  list(APPEND _tf_components workstation)
  install(TARGETS tunefarm tuner-daemon rpc_tracker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT workstation)
  _tf_install_help_man(tunefarm workstation "compile, tune and run models with tunefarm")
  _tf_install_help_man(tuner-daemon workstation "the tunefarm tuning service (jobs over gRPC)")
  _tf_install_help_man(rpc_tracker workstation "the tunefarm farm's device registry and leases")
  _tf_install_service(rpc_tracker.service tunefarm-rpc-tracker workstation)
  _tf_install_service(tuner-daemon.service tunefarm-tuner-daemon workstation)
  install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT workstation)
  install(FILES ${CMAKE_SOURCE_DIR}/deploy/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME deploy.md
          COMPONENT workstation)
  file(GLOB _tf_docs ${CMAKE_SOURCE_DIR}/docs/*.md)
  install(FILES ${_tf_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT workstation)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/formats DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT workstation
          FILES_MATCHING PATTERN "*.md")
  _tf_install_debian_docs(tunefarm workstation)
endif()
if(_tf_have_server)
  list(APPEND _tf_components server)
  install(TARGETS rpc_server tunefarm-measure-child RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
  _tf_install_help_man(rpc_server server "measures kernels for the tunefarm farm")
  # tunefarm-measure-child has no --help (rpc_server starts it): a page written by hand.
  install(CODE "execute_process(COMMAND gzip -9nc \"${_tf_debian}/tunefarm-measure-child.1\"
                                OUTPUT_FILE \"${_tf_pkg_dir}/man/tunefarm-measure-child.1.gz\")
                file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\" TYPE FILE
                     FILES \"${_tf_pkg_dir}/man/tunefarm-measure-child.1.gz\")" COMPONENT server)
  _tf_install_service(rpc_server.service tunefarm-rpc-server server)
  _tf_install_debian_docs(tunefarm-server server)
endif()
if(_tf_have_runtime)
  list(APPEND _tf_components runtime)
  install(TARGETS tunefarm-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(TARGETS tunefarm_runtime ARCHIVE DESTINATION ${_tf_libdir} COMPONENT runtime)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/runtime/include/tunefarm/runtime DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tunefarm
          COMPONENT runtime FILES_MATCHING PATTERN "*.h")
  install(CODE "file(WRITE \"${_tf_pkg_dir}/tunefarm-runtime.pc\" \"prefix=\${CMAKE_INSTALL_PREFIX}
includedir=\\\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}
libdir=\\\${prefix}/${_tf_libdir}

Name: tunefarm-runtime
Description: tunefarm's graph executor for compiled models (C API: tunefarm/runtime/c_api.h)
Version: ${PROJECT_VERSION}
Cflags: -I\\\${includedir}
Libs: -L\\\${libdir} -ltunefarm_runtime -lstdc++ -lm -ldl -pthread
\")
                file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${_tf_libdir}/pkgconfig\" TYPE FILE
                     FILES \"${_tf_pkg_dir}/tunefarm-runtime.pc\")" COMPONENT runtime)
  _tf_install_help_man(tunefarm-run runtime "run a compiled tunefarm model (the runtime only)")
  _tf_install_debian_docs(tunefarm-runtime runtime)
endif()

# ---- CPack -------------------------------------------------------------------------------------
if(NOT _tf_components)
  return()
endif()

# The Debian architecture of what this configuration builds (cross builds: the target's).
set(_tf_deb_arch "")
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(_tf_deb_arch arm64)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
    set(_tf_deb_arch armhf)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
    set(_tf_deb_arch amd64)
  endif()
endif()
if(NOT _tf_deb_arch)
  find_program(TUNEFARM_DPKG dpkg)
  mark_as_advanced(TUNEFARM_DPKG)
  if(TUNEFARM_DPKG)
    execute_process(COMMAND ${TUNEFARM_DPKG} --print-architecture OUTPUT_VARIABLE _tf_deb_arch OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tunefarm)
set(CPACK_PACKAGE_VENDOR "the tunefarm authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${TUNEFARM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${TUNEFARM_PACKAGE_HOMEPAGE}")
if(EXISTS ${CMAKE_SOURCE_DIR}/LICENSE)
  set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
endif()
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/debs)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL ${_tf_components})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${TUNEFARM_PACKAGE_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${TUNEFARM_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${TUNEFARM_PACKAGE_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SOURCE tunefarm)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Depends: from dpkg-shlibdeps over the ELF files (Debian's package names, multiarch for arm64),
# plus the explicit lists below. Control files keep 0644/0755 (lintian).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
if(_tf_deb_arch)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${_tf_deb_arch})
endif()

# conffiles of each component: its /etc/default files.
foreach(component IN LISTS _tf_components)
  get_property(conffiles GLOBAL PROPERTY TUNEFARM_CONFFILES_${component})
  string(TOUPPER ${component} COMPONENT)
  if(conffiles)
    list(JOIN conffiles "\n" conffiles)
    file(WRITE ${_tf_pkg_dir}/${component}/conffiles "${conffiles}\n")
    set(CPACK_DEBIAN_${COMPONENT}_PACKAGE_CONTROL_EXTRA
        "${_tf_pkg_dir}/${component}/conffiles;${_tf_debian}/postinst;${_tf_debian}/prerm;${_tf_debian}/postrm")
  endif()
endforeach()

set(CPACK_COMPONENT_WORKSTATION_DISPLAY_NAME "tunefarm workstation programs")
set(CPACK_COMPONENT_WORKSTATION_DEPENDS server)
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_NAME tunefarm)
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_SECTION devel)
# `tunefarm compile` links kernels with binutils' ld (compiler/codegen/object_emitter.cc); the
# boards' targets (rasp4b, rasp3b) with the cross binutils; the services' user comes from adduser.
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_DEPENDS "adduser, binutils")
set(CPACK_DEBIAN_WORKSTATION_PACKAGE_SUGGESTS "binutils-aarch64-linux-gnu, binutils-arm-linux-gnueabihf")
set(CPACK_DEBIAN_WORKSTATION_DESCRIPTION "autotuning compiler and measurement farm for neural networks
tunefarm compiles ONNX models (and built-in ones such as resnet-18) into
artifacts of native kernels for x86-64 CPUs, CUDA GPUs and Raspberry Pi
boards, and tunes each kernel's schedule by measuring candidates on real
devices, as Apache TVM's AutoTVM does.

This package holds the workstation side: the tunefarm command line, the
tuning service (tuner-daemon) and the farm's tracker (rpc_tracker), with
their systemd units (installed disabled; settings in /etc/default), man
pages and documentation.")

set(CPACK_COMPONENT_SERVER_DISPLAY_NAME "tunefarm measurement server")
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME tunefarm-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION net)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_SERVER_DESCRIPTION "measurement server of the tunefarm autotuning farm
rpc_server registers a device (a board, a workstation CPU, a GPU) with the
farm's rpc_tracker under a key and measures the kernels tuners send it,
each in an isolated child process (tunefarm-measure-child) with a timeout
and a memory limit, checking their outputs.

The package is small enough for the boards. Its systemd unit is installed
disabled; the tracker address, device key and listen address are set in
/etc/default/tunefarm-rpc-server.")

set(CPACK_COMPONENT_RUNTIME_DISPLAY_NAME "tunefarm runtime")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME tunefarm-runtime)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "runtime for models compiled by tunefarm
The graph executor for tunefarm artifacts (.tfa) without the compiler: the
static library libtunefarm_runtime.a with its C API (tunefarm/runtime/c_api.h)
and C++ headers, a pkg-config file (tunefarm-runtime), and tunefarm-run, which
runs an artifact on random or given inputs and times it.")

include(CPack)

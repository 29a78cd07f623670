# The Debian packages (cmake/Packaging.cmake) in a clean Debian 12 root: scripts/test_packages.sh
# packages what this build already built (cpack, no rebuild) and the arm64 tunefarm-server from the
# cross-built farm (cross_farm_aarch64-linux-gnu in tests/CMakeLists.txt), runs lintian, installs
# the amd64 packages with apt-get into a debootstrapped minbase root (cached under
# packaging/bootstrap-cache in this build directory: ~1.5 min the first time) and runs the programs
# there, the arm64 rpc_server under qemu. Needs root and the network: without them it skips (exit
# 77), or fails under TUNEFARM_REQUIRE_FIXTURES=1. Not added to sanitizer or partial builds.
if(NOT TUNEFARM_SANITIZE AND NOT TUNEFARM_RUNTIME_ONLY AND NOT TUNEFARM_FARM_ONLY)
  add_test(NAME Packaging.DebsInstallIntoACleanDebootstrapRoot
           COMMAND ${CMAKE_SOURCE_DIR}/scripts/test_packages.sh --from-build ${CMAKE_BINARY_DIR}
                   --arm64-build ${CMAKE_BINARY_DIR}/cross/aarch64-linux-gnu-farm)
  set_tests_properties(Packaging.DebsInstallIntoACleanDebootstrapRoot PROPERTIES
                       LABELS "slow;packaging" TIMEOUT 1200 SKIP_RETURN_CODE 77 RESOURCE_LOCK tunefarm_packaging
                       COST 9000)
endif()

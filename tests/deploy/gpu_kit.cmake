# The GPU check kit rehearsed here (scripts/test_gpu_kit.sh): the kit and the bundle built from one
# static-LLVM build directory, build-bundle beside this one (side by side, ccache shares this
# build's objects: CCACHE_BASEDIR in the top CMakeLists.txt, and the same -Werror setting), their
# sizes checked, the kit unpacked into a clean debootstrapped Debian 12 root (the packaging test's
# cached root) and its runner run there without a driver: it must say so cleanly.
# Needs root and, once, the network: without them it skips (exit 77), or fails under
# TUNEFARM_REQUIRE_FIXTURES=1. Not added to sanitizer, partial or static-LLVM builds.
# COST puts the two packaging tests (minutes each, one at a time: RESOURCE_LOCK) at the head of the
# queue: started last, as a clean clone without CTest's cost data did, they ran alone for 10 minutes.
if(NOT TUNEFARM_SANITIZE AND NOT TUNEFARM_RUNTIME_ONLY AND NOT TUNEFARM_FARM_ONLY AND NOT TUNEFARM_STATIC_LLVM)
  get_filename_component(tunefarm_build_parent ${CMAKE_BINARY_DIR} DIRECTORY)
  add_test(NAME GpuKit.RehearsedInACleanRootItReportsTheMissingDriver
           COMMAND ${CMAKE_COMMAND} -E env TUNEFARM_WERROR=${TUNEFARM_WERROR}
                   ${CMAKE_SOURCE_DIR}/scripts/test_gpu_kit.sh --build ${tunefarm_build_parent}/build-bundle
                   --cache ${CMAKE_BINARY_DIR}/packaging/bootstrap-cache)
  set_tests_properties(GpuKit.RehearsedInACleanRootItReportsTheMissingDriver PROPERTIES
                       LABELS "slow;packaging" TIMEOUT 2400 SKIP_RETURN_CODE 77 RESOURCE_LOCK tunefarm_packaging
                       COST 10000)
endif()

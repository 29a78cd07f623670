# tunefarm_add_gtest(NAME SOURCES... LIBS...): one GoogleTest binary per component, registered
# with CTest test by test (like leveldb_test()), each labelled with its binary's name
# (`ctest -L compiler_test` runs one component's tests).
include(GoogleTest)
function(tunefarm_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/tests)
  tunefarm_set_warnings(${name})
  set_property(GLOBAL APPEND PROPERTY TUNEFARM_GTEST_TARGETS ${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "TUNEFARM_SOURCE_DIR=${CMAKE_SOURCE_DIR}" LABELS "${name}")
endfunction()

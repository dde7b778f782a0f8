# paddock_library(NAME DEPS lib...) — one static library per src/ folder. Sources are the
# folder's *.cpp minus *_test.cpp / *_fuzz.cpp; unit tests (*_test.cpp) beside the code are
# registered automatically. The allowed dependency DAG is also checked from the includes
# by cmake/check_layering.py (see ARCHITECTURE.md), so a wrong include fails the build.
function(paddock_library name)
  cmake_parse_arguments(ARG "" "DIR" "DEPS;EXTERNAL" ${ARGN})
  if(NOT ARG_DIR)
    set(ARG_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS ${ARG_DIR}/*.cpp)
  list(FILTER srcs EXCLUDE REGEX "_(test|fuzz)\\.cpp$")
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} ${ARG_EXTERNAL})
  if(PADDOCK_TESTS)
    file(GLOB tests CONFIGURE_DEPENDS ${ARG_DIR}/*_test.cpp)
    if(tests)
      add_executable(${name}_test ${tests})
      target_link_libraries(${name}_test PRIVATE ${name} GTest::gtest GTest::gtest_main)
      add_test(NAME ${name}_test COMMAND ${name}_test)
      set_tests_properties(${name}_test PROPERTIES LABELS unit
        ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
    endif()
  endif()
  if(PADDOCK_FUZZ)
    file(GLOB fuzzers CONFIGURE_DEPENDS ${ARG_DIR}/*_fuzz.cpp)
    foreach(f ${fuzzers})
      get_filename_component(fname ${f} NAME_WE)
      add_executable(${fname} ${f})
      target_link_libraries(${fname} PRIVATE ${name})
      target_link_options(${fname} PRIVATE -fsanitize=fuzzer)
    endforeach()
  endif()
endfunction()

# paddock_test(NAME SOURCES... LIBS ... LABELS ...) — a test executable outside src/.
function(paddock_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}"
    ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR};PADDOCK_BIN=$<TARGET_FILE:paddock>")
endfunction()

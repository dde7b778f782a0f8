# Every op of the cpu backend (each ISA path this machine has, forced scalar, 1 and 2
# threads) against the ref backend. It lives here, not beside the code, because the ref
# backend is a sibling library the cpu backend may not include.
if(TARGET paddock_backend_cpu AND TARGET paddock_backend_ref)
  add_executable(cpu_ops_test ${CMAKE_CURRENT_LIST_DIR}/cpu_ops_test.cpp)
  target_link_libraries(cpu_ops_test PRIVATE paddock_backend_cpu paddock_backend_ref GTest::gtest GTest::gtest_main)
  target_include_directories(cpu_ops_test PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME cpu_ops_test COMMAND cpu_ops_test)
  set_tests_properties(cpu_ops_test PROPERTIES LABELS ops)
endif()

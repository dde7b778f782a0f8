# Every op on every backend of backends_under_test() against the ref backend
# (backend_ops_test.cpp). It lives here, not beside the code, because it links the backends
# and the ref backend, which they may not include.
if(TARGET paddock_backend_cpu AND TARGET paddock_backend_ref)
  add_executable(backend_ops_test ${CMAKE_CURRENT_LIST_DIR}/backend_ops_test.cpp)
  target_link_libraries(backend_ops_test PRIVATE paddock_backend_cpu paddock_backend_ref GTest::gtest GTest::gtest_main)
  target_include_directories(backend_ops_test PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME backend_ops_test COMMAND backend_ops_test --gtest_filter=-*vulkan*)
  set_tests_properties(backend_ops_test PROPERTIES LABELS ops)
  if(TARGET paddock_backend_vulkan)
    # The Vulkan backend on Mesa's lavapipe (a CPU device, used only when named), or on the
    # device PADDOCK_VULKAN_DEVICE named at configure time.
    target_link_libraries(backend_ops_test PRIVATE paddock_backend_vulkan)
    add_test(NAME backend_ops_vulkan_test COMMAND backend_ops_test --gtest_filter=*vulkan*)
    set_tests_properties(backend_ops_vulkan_test PROPERTIES LABELS ops
      ENVIRONMENT "PADDOCK_VULKAN_DEVICE=${_pd_vulkan_device}")
  endif()
endif()

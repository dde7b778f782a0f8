# quant/mix against the files llama-quantize wrote: every tensor type of the fixture models
# must be what plan_mix chooses for the file's general.file_type.
if(TARGET paddock_quant AND TARGET paddock_gguf)
  add_executable(mix_golden_test ${CMAKE_CURRENT_LIST_DIR}/mix_golden_test.cpp)
  target_link_libraries(mix_golden_test PRIVATE paddock_quant paddock_gguf GTest::gtest GTest::gtest_main)
  target_include_directories(mix_golden_test PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME mix_golden_test COMMAND mix_golden_test)
  set_tests_properties(mix_golden_test PROPERTIES LABELS golden ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
endif()

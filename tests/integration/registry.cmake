# Registry client against Debian's docker-registry (push, pull, resume, corruption); the
# script skips (exit 77) when docker-registry or the fixtures are missing.
if(TARGET paddock_store)
  add_executable(registry_driver ${CMAKE_CURRENT_LIST_DIR}/registry_driver.cpp)
  target_link_libraries(registry_driver PRIVATE paddock_store)
  add_test(NAME registry_integration
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/registry_test.sh $<TARGET_FILE:registry_driver>)
  set_tests_properties(registry_integration PROPERTIES LABELS integration SKIP_RETURN_CODE 77
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
endif()

# A thinking budget through the Api with the real in-process runner on the qwen3 fixture (the
# server's unit tests use a fake Runner and do not link the engine).
if(TARGET paddock_server AND TARGET paddock_runner)
  paddock_test(thinking_budget_api_test
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/thinking_budget_api_test.cpp
                       ${PROJECT_SOURCE_DIR}/src/server/fake_store_test.cpp
               LIBS paddock_server paddock_runner LABELS integration)
endif()

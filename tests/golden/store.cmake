# Model store golden tests: the Ollama-written fixture store, create from a fixture GGUF,
# crash safety (killed creates) and two processes writing at once.
if(TARGET paddock_store AND TARGET paddock_gguf)
  paddock_test(store_golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/store_golden_test.cpp
               LIBS paddock_store LABELS golden)
endif()

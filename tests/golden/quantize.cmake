# create --quantize against llama-quantize: store::quantize_gguf on tiny-zoo-f32 must give the
# tensor types and values of the tiny-zoo-<type> fixtures llama-quantize wrote.
if(TARGET paddock_store AND TARGET paddock_gguf)
  paddock_test(quantize_golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/quantize_golden_test.cpp
               LIBS paddock_store LABELS golden)
endif()

# `paddock create --quantize` through a real server: quantize, the layer equals llama-quantize's
# file, show, generate, and Ollama's refusals (skips loudly, exit 77, without fixtures).
if(TARGET paddock)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  add_test(NAME quantize_create_test
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/quantize_create_test.py $<TARGET_FILE:paddock>)
  set_tests_properties(quantize_create_test PROPERTIES LABELS golden SKIP_RETURN_CODE 77 TIMEOUT 180
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
endif()

# `paddock show --json` on every fixture model against an independent stdlib-Python GGUF
# parser (show_oracle.py), and every fixture .gguf through our reader.
if(TARGET paddock_gguf)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  paddock_test(show_golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/show_test.cpp
               LIBS paddock_gguf nlohmann_json::nlohmann_json LABELS golden)
  target_compile_definitions(show_golden_test PRIVATE
    PADDOCK_SHOW_ORACLE="${CMAKE_CURRENT_LIST_DIR}/show_oracle.py"
    PADDOCK_PYTHON="${Python3_EXECUTABLE}")
  add_dependencies(show_golden_test paddock)
endif()

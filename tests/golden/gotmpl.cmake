# Ollama Go templates: every fixtures/templates/ollama/<name> case renders byte-identically.
paddock_test(gotmpl_golden_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gotmpl_golden_test.cpp
  LIBS paddock_chat
  LABELS golden)

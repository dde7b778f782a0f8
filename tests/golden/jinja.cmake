# Jinja chat templates rendered like Hugging Face's apply_chat_template (fixtures/templates/jinja).
if(TARGET paddock_jinja)
  paddock_test(paddock_jinja_golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/jinja_golden_test.cpp
               LIBS paddock_jinja nlohmann_json::nlohmann_json LABELS golden)
endif()

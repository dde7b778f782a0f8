# tool_choice obeyed end to end: the server over the in-process runner and stories260K, 100
# seeded runs per mode on a tagged and a bare-JSON template, across the four chat APIs
# (about 30 s in release). Not in sanitizer builds, where 700 generations take minutes; the
# grammar, parsers and routes it combines are unit-tested there (tool_choice_test.cpp,
# json_schema_test.cpp, in_process_runner_test.cpp).
if(TARGET paddock_server AND TARGET paddock_runner AND NOT PADDOCK_SANITIZE)
  paddock_test(tool_choice_golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/tool_choice_test.cpp
               LIBS paddock_server paddock_runner LABELS golden)
endif()

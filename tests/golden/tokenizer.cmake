# Tokenizer golden tests: llama.cpp's vocabulary test vectors and the war-and-peace hashes.
if(TARGET paddock_tokenizer)
  paddock_test(tokenizer_golden_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_golden_test.cpp
    LIBS paddock_tokenizer
    LABELS golden)
  paddock_test(tokenizer_war_and_peace_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/tokenizer_war_and_peace_test.cpp
    LIBS paddock_tokenizer
    LABELS "golden;slow")
endif()

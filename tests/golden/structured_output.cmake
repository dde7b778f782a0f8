# Structured output over the fixture vocabularies (stories260K's SentencePiece with byte
# tokens, Llama 3's byte-level BPE): bounded schemas complete, parse and validate within 400
# tokens; format json stays a valid JSON prefix for 200 tokens.
if(TARGET paddock_sample)
  paddock_test(structured_output_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/structured_output_test.cpp
               LIBS paddock_sample LABELS golden)
endif()

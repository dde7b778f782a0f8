# Integration tests of `paddock serve`: the real binary on a random free port over a temp copy
# of the fixture store, driven with curl (server_curl.sh; server_hardening.sh sends hostile
# requests) and, when `npm install` has been run in tests/integration, the official `ollama`
# and `openai` npm clients (clients.mjs; embeddings.mjs with the embedding fixture models) and
# `@anthropic-ai/sdk` (anthropic.mjs); the `openai` client's Responses API (responses.mjs).
if(TARGET paddock AND TARGET paddock_server)
  foreach(t curl hardening clients embeddings anthropic responses)
    add_test(NAME server_${t} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_server_test.sh ${t})
    set_tests_properties(server_${t} PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR};PADDOCK_BIN=$<TARGET_FILE:paddock>")
  endforeach()
endif()

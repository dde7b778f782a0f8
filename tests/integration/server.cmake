# Integration tests of `paddock serve`: the real binary on a random free port over a temp copy
# of the fixture store, driven with curl (server_curl.sh; server_hardening.sh sends hostile
# requests; server_lifecycle.sh abandons requests, starves and stops the server;
# server_metrics.sh checks /metrics with prom_check.py) and, when `npm install` has been run
# in tests/integration, the official `ollama` and `openai` npm clients (clients.mjs;
# embeddings.mjs with the embedding fixture models; the Responses API: responses.mjs) and
# `@anthropic-ai/sdk` (anthropic.mjs).
if(TARGET paddock AND TARGET paddock_server)
  foreach(t curl hardening lifecycle metrics clients embeddings anthropic responses)
    add_test(NAME server_${t} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_server_test.sh ${t})
    set_tests_properties(server_${t} PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR};PADDOCK_BIN=$<TARGET_FILE:paddock>")
  endforeach()
endif()

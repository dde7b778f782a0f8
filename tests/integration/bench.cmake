# Integration test of `paddock bench`: a fixture model and a saved synthetic (`--shape tiny`)
# model are benchmarked with tiny -p/-n; the JSON must be complete with positive numbers, and
# `paddock show --json` must read the saved file's architecture and per-tensor types.
if(TARGET paddock)
  add_test(NAME bench_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_test.sh)
  set_tests_properties(bench_cli PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR};PADDOCK_BIN=$<TARGET_FILE:paddock>")
endif()

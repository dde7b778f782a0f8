# The CLI against a server: cli_fake_server drives every client command (and the
# interactive prompt, through a pseudo-terminal) against a canned Ollama API written in the
# test; cli_real_server runs `paddock serve` on a random port over a temporary copy of
# fixtures/ollama-store (skips loudly, exit 77, without fixtures) and checks list/cp/rm/show,
# `run` with a piped prompt, and starting a server in the background.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(_pd_mode fake real)
  add_test(NAME cli_${_pd_mode}_server
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_test.py ${_pd_mode} $<TARGET_FILE:paddock>)
  set_tests_properties(cli_${_pd_mode}_server PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 180
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
endforeach()

# Runner processes and the scheduler end to end: a 32-client soak over two models, a full
# queue (503), kill -9 of a runner mid-stream and of the server (no orphaned runners).
add_test(NAME scheduler_integration
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/scheduler_test.py $<TARGET_FILE:paddock>)
set_tests_properties(scheduler_integration PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300
                     ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")

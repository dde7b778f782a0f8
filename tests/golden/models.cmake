# Golden model tests: for every fixtures/golden/<model>.logits.jsonl, run
#   paddock eval --model fixtures/models/<model>.gguf --teacher-force <that file> --backend ref --json
# and check it with tools/compare_golden.py (--quant for all but the float models). One test
# per model, label golden, and one more with --backend cpu (label golden_cpu). Without fixtures a single test skips loudly (exit 77).
set(_pd_golden_script ${CMAKE_CURRENT_LIST_DIR}/run_model_golden.sh)
file(GLOB _pd_golden_files "${PADDOCK_FIXTURES_DIR}/golden/*.logits.jsonl")
if(NOT _pd_golden_files)
  add_test(NAME golden_models COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} none)
  set_tests_properties(golden_models PROPERTIES LABELS golden SKIP_RETURN_CODE 77)
endif()
foreach(_pd_file ${_pd_golden_files})
  get_filename_component(_pd_name ${_pd_file} NAME)
  string(REPLACE ".logits.jsonl" "" _pd_model ${_pd_name})
  add_test(NAME golden_model_${_pd_model}
           COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${_pd_model})
  set_tests_properties(golden_model_${_pd_model} PROPERTIES LABELS golden SKIP_RETURN_CODE 77
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
  # The same under the cpu backend (every ISA path, 1 and 2 threads). Label golden_cpu: the
  # release suite runs it; under sanitizers the cpu kernels are covered by the ops and unit
  # tests, since the scalar path over a 128k vocabulary takes minutes there.
  add_test(NAME golden_cpu_${_pd_model}
           COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${_pd_model} cpu)
  set_tests_properties(golden_cpu_${_pd_model} PROPERTIES LABELS golden_cpu SKIP_RETURN_CODE 77
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
endforeach()

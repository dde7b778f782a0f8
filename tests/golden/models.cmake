# Golden model tests: for every fixtures/golden/<model>.logits.jsonl, run
#   paddock eval --model fixtures/models/<model>.gguf --teacher-force <that file> --backend ref --json
# and check it with tools/compare_golden.py (--quant for all but the float models). One test
# per model, label golden, one more with --backend cpu (label golden_cpu) and one with a pass
# split across cpu and ref (golden_split_*, label golden); see below for sanitizer builds. Without fixtures a single test skips loudly (exit 77).
set(_pd_golden_script ${CMAKE_CURRENT_LIST_DIR}/run_model_golden.sh)
file(GLOB _pd_golden_files "${PADDOCK_FIXTURES_DIR}/golden/*.logits.jsonl")
# Fixture models of architectures paddock does not run yet, each with the open issue that
# adds it; that issue deletes its line here together with its arch file.
set(_pd_pending_models
    tiny-qwen3moe-q4_k_m tiny-gptoss-mxfp4 tiny-gptoss-ollama-mxfp4  # issue 24 (mixture of experts)
    tiny-gemma3-q4_k_m tiny-gemma3-ollama-q4_k_m tiny-phi3-q4_k_m)   # issue 29 (gemma3, phi3)
foreach(_pd_model ${_pd_pending_models})
  list(FILTER _pd_golden_files EXCLUDE REGEX "/${_pd_model}\\.logits\\.jsonl$")
endforeach()
message(STATUS "golden models not yet tested (architecture pending): ${_pd_pending_models}")
if(NOT _pd_golden_files)
  add_test(NAME golden_models COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} none)
  set_tests_properties(golden_models PROPERTIES LABELS golden SKIP_RETURN_CODE 77)
endif()
# Sanitizer builds check each model once, on the cpu backend's best path (the scalar ref
# and scalar cpu paths over a 128k vocabulary take minutes each there; both run in release,
# and the ref and cpu kernels are checked op by op under sanitizers by the unit/ops tests).
if(PADDOCK_SANITIZE)
  set(_pd_golden_mode cpu-best)
else()
  set(_pd_golden_mode ref)
endif()
foreach(_pd_file ${_pd_golden_files})
  get_filename_component(_pd_name ${_pd_file} NAME)
  string(REPLACE ".logits.jsonl" "" _pd_model ${_pd_name})
  add_test(NAME golden_model_${_pd_model}
           COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${_pd_model} ${_pd_golden_mode})
  set_tests_properties(golden_model_${_pd_model} PROPERTIES LABELS golden SKIP_RETURN_CODE 77
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
  if(NOT PADDOCK_SANITIZE)
    add_test(NAME golden_split_${_pd_model}
             COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${_pd_model} split)
    set_tests_properties(golden_split_${_pd_model} PROPERTIES LABELS golden SKIP_RETURN_CODE 77
                         ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
    # The cpu backend under every ISA path, 1 and 2 threads.
    add_test(NAME golden_cpu_${_pd_model}
             COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${_pd_model} cpu)
    set_tests_properties(golden_cpu_${_pd_model} PROPERTIES LABELS golden_cpu SKIP_RETURN_CODE 77
                         ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
  endif()
endforeach()

# The batched engine through the binary: `paddock eval --parallel 4` must match llama.cpp's
# golden numbers like the one-prompt-at-a-time run (a float and a quantized model), and a
# 4096-token generation with n_ctx 512 must run through context shifts. Label golden.
set(_pd_eval_parallel_script ${CMAKE_CURRENT_LIST_DIR}/run_eval_parallel.sh)
foreach(_pd_model stories260K tiny-qwen3-q8_0)
  add_test(NAME golden_eval_parallel_${_pd_model}
           COMMAND ${_pd_eval_parallel_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} parallel ${_pd_model})
  set_tests_properties(golden_eval_parallel_${_pd_model} PROPERTIES LABELS golden SKIP_RETURN_CODE 77
                       ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
endforeach()
# The same on cpu and on the Vulkan device, over gemma3's sliding-window rings and full layers.
add_test(NAME golden_eval_parallel_cpu_tiny-gemma3-q4_k_m
         COMMAND ${_pd_eval_parallel_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} parallel
                 tiny-gemma3-q4_k_m cpu)
set_tests_properties(golden_eval_parallel_cpu_tiny-gemma3-q4_k_m PROPERTIES LABELS golden SKIP_RETURN_CODE 77
                     ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")
if(TARGET paddock_backend_vulkan AND NOT PADDOCK_SANITIZE)
  # _pd_parallel_vulkan_test(NAME [VAR=VALUE...]): gemma3 on the Vulkan device, with more
  # environment entries.
  function(_pd_parallel_vulkan_test name)
    add_test(NAME ${name} COMMAND ${_pd_eval_parallel_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR}
                                  parallel tiny-gemma3-q4_k_m vulkan)
    set(env "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}" "PADDOCK_VULKAN_DEVICE=${_pd_vulkan_device}" ${ARGN})
    set_tests_properties(${name} PROPERTIES LABELS golden SKIP_RETURN_CODE 77 ENVIRONMENT "${env}")
  endfunction()
  _pd_parallel_vulkan_test(golden_eval_parallel_vulkan_tiny-gemma3-q4_k_m)
  # With a GPU's kernels and integer dot products: several sequences' decode steps are
  # products of a few columns, each a workgroup per row and column.
  _pd_parallel_vulkan_test(golden_eval_parallel_vulkan_gpu_int_dot_tiny-gemma3-q4_k_m "PADDOCK_VULKAN_TUNING=gpu"
                           "PADDOCK_VULKAN_INT_DOT=1")
endif()
add_test(NAME golden_eval_context_shift
         COMMAND ${_pd_eval_parallel_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} shift stories260K)
set_tests_properties(golden_eval_context_shift PROPERTIES LABELS golden SKIP_RETURN_CODE 77
                     ENVIRONMENT "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}")

# Tensor dumps against llama.cpp's: for each model in golden/layers/, `paddock eval
# --dump-tensors` on the ref and cpu backends lines up with the reference node by node.
# Label golden; a missing fixture skips loudly (exit 77).
set(_pd_layers_script ${CMAKE_CURRENT_LIST_DIR}/run_layers.sh)
file(GLOB _pd_layer_files "${PADDOCK_FIXTURES_DIR}/golden/layers/*.layers.jsonl")
foreach(_pd_file ${_pd_layer_files})
  get_filename_component(_pd_name ${_pd_file} NAME)
  string(REPLACE ".layers.jsonl" "" _pd_model ${_pd_name})
  foreach(_pd_backend ref cpu split)
    add_test(NAME golden_layers_${_pd_backend}_${_pd_model}
             COMMAND ${_pd_layers_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${_pd_model} ${_pd_backend})
    set_tests_properties(golden_layers_${_pd_backend}_${_pd_model} PROPERTIES LABELS golden SKIP_RETURN_CODE 77)
  endforeach()
endforeach()

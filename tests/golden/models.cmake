# Golden model tests: for every fixtures/golden/<model>.logits.jsonl (or .embed.jsonl), run
#   paddock eval --model fixtures/models/<model>.gguf --teacher-force <that file> --backend ref --json
# and check it with tools/compare_golden.py (--quant for all but the float models; embeddings
# with compare_embed.py). One test
# per model, label golden, one more with --backend cpu (label golden_cpu) and one with a pass
# split across cpu and ref (golden_split_*, label golden); see below for sanitizer builds. Without fixtures a single test skips loudly (exit 77).
set(_pd_golden_script ${CMAKE_CURRENT_LIST_DIR}/run_model_golden.sh)
# _pd_golden_test(NAME MODEL MODE LABEL [VAR=VALUE...]): one run of that script, with the
# fixtures' path and any more environment entries.
function(_pd_golden_test name model mode label)
  add_test(NAME ${name} COMMAND ${_pd_golden_script} $<TARGET_FILE:paddock> ${PADDOCK_FIXTURES_DIR} ${model} ${mode})
  set(env "PADDOCK_FIXTURES=${PADDOCK_FIXTURES_DIR}" ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS ${label} SKIP_RETURN_CODE 77 ENVIRONMENT "${env}")
endfunction()
file(GLOB _pd_golden_files "${PADDOCK_FIXTURES_DIR}/golden/*.logits.jsonl" "${PADDOCK_FIXTURES_DIR}/golden/*.embed.jsonl")
# gpt-oss's random weights (big enough to reach the SwiGLU clamp; router logits of +-50, 4 of 8
# experts) turn a difference in the last bit of any float into other experts a few steps
# later. Its golden file is what Debian's llama.cpp computes with its AVX2 (haswell) CPU
# variant, bit for bit (its AVX-512 variants match only 4 of the 7 prompts), so paddock rounds
# attention, activations, the KV cache and the Q8_0 and MXFP4 dots as that build does, on
# every backend and path.
# The Vulkan backend on each architecture and each weight type it has kernels for, fully
# offloaded and split, on lavapipe unless PADDOCK_VULKAN_DEVICE named a device at configure
# time (release builds only: lavapipe runs shaders on the CPU, slowly).
set(_pd_vulkan_models stories260K tiny-zoo-f32 tiny-zoo-f16 tiny-zoo-bf16 tiny-zoo-q4_0 tiny-zoo-q4_1
    tiny-zoo-q5_0 tiny-zoo-q5_1 tiny-zoo-q8_0 tiny-zoo-iq4_nl tiny-zoo-iq4_xs tiny-zoo-q2_k tiny-zoo-q3_k_m
    tiny-zoo-q4_k_m tiny-zoo-q5_k_m tiny-zoo-q6_k tiny-qwen2-q4_k_m tiny-qwen3-q8_0 tiny-gemma3-q4_k_m
    tiny-bert-f16 tiny-nomic-bert-f16)
# Split only: the last layer (and every op of it) on the GPU. tiny-llama3: its 128k-token
# output layer takes minutes on lavapipe; the rest of llama3 is tiny-zoo's and stories'
# architecture, its rope factors covered by the op tests too. The MoE models: their random
# routers (logits of +-50) turn any difference from the CPU into other experts once a second
# layer follows: with float products (the GPU's quantized activations differ from the CPU's
# by 1e-3), and, less often, with integer ones (PADDOCK_VULKAN_INT_DOT=1: qwen3moe matches
# 5/7 fully offloaded, gpt-oss 0/7), where a difference of 1e-8 in attention or a norm still
# rounds an activation to the next level now and then. Each MoE op is held to ref by the op
# tests.
set(_pd_vulkan_split_models tiny-llama3-q4_k_m tiny-qwen3moe-q4_k_m tiny-gptoss-mxfp4)
if(TARGET paddock_backend_vulkan AND NOT PADDOCK_SANITIZE)
  foreach(_pd_model ${_pd_vulkan_models} ${_pd_vulkan_split_models})
    set(_pd_mode vulkan)
    if(_pd_model IN_LIST _pd_vulkan_split_models)
      set(_pd_mode vulkan-split)
    endif()
    if(EXISTS ${PADDOCK_FIXTURES_DIR}/golden/${_pd_model}.logits.jsonl OR EXISTS ${PADDOCK_FIXTURES_DIR}/golden/${_pd_model}.embed.jsonl)
      _pd_golden_test(golden_vulkan_${_pd_model} ${_pd_model} ${_pd_mode} golden "PADDOCK_VULKAN_DEVICE=${_pd_vulkan_device}")
    endif()
  endforeach()
  # The kernels, fusions and splits a GPU gets (PADDOCK_VULKAN_TUNING=gpu), end to end on the
  # same device: llama (stories), the K-quant products, gemma3's rings and GeGLU.
  foreach(_pd_model stories260K tiny-zoo-q4_k_m tiny-gemma3-q4_k_m)
    if(EXISTS ${PADDOCK_FIXTURES_DIR}/golden/${_pd_model}.logits.jsonl)
      _pd_golden_test(golden_vulkan_gpu_tuned_${_pd_model} ${_pd_model} vulkan golden
                      "PADDOCK_VULKAN_DEVICE=${_pd_vulkan_device}" "PADDOCK_VULKAN_TUNING=gpu"
                      "PADDOCK_VULKAN_INT_DOT=0")
    endif()
  endforeach()
  # The same with products on integer dot products (quantized activations), decode's and
  # prompts': the K-quants' (Q2_K's file holds Q2_K and Q3_K), gemma3's Q5_0 / Q8_0 ones with
  # GeGLU, IQ4_XS's table levels.
  foreach(_pd_model tiny-zoo-q4_k_m tiny-zoo-q2_k tiny-gemma3-q4_k_m tiny-zoo-iq4_xs)
    if(EXISTS ${PADDOCK_FIXTURES_DIR}/golden/${_pd_model}.logits.jsonl)
      _pd_golden_test(golden_vulkan_gpu_int_dot_${_pd_model} ${_pd_model} vulkan golden
                      "PADDOCK_VULKAN_DEVICE=${_pd_vulkan_device}" "PADDOCK_VULKAN_TUNING=gpu"
                      "PADDOCK_VULKAN_INT_DOT=1")
    endif()
  endforeach()
endif()
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
  string(REGEX REPLACE "\\.(logits|embed)\\.jsonl$" "" _pd_model ${_pd_name})
  _pd_golden_test(golden_model_${_pd_model} ${_pd_model} ${_pd_golden_mode} golden)
  if(NOT PADDOCK_SANITIZE)
    _pd_golden_test(golden_split_${_pd_model} ${_pd_model} split golden)
    # The cpu backend under every ISA path, 1 and 2 threads.
    _pd_golden_test(golden_cpu_${_pd_model} ${_pd_model} cpu golden_cpu)
  endif()
endforeach()
# Ollama's published layouts give exactly their llama.cpp-layout twins' logits (gemma3's
# twin is held to the golden file above as well).
foreach(_pd_pair "tiny-gptoss-mxfp4:tiny-gptoss-ollama-mxfp4" "tiny-gemma3-q4_k_m:tiny-gemma3-ollama-q4_k_m")
  string(REPLACE ":" ";" _pd_pair ${_pd_pair})
  list(GET _pd_pair 0 _pd_a)
  list(GET _pd_pair 1 _pd_b)
  add_test(NAME golden_twin_${_pd_b} COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_twin.sh $<TARGET_FILE:paddock>
           ${PADDOCK_FIXTURES_DIR} ${_pd_a} ${_pd_b})
  set_tests_properties(golden_twin_${_pd_b} PROPERTIES LABELS golden SKIP_RETURN_CODE 77)
endforeach()

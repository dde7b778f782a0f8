# The Vulkan backend's kernels: each variant of src/backend/vulkan/shaders/*.comp compiled by
# glslc to SPIR-V, then all of them embedded in one generated source (shader_spirv()).
# paddock_vulkan_shaders(OUT_VAR) sets OUT_VAR to that source.
set(PADDOCK_SHADER_DIR ${PROJECT_SOURCE_DIR}/src/backend/vulkan/shaders)

function(paddock_vulkan_shaders out_var)
  set(float_types F32 F16 BF16)
  set(weight_types F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4 Q2_K Q3_K IQ4_XS Q4_K Q5_K Q6_K)
  # Products with integer dot products (src/backend/vulkan/shaders/mat_vec_idot.glsl, mm_idot.glsl).
  set(int_dot_types Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4 Q2_K Q3_K IQ4_XS Q4_K Q5_K Q6_K)
  set(kv_types F32 F16 Q8_0 Q4_0)
  set(copy_types F32 F16 BF16 Q8_0 Q4_0)
  set(variants "rms_norm|rms_norm.comp|" "norm|rms_norm.comp|CENTER" "rms_norm_mul|rms_norm.comp|MUL"
               "norm_mul|rms_norm.comp|CENTER,MUL" "add|binary.comp|OP_ADD"
               "mul|binary.comp|OP_MUL" "swiglu|glu.comp|" "geglu|glu.comp|GELU" "scale|unary.comp|SCALE"
               "gelu|unary.comp|GELU" "tanh|unary.comp|TANH" "rope|rope.comp|" "rope_f16|rope.comp|DST_F16"
               "swiglu_oai|glu.comp|OAI" "moe_gate|moe_gate.comp|" "moe_sum|moe_rows.comp|SUM"
               "add_id|moe_rows.comp|ADD_ID" "copy_words|copy_words.comp|"
               "quantize_q8_0|quantize_q8.comp|" "quantize_q8_1|quantize_q8.comp|Q8_1"
               "quantize_q8_k|quantize_q8.comp|QK_K" "rms_norm_mul_q8_0|rms_norm.comp|MUL,QUANT"
               "rms_norm_mul_q8_1|rms_norm.comp|MUL,QUANT,Q8_1" "rms_norm_mul_q8_k|rms_norm.comp|MUL,QUANT,QK_K")
  foreach(t ${weight_types})
    string(TOLOWER ${t} lt)
    list(APPEND variants "get_rows_${lt}|get_rows.comp|TYPE=${t}" "mul_mat_${lt}|mul_mat.comp|TYPE=${t}"
                         "mul_mm_${lt}|mul_mm.comp|TYPE=${t}" "mul_mat_id_${lt}|mul_mat_id.comp|TYPE=${t}"
                         "mul_mm_id_${lt}|mul_mm.comp|TYPE=${t},ID")
    if(NOT t IN_LIST float_types)  # block-quantized: decode's mat-vec kernel
      list(APPEND variants "mul_mat_vec_id_${lt}|mul_mat_vec.comp|TYPE_${t},ID")
      # Alone, and fused with the add or the GLU after it (src/backend/vulkan/fusion.h).
      list(APPEND variants "mul_mat_vec_${lt}|mul_mat_vec.comp|TYPE_${t}"
                           "mul_mat_vec_add_${lt}|mul_mat_vec.comp|TYPE_${t},ADD"
                           "mul_mat_vec_swiglu_${lt}|mul_mat_vec.comp|TYPE_${t},GLU"
                           "mul_mat_vec_geglu_${lt}|mul_mat_vec.comp|TYPE_${t},GLU,GELU")
    endif()
    if(t IN_LIST int_dot_types)
      list(APPEND variants "mul_mat_vec_idot_id_${lt}|mul_mat_vec.comp|TYPE_${t},INT_DOT,ID"
                           "mul_mat_vec_idot_${lt}|mul_mat_vec.comp|TYPE_${t},INT_DOT"
                           "mul_mat_vec_idot_add_${lt}|mul_mat_vec.comp|TYPE_${t},INT_DOT,ADD"
                           "mul_mat_vec_idot_swiglu_${lt}|mul_mat_vec.comp|TYPE_${t},INT_DOT,GLU"
                           "mul_mat_vec_idot_geglu_${lt}|mul_mat_vec.comp|TYPE_${t},INT_DOT,GLU,GELU"
                           "mul_mm_idot_${lt}|mul_mm.comp|TYPE=${t},TYPE_${t},INT_DOT"
                           "mul_mm_idot_id_${lt}|mul_mm.comp|TYPE=${t},TYPE_${t},INT_DOT,ID")
    endif()
  endforeach()
  foreach(t ${kv_types})
    string(TOLOWER ${t} lt)
    list(APPEND variants "attention_${lt}|attention.comp|TYPE=${t},TYPE_${t}")
  endforeach()
  foreach(s ${copy_types})
    list(FIND float_types ${s} is_float)
    if(is_float EQUAL -1)
      set(sf 0)
    else()
      set(sf 1)
    endif()
    foreach(d ${copy_types})
      string(TOLOWER "${s}_${d}" lt)
      list(APPEND variants "copy_${lt}|copy.comp|SRC_TYPE=${s},SRC_FLOAT=${sf},DST_${d}")
    endforeach()
  endforeach()

  file(GLOB includes ${PADDOCK_SHADER_DIR}/*.glsl)
  set(spvs)
  foreach(v ${variants})
    # name|source|DEFINE,DEFINE...
    string(REPLACE "|" ";" parts "${v}")
    list(GET parts 0 name)
    list(GET parts 1 source)
    list(GET parts 2 defs)
    string(REPLACE "," ";" defs "${defs}")
    set(defines)
    foreach(d ${defs})
      list(APPEND defines "-D${d}")
    endforeach()
    set(spv ${CMAKE_CURRENT_BINARY_DIR}/spv/${name}.spv)
    add_custom_command(
      OUTPUT ${spv}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/spv
      COMMAND ${PADDOCK_GLSLC} --target-env=vulkan1.2 -O -Werror ${defines} -o ${spv} ${PADDOCK_SHADER_DIR}/${source}
      DEPENDS ${PADDOCK_SHADER_DIR}/${source} ${includes}
      COMMENT "glslc ${name}"
      VERBATIM)
    list(APPEND spvs ${spv})
  endforeach()
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/vulkan_shaders.cpp)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -DOUT=${generated} "-DINPUTS=${spvs}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
    DEPENDS ${spvs} ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
    COMMENT "Embedding ${CMAKE_CURRENT_BINARY_DIR}/spv/*.spv"
    VERBATIM)
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()

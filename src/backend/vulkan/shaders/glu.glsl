// act(gate) * up, as glu.comp and mul_mat_vec.comp's GLU variant write it: act = silu, or
// with GELU ggml's GELU; with OAI gpt-oss's clamped form (op words 0 = alpha, 1 = limit).
float act(float g) {
#if defined(GELU)
  return gelu_ggml(g);
#else
  return g / (1.0 + exp(-g));
#endif
}

float glu(float g, float u) {
#if defined(OAI)
  const float alpha = pf(0), limit = pf(1), x = min(g, limit);
  return x / (1.0 + exp(alpha * -x)) * (clamp(u, -limit, limit) + 1.0);
#else
  return act(g) * u;
#endif
}

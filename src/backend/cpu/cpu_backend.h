// The optimised CPU backend: every op of backend.h, multi-threaded over a fork-join pool, with
// SIMD kernels chosen at run time by CPUID (scalar / AVX2 / AVX-512 VNNI). mul_mat quantizes
// the activations once per call to the weight type's vec_dot_type (as llama.cpp does) and
// splits weight rows across threads; prompt batches are tiled so each weight block serves
// several activation columns. PADDOCK_CPU=scalar|avx2|avx512 forces a path.
// Invariants: results match the ref backend up to float summation order and activation
// quantization; thread count does not change results (each output is computed by one thread
// in a fixed order). One op runs at a time per backend object.
//   PADDOCK_ASSIGN(std::unique_ptr<Backend> be, make_cpu_backend(2));
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backend/cpu/isa.h"
#include "base/status.h"

namespace paddock {

// The single entry point: n_threads < 1 means default_thread_count(); the ISA comes from
// PADDOCK_CPU (env_get("CPU")) or CPUID. Fails when PADDOCK_CPU names a path this CPU lacks.
Result<std::unique_ptr<Backend>> make_cpu_backend(int n_threads);
// The same with the path given explicitly (tests, benchmarks); fails when the CPU lacks it.
Result<std::unique_ptr<Backend>> make_cpu_backend(int n_threads, CpuIsa isa);

}  // namespace paddock

// The host-side cost of a correctness case that grows with the tensor: drawing the inputs
// (Op::make_inputs) and the float64 truth (reference_f64_threaded). Arg 0: threads
// (1 = serial); the case is a softmax of 2048 x 8192 (16.8M, f32).
#include <benchmark/benchmark.h>

#include "ops/op.h"

namespace {

void BM_MakeInputsSoftmax(benchmark::State& state) {
  const kgate::ops::Op* op = kgate::ops::find_op("softmax");
  const kgate::ops::Dims dims{{"R", 2048}, {"C", 8192}};
  kgate::ops::set_input_threads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto in = op->make_inputs(dims, kgate::DType::kF32, 42, kgate::ops::Distribution::kNormal);
    benchmark::DoNotOptimize(in.front().bytes.data());
  }
  kgate::ops::set_input_threads(0);
  state.SetItemsProcessed(state.iterations() * 2048 * 8192);
}
BENCHMARK(BM_MakeInputsSoftmax)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The float64 truth of a case (inputs drawn once), over Arg(0) threads.
void reference_bench(benchmark::State& state, const char* op_name, const kgate::ops::Dims& dims) {
  const kgate::ops::Op* op = kgate::ops::find_op(op_name);
  auto in = op->make_inputs(dims, kgate::DType::kF32, 42, kgate::ops::Distribution::kNormal);
  kgate::ops::set_input_threads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto truth = kgate::ops::reference_f64_threaded(*op, dims, in);
    benchmark::DoNotOptimize(truth.front().bytes.data());
  }
  kgate::ops::set_input_threads(0);
}

// The same softmax case, sliced by rows.
void BM_ReferenceSoftmax(benchmark::State& state) {
  reference_bench(state, "softmax", {{"R", 2048}, {"C", 8192}});
  state.SetItemsProcessed(state.iterations() * 2048 * 8192);
}
BENCHMARK(BM_ReferenceSoftmax)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A compute-bound truth: matmul 512 x 512 x 1024 (268M multiply-adds in double).
void BM_ReferenceMatmul(benchmark::State& state) {
  reference_bench(state, "matmul", {{"M", 512}, {"N", 512}, {"K", 1024}});
}
BENCHMARK(BM_ReferenceMatmul)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

// Drawing correctness inputs on the host (Op::make_inputs): the part of a correctness case
// that grows with the tensor. Arg 0: threads (1 = serial); the elements are a softmax
// input of 2048 x 8192 (16.8M, f32).
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

}  // namespace

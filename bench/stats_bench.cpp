// The statistics the runners and gates evaluate per sample or per candidate: the median
// RSE (adaptive stopping checks it as samples arrive), the bootstrap interval and the
// Mann-Whitney test (once per comparison).
#include <vector>

#include <benchmark/benchmark.h>

#include "stats/compare.h"
#include "stats/descriptive.h"
#include "core/rng.h"

namespace {

using namespace kgate::stats;

std::vector<double> samples(uint64_t seed, int n, double t_us = 100, double cv = 0.01) {
  kgate::core::Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = t_us * (1 + cv * rng.normal());
  return v;
}

void BM_Median(benchmark::State& state) {
  const auto x = samples(1, static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(median(x));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Median)->Arg(1000);

void BM_MedianRse(benchmark::State& state) {
  const auto x = samples(2, static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(median_rse(x));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MedianRse)->Arg(100)->Arg(1000)->Arg(4000);

void BM_Summarize(benchmark::State& state) {
  const auto x = samples(3, static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(summarize(x));
}
BENCHMARK(BM_Summarize)->Arg(1000);

void BM_BootstrapRatioOfMedians(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int resamples = static_cast<int>(state.range(1));
  const auto a = samples(4, n), b = samples(5, n, 103);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ratio_of_medians_ci(a, b, 0.95, resamples, 7));
  }
}
BENCHMARK(BM_BootstrapRatioOfMedians)->Args({1000, 2000})->Args({50, 2000});

void BM_BootstrapBca(benchmark::State& state) {
  const auto a = samples(4, 1000), b = samples(5, 1000, 103);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ratio_of_medians_ci(a, b, 0.95, 2000, 7, CiMethod::kBca));
  }
}
BENCHMARK(BM_BootstrapBca);

void BM_MannWhitney(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto a = samples(6, n), b = samples(7, n, 101);
  for (auto _ : state) benchmark::DoNotOptimize(mann_whitney_u(a, b));
}
BENCHMARK(BM_MannWhitney)->Arg(20)->Arg(1000);

void BM_Compare(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto a = samples(8, n), b = samples(9, n, 103);
  for (auto _ : state) benchmark::DoNotOptimize(compare(a, b));
}
BENCHMARK(BM_Compare)->Arg(50)->Arg(1000);

}  // namespace

// The side stream at the µs scale, where the timer replays CUDA graphs: the launch on the
// side stream is not captured (it runs once, while the graph is recorded), the replays
// run only the empty kernel. The code is side_stream.cu's.
// problem: problem_us.yaml
// expect: performance | pending outside the timed stream || less work than the problem requires || outputs of timed calls differ || faster on inputs it has seen before || timed calls: a CUDA-graph replay, outputs poisoned first
#include "side_stream.cu"

// Measurement study only: the softmax starter followed by a spin of EXTRA_NS ns (delay.cuh).
#define kgate_run kgate_inner_run
#include "../../kernelbench/native/starters/softmax.cu"
#include "delay.cuh"

// A background thread reached through a function pointer (past the lint's call
// pattern): the call returns at once and the thread writes the output afterwards, a
// deferred result that a check reading the output immediately would see unwritten.
// expect: correctness | never written || not bitwise identical || over tolerance || NaN
#include <pthread.h>

#include "honest.inc"

struct Job {
  kgate_tensor x, y;
};
static Job job;

static void* late(void*) {
  honest_softmax(job.x, job.y, 0, job.x.shape[0]);
  return nullptr;
}

extern "C" int kgate_run(const kgate_tensor* in, int32_t n_in, kgate_tensor* out, int32_t n_out, void* stream) {
  (void)stream;
  if (!shape_ok(in, n_in, out, n_out)) return 1;
  job = {in[0], out[0]};
  int (*start)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) = pthread_create;
  pthread_t t;
  if (start(&t, nullptr, late, nullptr) != 0) return 1;
  pthread_detach(t);
  return 0;
}

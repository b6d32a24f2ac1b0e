#pragma once
// One interface, two backends (host built in; cuda as the plugin libkgate_native_cuda.so).
// The runner loop (protocol, inputs, truth, checks) is backend-generic; a backend owns
// compilation, memory, launching and timing on its device.
#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate/kernel.h"
#include "ops/op.h"
#include "native/timing_audit.h"
#include "protocol/messages.h"

namespace kgate::native {

// A compiled candidate loaded into this process.
class Module {
 public:
  virtual ~Module() = default;
  virtual kgate_run_fn entry() const = 0;
};

// A device fault that poisons the process (CUDA sticky error). The runner answers the
// request, then exits so the orchestrator starts a fresh runner.
class DeviceFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One side of an interleaved timing: a module and the tensor sets it rotates through.
struct TimedCall {
  std::string slot;
  const Module* module = nullptr;
  std::vector<std::vector<kgate_tensor>> input_sets;   // [set][input]
  std::vector<std::vector<kgate_tensor>> output_sets;  // [set][output]
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "host" | "cuda"
  virtual protocol::DeviceInfo device_info() = 0;

  // Compiles (cached by content hash + flags + arch under cache_dir) and loads. A compile
  // error is compiled=false with the compiler's log and a null module, not an exception.
  virtual protocol::CompileResult compile(const std::string& source_path,
                                          const std::map<std::string, std::string>& defines,
                                          const std::string& cache_dir,
                                          std::shared_ptr<Module>* module) = 0;

  // Memory the kernel sees (device memory for cuda).
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, std::size_t bytes) = 0;
  // Zero-fills backend memory without staging it on the host (a GPU-sized output need not
  // be built and copied just to be cleared). The default uploads zeros a chunk at a time.
  virtual void zero(void* dst, std::size_t bytes);
  // Fills backend memory with a pattern of 1, 2, 4 or 8 bytes repeated (output poisoning);
  // a trailing partial pattern is left alone. The default uploads the pattern in chunks.
  virtual void fill(void* dst, const std::vector<unsigned char>& pattern, std::size_t bytes);
  // Copies within backend memory (a case's pristine inputs into the ones a candidate
  // sees). The default stages through the host a chunk at a time.
  virtual void copy(void* dst, const void* src, std::size_t bytes);
  // Whether two ranges of backend memory hold the same bytes (inputs left unchanged,
  // repeats bitwise equal) without bringing them to the host. The default stages both.
  virtual bool equal(const void* a, const void* b, std::size_t bytes);

  // Runs the module once and waits for it; returns kgate_run's return code.
  // Throws DeviceFault on a sticky device error.
  virtual int run(const Module& m, const std::vector<kgate_tensor>& inputs,
                  std::vector<kgate_tensor>& outputs) = 0;

  // Interleaved (ABAB...) timing of the calls, with the stopping rule in params.
  // samples_us is keyed by TimedCall::slot. `audit` (may be null) is told of every
  // sampling round after its calls, outside the timed windows, and its finish() is called
  // after sampling; sampling stops when it reports a failure.
  virtual protocol::TimeResult time(std::vector<TimedCall>& calls,
                                    const protocol::TimeParams& params, RoundAudit* audit) = 0;

  // The float64 truth of a case computed on the device, for ops where that is much
  // faster than the host reference (cuda: matmul through cuBLAS DGEMM). Empty when the
  // backend has none for this op; the runner then computes it on the host.
  virtual std::vector<ops::HostTensor> device_reference_f64(
      const ops::Op& /*op*/, const ops::Dims& /*dims*/,
      const std::vector<ops::HostTensor>& /*inputs*/) {
    return {};
  }
};

std::unique_ptr<Backend> make_host_backend();

// Throws std::invalid_argument unless the pattern is 1, 2, 4 or 8 bytes (Backend::fill).
void check_fill_pattern(const std::vector<unsigned char>& pattern);

// Entry point exported by libkgate_native_cuda.so (dlopen'ed from kgate-native's directory).
using CreateCudaBackendFn = Backend* (*)(int device_index, std::string* err);
inline constexpr const char* kCudaPluginName = "libkgate_native_cuda.so";
inline constexpr const char* kCudaPluginEntry = "kgate_create_cuda_backend";

}  // namespace kgate::native

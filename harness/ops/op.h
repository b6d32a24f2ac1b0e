#pragma once
// The built-in op library: metadata, float64 references, input generators and the
// FLOP/byte formulas used for roofline. Pure CPU code; linked by both kgate (for config
// validation and roofline) and kgate-native (to compute the truth).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/dtype.h"

namespace kgate::ops {

// Named dimensions of one problem instance, e.g. {"R": 4096, "C": 4096}.
using Dims = std::map<std::string, int64_t>;

// How correctness inputs are drawn (adversarial ones included).
enum class Distribution {
  kNormal,     // N(0,1)
  kUniform01,  // U[0,1): KernelBench's torch.rand
  kSigned,     // U[-1,1)
  kLarge,      // N(0,1) * large (60000 for f16, 1e30 for f32/f64, clamped to the dtype)
  kTiny,       // N(0,1) * 1e-6
  kMixed,      // per row alternate 1e3 / 1e-3 scales
};
std::string_view to_string(Distribution d);
std::optional<Distribution> parse_distribution(std::string_view s);

struct TensorDecl {
  std::string name;
  // Dim names; an empty list is a scalar. "D/2" means dim D divided by 2 (integer).
  std::vector<std::string> shape;
  // Integer inputs (e.g. cross_entropy targets) keep their own dtype; float tensors take
  // the case's dtype.
  std::optional<DType> fixed_dtype;
};

// Elements per random stream in Op::make_inputs.
inline constexpr int64_t kInputChunk = 1 << 16;
// Threads Op::make_inputs may use: 0 (the default) = the machine's hardware threads.
void set_input_threads(int n);
int input_threads();

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// A dense, row-major host tensor. Float data of any dtype is stored in its real width.
struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  int64_t numel() const;
  std::vector<int64_t> strides() const;  // row-major, in elements
  double get(int64_t i) const;           // element i as double
  void set(int64_t i, double v);         // rounds to the dtype (exactly, round-to-nearest-even)
  static HostTensor make(DType dtype, std::vector<int64_t> shape);  // zero-filled
  std::vector<double> to_doubles() const;  // every element as double (fast bulk get)
};

// Largest finite value of a float dtype (f16 65504, bf16 ~3.39e38, ...); for integer
// dtypes the largest value.
double dtype_max(DType d);

class Op {
 public:
  virtual ~Op() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  virtual std::vector<std::string> dims() const = 0;        // e.g. {"R", "C"}
  virtual std::vector<TensorDecl> inputs() const = 0;
  virtual std::vector<TensorDecl> outputs() const = 0;
  // "" when the dims are usable, else why not ("C must be >= 1").
  virtual std::string check_dims(const Dims& dims) const;
  // Inputs for one case; deterministic in (dims, dtype, seed, dist). Input i is drawn in
  // chunks of kInputChunk elements, chunk c from its own stream seeded by (seed, i, c), so
  // large tensors are drawn on several threads with the same values whatever their number.
  // Float inputs take `dtype`; a fixed-dtype integer input is uniform in
  // [0, integer_bound) whatever the distribution.
  virtual std::vector<HostTensor> make_inputs(const Dims& dims, DType dtype, uint64_t seed,
                                              Distribution dist) const;
  // Scale S of Distribution::kLarge (values N(0,1)*S clamped to +-min(4S, dtype max)) and
  // the high scale of kMixed (min(1e3, S)). The default is 60000 for f16 and 1e30 for the
  // wider types; ops lower it so that the truth stays finite in the output dtype and a
  // float32-accumulating kernel does not overflow on intermediates.
  virtual double large_scale(const Dims& dims, DType dtype) const;
  // Exclusive upper bound of a fixed-dtype integer input (values in [0, bound)).
  virtual int64_t integer_bound(const TensorDecl& t, const Dims& dims) const;
  // The truth: every input converted to double, computed in double.
  virtual std::vector<HostTensor> reference_f64(const Dims& dims,
                                                const std::vector<HostTensor>& inputs) const = 0;
  // A dim along which the reference is independent ("R" for row-wise ops, "M" for matmul):
  // every output and every input that has it has it first, and slices along it can be
  // computed separately. "" (the default) = no such dim.
  virtual std::string independent_dim() const { return ""; }
  virtual double flops(const Dims& dims) const = 0;
  // Fewest bytes a kernel must move: each input read once, each output written once.
  virtual double min_bytes(const Dims& dims, DType dtype) const;
  virtual Tolerance default_tolerance(DType dtype) const;
  // The tolerance of one case: the dtype's default, widened where rounding error grows
  // with the shape (a K-long dot product). Default: default_tolerance(dtype).
  virtual Tolerance tolerance_at(DType dtype, const Dims& dims) const;
  std::vector<int64_t> shape_of(const TensorDecl& t, const Dims& dims) const;
  // The op in PyTorch: one Python expression over its inputs' names (`torch` and `F`,
  // torch.nn.functional, in scope), returning its outputs as the op declares them. A
  // native problem's reference columns time a candidate against this form in eager and
  // under torch.compile (torch_form_module). "" = the op has none.
  virtual std::string torch_form() const { return ""; }
};

// A KernelBench-format module (Model, get_inputs, get_init_inputs) of the op's PyTorch form
// at `dims`, float inputs in `dtype` drawn from a normal distribution, fixed-dtype integer
// inputs uniform in [0, integer_bound). `title` heads it as a comment. Throws UsageError
// when the op has no form.
std::string torch_form_module(const Op& op, const Dims& dims, DType dtype, const std::string& title);

// op.reference_f64, computed in slices along op.independent_dim() on input_threads()
// threads when the case is large; the same values as one call.
std::vector<HostTensor> reference_f64_threaded(const Op& op, const Dims& dims,
                                               const std::vector<HostTensor>& inputs);

const Op* find_op(std::string_view name);
std::vector<std::string> op_names();

}  // namespace kgate::ops

#include "search/agent.h"

#include <cstdio>

#include "core/error.h"
#include "search/command_agent.h"
#include "search/http_agent.h"
#include "search/template_agent.h"
#include "search/tuner_agent.h"

namespace kgate::search {

bool tunes_declared_space(const std::string& kind) { return kind == "tuner" || kind == "template"; }

std::unique_ptr<Agent> make_agent(const config::AgentConfig& cfg, const std::string& starter_source,
                                  const std::string& starter_name, uint64_t seed,
                                  const std::vector<TemplateOffer>& templates) {
  if (cfg.kind == "template")
    return std::make_unique<TemplateAgent>(templates, starter_source, starter_name, cfg.seed != 0 ? cfg.seed : seed);
  if (cfg.kind == "tuner") {
    TuneSpace space = parse_tune_space(starter_source, starter_name);
    if (space.empty())
      throw UsageError(starter_name +
                       ":1:1: error: the tuner agent needs a `kgate:tune NAME=[...]` comment in "
                       "the starter (no tunable space declared)");
    return std::make_unique<TunerAgent>(std::move(space), cfg.seed != 0 ? cfg.seed : seed);
  }
  if (cfg.kind == "command") {
    if (cfg.command.empty()) throw UsageError("agent command: `command` is required");
    return std::make_unique<CommandAgent>(cfg.command, cfg.timeout_s);
  }
  if (cfg.kind == "http") {
    if (!http_agent_available())
      throw UsageError("agent http: this kgate was built without libcurl (install "
                       "libcurl4-openssl-dev and rebuild)");
    return std::make_unique<HttpAgent>(cfg.url, cfg.model, cfg.api_key_env, cfg.timeout_s);
  }
  throw UsageError("agent kind '" + cfg.kind + "' is unknown (expected tuner, template, command or http)");
}

namespace {

std::string template_lines(const AgentContext& ctx) {
  std::string s;
  for (const auto& t : ctx.templates)
    s += "- `" + t + "`: one of kgate's templates instantiated for this kernel (another algorithm "
         "behind the same call-site contract, ready to run), read-only: copy it over `" +
         ctx.candidate + "` to start from it, or take what helps.\n";
  return s;
}

}  // namespace

std::string task_markdown(const AgentContext& ctx) {
  char numbers[512];
  std::snprintf(numbers, sizeof numbers,
                "- Starting point: %.3f us. Current best: %.3f us (%.3fx the starting point).\n"
                "- A change is kept only when every gate passes and the speedup's lower "
                "confidence bound against the current best is at least %.2fx.\n",
                ctx.starter_us, ctx.best_us, ctx.best_speedup, ctx.keep_threshold);
  std::string s;
  s += "# kgate task: " + ctx.problem + " (experiment " + std::to_string(ctx.experiment) + ")\n\n";
  if (!ctx.problem_title.empty()) s += ctx.problem_title + "\n\n";
  s += "Make `" + ctx.candidate + "` faster on the `" + ctx.backend + "` backend (op `" + ctx.op +
       "`) without changing what it computes.\n\n";
  s += numbers;
  std::string partners;
  for (const auto& f : ctx.partners) partners += (partners.empty() ? "`" : ", `") + f + "`";
  s += "\n## Rules\n\n"
       "1. Edit only `" + ctx.candidate + "`" +
       (partners.empty() ? std::string()
                         : " and, in the same experiment, its pair partners " + partners +
                               " (kernels whose every output only this kernel reads: one may do "
                               "nothing while this kernel computes what it wrote, one pass instead of "
                               "a round trip through memory; the same launch signature stays)") +
       ". Every other file in this directory is hashed "
       "before and after your turn; any change, new file or deletion is undone and the "
       "experiment is recorded as a violation.\n"
       + (ctx.kernel.empty()
              ? std::string("2. Keep the entry point and its ABI (`kgate_run` over `kgate_tensor`, see "
                            "kgate/kernel.h): same inputs, same outputs, return 0 on success.\n")
              : "2. `" + ctx.candidate + "` is Inductor's Triton kernel `" + ctx.kernel +
                    "` of torch.compile's model; your version replaces it in the live compiled "
                    "model. Keep its launch signature and honour the call-site contract in the "
                    "file's header exactly (argument order, shapes, strides and offsets baked "
                    "into the indexing, dtypes, `in_out_ptr` arguments updated in place, no "
                    "allocations the wrapper does not know of). The kernel runs with the "
                    "`LAUNCH_*` values written in the file; cuBLAS/cuDNN calls of the model "
                    "are not yours to change. The model-level gates decide, on the whole "
                    "model with your kernel in place.\n") +
       "3. The gates run every shape of the problem's sweep (including odd sizes such as "
       "1023 and 1537), several secret seeds, adversarial magnitudes and every declared "
       "dtype; outputs are poisoned with NaN beforehand, inputs must be left unmodified, "
       "three runs must be bitwise identical, and the error against a float64 oracle must "
       "stay within the baseline's.\n"
       "4. No shortcuts: no calling a reference, no caching results across calls, no "
       "threads or processes that outlive the call, no timers. A time below the memory "
       "roofline is rejected as doing less work than required.\n"
       "5. `// kgate:tune NAME=[v1,v2,...]` comments declare tunables whose `#define` "
       "defaults you may change or extend.\n"
       "6. Print one line `kgate-description: <what you changed>` so the log says why.\n"
       "\n## Files\n\n"
       "- `" + ctx.problem_file + "`: the problem (shapes, dtypes, tolerances), read-only.\n"
       "- `history.tsv`: every experiment so far on this problem and its verdict.\n"
       "- `feedback.json`: the last verdict: the failing gate, the case, the numbers, the "
       "roofline percentage.\n" +
       template_lines(ctx) +
       "\n## Playbook (work down the tiers; measure, do not guess)\n\n"
       "1. **Memory access**: read and write each byte once; make the innermost loop walk "
       "contiguous memory (coalesced on GPU, unit-stride on CPU); keep reused rows in "
       "registers, shared memory or L1-sized tiles.\n"
       "2. **Fewer passes / fusion**: merge passes over the same data (e.g. max and sum "
       "of a softmax in one online pass, bias and activation in the store loop); avoid "
       "temporaries that round-trip through memory.\n"
       "3. **Parallelism and occupancy**: enough independent work per thread block or "
       "core; rows per program, block size and warps sized so every SM is busy without "
       "spilling registers.\n"
       "4. **Vectorisation**: wide loads and stores (float4, half2, SIMD-friendly loops "
       "with no aliasing or data-dependent branches), aligned where the ABI allows.\n"
       "5. **Instruction-level work**: cheaper math (multiply by a reciprocal, fast exp "
       "within tolerance, fused multiply-add), fewer dependent chains via multiple "
       "accumulators, hoisted invariants.\n"
       "6. **Launch configuration and tuning**: sweep the declared tunables last; a "
       "better configuration of a worse algorithm rarely beats a better algorithm.\n";
  return s;
}

}  // namespace kgate::search

// Fuzz batches (fuzz_batch.h).
#include "src/testing/fuzz_batch.h"

#include <chrono>

#include "src/testing/program_reducer.h"
#include "src/util/str_cat.h"

namespace accy::fuzz {

StatusOr<BatchSummary> RunBatch(const BatchOptions& options,
                                const std::function<void(int64_t, uint64_t)>& before_each,
                                const std::function<void(const Failure&)>& on_failure) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, Runner::Create(options.runner));
  BatchSummary summary;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = options.first; i < options.first + options.programs; ++i) {
    const uint64_t seed = ProgramSeed(options.seed, i);
    if (before_each) before_each(i, seed);
    FuzzProgram program = GenerateProgram(seed, options.generator);
    for (const FuzzOp& op : program.ops) ++summary.recipes[op.label];
    // Coverage counts the ops an output depends on (the engine drops the others as dead code).
    if (StatusOr<std::unique_ptr<Module>> module = BuildModule(Prune(program)); module.ok()) {
      summary.coverage.Add(**module);
    }
    Outcome outcome = runner->Run(program);
    ++summary.programs;
    ++summary.verdicts[static_cast<size_t>(outcome.verdict)];
    if (outcome.verdict == Verdict::kUnsupported) ++summary.unsupported[outcome.message];
    if (!IsFailure(outcome.verdict)) continue;
    Failure failure;
    failure.index = i;
    failure.program_seed = seed;
    failure.outcome = outcome;
    failure.reduced = program;
    failure.original = program;
    failure.reduced_outcome = outcome;
    if (options.reduce) {
      const Verdict verdict = outcome.verdict;
      failure.reduced = ReduceProgram(program, [&](const FuzzProgram& candidate) {
        return runner->Run(candidate).verdict == verdict;
      });
      failure.reduced_outcome = runner->Run(failure.reduced);
    }
    if (on_failure) on_failure(failure);
    summary.failures.push_back(std::move(failure));
  }
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string FormatSummary(const BatchSummary& summary) {
  std::string out = StrCat("programs: ", summary.programs, "\nverdicts:");
  for (int v = 0; v < kNumVerdicts; ++v) {
    out += StrCat(" ", VerdictName(static_cast<Verdict>(v)), "=", summary.verdicts[static_cast<size_t>(v)]);
  }
  out += "\nops generated (engine modules, including region bodies):\n";
  int missing = 0;
  for (OpKind kind : kAllOpKinds) {
    const int64_t n = summary.coverage.ops_by_kind[static_cast<size_t>(kind)];
    out += StrCat("  ", OpName(kind), " ", n, "\n");
    if (n == 0 && kind != OpKind::kReturn) ++missing;
  }
  out += "element types (op results):";
  for (size_t i = 0; i < std::size(kAllElementTypes); ++i) {
    out += StrCat(" ", ElementTypeName(kAllElementTypes[i]), "=",
                  summary.coverage.values_by_element_type[i]);
  }
  out += "\nrecipes:";
  for (const auto& [label, n] : summary.recipes) out += StrCat(" ", label, "=", n);
  out += "\nunsupported (kUnimplemented at compile):\n";
  for (const auto& [message, n] : summary.unsupported) out += StrCat("  ", n, "x ", message, "\n");
  out += StrCat("failures: ", summary.failures.size(), "\n");
  for (const Failure& f : summary.failures) {
    out += StrCat("  program ", f.index, " (seed ", f.program_seed, "): ",
                  VerdictName(f.outcome.verdict), ": ", f.outcome.message, "\n    reduced to ",
                  f.reduced.ops.size(), " op recipes: ", VerdictName(f.reduced_outcome.verdict),
                  ": ", f.reduced_outcome.message, "\n");
  }
  out += StrCat("ops never generated: ", missing, "\nseconds: ", summary.seconds, "\n");
  return out;
}

}  // namespace accy::fuzz

// The differential runner (differential_runner.h).
#include "src/testing/differential_runner.h"

#include <algorithm>
#include <cmath>

#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"

namespace accy::fuzz {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kMatch: return "match";
    case Verdict::kUnsupported: return "unsupported";
    case Verdict::kMismatch: return "mismatch";
    case Verdict::kCompileError: return "compile_error";
    case Verdict::kRunError: return "run_error";
    case Verdict::kReferenceError: return "reference_error";
    case Verdict::kInvalidProgram: return "invalid_program";
  }
  return "<invalid verdict>";
}

TensorComparison CompareOutput(const Tensor& actual, const Tensor& expected,
                               const FuzzValue& value) {
  if (value.exact || !IsFloat(expected.element_type()) || actual.type() != expected.type()) {
    return CompareExact(actual, expected);
  }
  TensorComparison c;
  double scale = 1;
  const int64_t n = expected.element_count();
  for (int64_t i = 0; i < n; ++i) {
    const double e = expected.GetAsDouble(i);
    if (std::isfinite(e)) scale = std::max(scale, std::fabs(e));
  }
  for (int64_t i = 0; i < n; ++i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    bool ok;
    double distance = 0;
    if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
    } else {
      distance = std::fabs(a - e);
      ok = distance <= value.tolerance * (scale + std::fabs(e));
    }
    c.max_distance = std::max(c.max_distance, distance);
    if (!ok && c.ok) {
      c.ok = false;
      c.first_bad_index = i;
      c.message = StrCat("element ", i, ": got ", a, ", expected ", e, " (bound ",
                         value.tolerance, " * (", scale, " + |expected|))");
    }
  }
  return c;
}

StatusOr<std::unique_ptr<Runner>> Runner::Create(const RunnerOptions& options) {
  if (options.threads.empty()) {
    return absl::InvalidArgumentError("fuzz runner: the thread list is empty");
  }
  for (int t : options.threads) {
    if (t < 1) {
      return absl::InvalidArgumentError(StrCat("fuzz runner: thread count ", t, " is below 1"));
    }
  }
  std::unique_ptr<Runner> runner(new Runner(options));
  ACCY_RETURN_IF_ERROR(runner->MakeEngines());
  return runner;
}

Status Runner::MakeEngines() {
  engines_.clear();
  for (int t : options_.threads) {
    EngineOptions engine_options;
    engine_options.num_threads = t;
    // The 2-thread engine must run its items on two threads even on a busy host, or the
    // comparison of 1 and 2 threads would compare one thread with itself.
    engine_options.reduce_threads_under_load = false;
    engine_options.max_while_iterations = options_.max_while_iterations;
    // A graph pass that leaves an invalid module fails Compile naming the pass.
    engine_options.verify_each_pass = true;
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(engine_options));
    engines_.push_back(std::move(engine));
  }
  return absl::OkStatus();
}

StatusOr<std::vector<Tensor>> Runner::Reference(const FuzzProgram& program) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, BuildModule(program, BuildForm::kReference));
  return Evaluate(*module, "main", program.inputs);
}

Outcome Runner::Run(const FuzzProgram& program) {
  if (programs_ > 0 && programs_ % options_.programs_per_engine == 0) {
    if (Status made = MakeEngines(); !made.ok()) {
      return {Verdict::kCompileError, StrCat("Engine::Create: ", made.message())};
    }
  }
  ++programs_;
  StatusOr<std::unique_ptr<Module>> module = BuildModule(program, BuildForm::kEngine);
  if (!module.ok()) return {Verdict::kInvalidProgram, std::string(module.status().message())};
  StatusOr<std::unique_ptr<Module>> reference_module = BuildModule(program, BuildForm::kReference);
  if (!reference_module.ok()) {
    return {Verdict::kInvalidProgram, std::string(reference_module.status().message())};
  }
  StatusOr<std::vector<Tensor>> expected = Evaluate(**reference_module, "main", program.inputs);
  if (!expected.ok()) return {Verdict::kReferenceError, expected.status().ToString()};
  std::vector<std::vector<Tensor>> runs;
  for (size_t e = 0; e < engines_.size(); ++e) {
    const int threads = options_.threads[e];
    StatusOr<std::unique_ptr<Executable>> exe = engines_[e]->Compile(**module, "main");
    if (!exe.ok()) {
      if (exe.status().code() == absl::StatusCode::kUnimplemented) {
        return {Verdict::kUnsupported, std::string(exe.status().message())};
      }
      return {Verdict::kCompileError, StrCat(threads, " threads: ", exe.status().ToString())};
    }
    StatusOr<std::vector<Tensor>> actual = (*exe)->Run(program.inputs);
    if (!actual.ok()) {
      return {Verdict::kRunError, StrCat(threads, " threads: ", actual.status().ToString())};
    }
    for (size_t o = 0; o < program.outputs.size(); ++o) {
      const FuzzValue& value = program.values[static_cast<size_t>(program.outputs[o])];
      TensorComparison c = CompareOutput((*actual)[o], (*expected)[o], value);
      if (!c.ok) {
        return {Verdict::kMismatch,
                StrCat("output ", o, " (", value.type.ToString(),
                       value.exact ? ", exact" : ", approximate", ") at ", threads,
                       " threads: ", c.message)};
      }
      if (!runs.empty()) {
        TensorComparison same = CompareExact((*actual)[o], runs.front()[o]);
        if (!same.ok) {
          return {Verdict::kMismatch,
                  StrCat("output ", o, " differs between ", options_.threads.front(), " and ",
                         threads, " threads: ", same.message)};
        }
      }
    }
    runs.push_back(*std::move(actual));
  }
  return RunDonated(**module, program, runs.back());
}

Outcome Runner::RunDonated(const Module& module, const FuzzProgram& program,
                           const std::vector<Tensor>& expected) {
  // The first output whose type is an input's: alias the two (a donated parameter) and run in
  // place on the last engine; every output must equal that engine's run with separate buffers.
  for (size_t o = 0; o < expected.size(); ++o) {
    for (size_t p = 0; p < program.inputs.size(); ++p) {
      if (program.inputs[p].type() != expected[o].type()) continue;
      CompileOptions options;
      options.input_output_aliases = {{static_cast<int64_t>(p), static_cast<int64_t>(o)}};
      StatusOr<std::unique_ptr<Executable>> exe = engines_.back()->Compile(module, options);
      if (!exe.ok()) {
        return {Verdict::kCompileError, StrCat("with parameter ", p, " donated to result ", o,
                                               ": ", exe.status().ToString())};
      }
      std::vector<Tensor> inputs, outputs;
      for (const Tensor& input : program.inputs) {
        StatusOr<Tensor> copy = Tensor::FromBytes(input.type(), input.bytes());
        if (!copy.ok()) return {Verdict::kRunError, copy.status().ToString()};
        inputs.push_back(*std::move(copy));
      }
      for (size_t r = 0; r < expected.size(); ++r) {
        StatusOr<Tensor> out = Tensor::Allocate(expected[r].type());
        if (!out.ok()) return {Verdict::kRunError, out.status().ToString()};
        outputs.push_back(r == o ? inputs[p] : *std::move(out));
      }
      if (Status run = (*exe)->Run(inputs, outputs); !run.ok()) {
        return {Verdict::kRunError, StrCat("with parameter ", p, " donated to result ", o, ": ",
                                           run.ToString())};
      }
      for (size_t r = 0; r < expected.size(); ++r) {
        TensorComparison same = CompareExact(outputs[r], expected[r]);
        if (!same.ok) {
          return {Verdict::kMismatch,
                  StrCat("output ", r, " of the in-place run (parameter ", p, " donated to result ",
                         o, ", ", (*exe)->Stats().input_output_aliases_in_place[0]
                                      ? "in place" : "copied aside",
                         ") differs from the run with separate buffers: ", same.message)};
        }
      }
      return {Verdict::kMatch, ""};
    }
  }
  return {Verdict::kMatch, ""};
}

}  // namespace accy::fuzz

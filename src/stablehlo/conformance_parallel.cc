// interpreter.run_parallel in the conformance runner (conformance.h, RunCheckedFunction): the
// SPMD processes of a test program run as threads of this process, one Executable::Run each
// with an in-process Communicator (accy/collectives.h).
#include <map>
#include <thread>

#include "accy/collectives.h"
#include "src/stablehlo/conformance.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

// Zero tensors of `types`.
StatusOr<std::vector<Tensor>> Zeros(std::span<const TensorType> types) {
  std::vector<Tensor> out;
  for (const TensorType& type : types) {
    ACCY_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<Tensor>> RunCheckedFunction(const Engine& engine, Module& module,
                                                 const std::string& function_name,
                                                 const ParallelRun* run,
                                                 std::chrono::milliseconds timeout,
                                                 const ParallelProcessRunner& runner) {
  const Function* function = module.FindFunction(function_name);
  if (function == nullptr) {
    return absl::InvalidArgumentError(StrCat("function ", function_name, " is not in the module"));
  }
  const int64_t own_parameters = run != nullptr ? run->results_begin : 0;
  if (own_parameters != 0 || (run == nullptr && !function->parameter_types().empty())) {
    return absl::InvalidArgumentError(StrCat(
        "function ", function_name, " takes ", function->parameter_types().size() -
                                                   static_cast<size_t>(run ? run->num_results : 0),
        " parameters; conformance programs take none"));
  }
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> checked, engine.Compile(module, function_name));
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> parameters, Zeros(function->parameter_types()));
  if (run == nullptr) return checked->Run(parameters);
  // First run: the processes' inputs (the run_parallel operands do not depend on its results).
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> first, checked->Run(parameters));
  std::vector<Tensor> inputs(first.begin() + run->inputs_begin,
                             first.begin() + run->inputs_begin + run->num_inputs);
  const int64_t replicas = static_cast<int64_t>(run->programs.size());
  const int64_t partitions = static_cast<int64_t>(run->programs[0].size());
  ACCY_RETURN_IF_ERROR(module.SetGrid(replicas, partitions));
  const int world = static_cast<int>(replicas * partitions);
  std::map<std::string, std::unique_ptr<Executable>> executables;
  std::vector<const Executable*> process_executables;
  std::vector<std::string> process_functions;
  std::vector<std::vector<Tensor>> process_inputs;
  size_t next_input = 0;
  for (const std::vector<std::string>& row : run->programs) {
    for (const std::string& name : row) {
      auto it = executables.find(name);
      if (it == executables.end()) {
        ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, engine.Compile(module, name));
        it = executables.emplace(name, std::move(exe)).first;
      }
      process_functions.push_back(name);
      const size_t count = it->second->parameter_types().size();
      if (next_input + count > inputs.size()) {
        return absl::InvalidArgumentError(StrCat(
            "interpreter.run_parallel has ", inputs.size(), " operands, too few for its programs"));
      }
      process_inputs.emplace_back(inputs.begin() + static_cast<ptrdiff_t>(next_input),
                                  inputs.begin() + static_cast<ptrdiff_t>(next_input + count));
      next_input += count;
      process_executables.push_back(it->second.get());
    }
  }
  if (next_input != inputs.size()) {
    return absl::InvalidArgumentError(StrCat("interpreter.run_parallel has ", inputs.size(),
                                             " operands, its programs take ", next_input));
  }
  std::vector<StatusOr<std::vector<Tensor>>> outcomes(
      static_cast<size_t>(world), absl::UnknownError("process did not run"));
  if (runner) {
    ACCY_ASSIGN_OR_RETURN(std::vector<std::vector<Tensor>> ran,
                          runner(module, process_functions, process_inputs));
    if (ran.size() != static_cast<size_t>(world)) {
      return absl::InternalError(StrCat("the process runner returned ", ran.size(),
                                        " processes' results, expected ", world));
    }
    for (int p = 0; p < world; ++p) outcomes[static_cast<size_t>(p)] = std::move(ran[static_cast<size_t>(p)]);
  } else {
    CommunicatorOptions options;
    options.timeout = timeout;
    ACCY_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Communicator>> communicators,
                          CreateInProcessCommunicators(world, options));
    std::vector<std::thread> threads;
    for (int p = 0; p < world; ++p) {
      threads.emplace_back([&, p] {
        RunOptions run_options;
        run_options.communicator = communicators[static_cast<size_t>(p)].get();
        outcomes[static_cast<size_t>(p)] = process_executables[static_cast<size_t>(p)]->Run(
            process_inputs[static_cast<size_t>(p)], run_options);
        if (!outcomes[static_cast<size_t>(p)].ok()) {  // peers must not wait for it
          run_options.communicator->Abort(
              std::string(outcomes[static_cast<size_t>(p)].status().message()));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  // Each process's results in process order are the op's results (the checked function's extra
  // parameters).
  std::vector<Tensor> results;
  for (int p = 0; p < world; ++p) {
    StatusOr<std::vector<Tensor>>& outcome = outcomes[static_cast<size_t>(p)];
    if (!outcome.ok()) {
      return Status(outcome.status().code(),
                    StrCat("process ", p, " (replica ", p / partitions, ", partition ",
                           p % partitions, "): ", outcome.status().message()));
    }
    for (Tensor& t : *outcome) results.push_back(std::move(t));
  }
  if (static_cast<int64_t>(results.size()) != run->num_results) {
    return absl::InvalidArgumentError(StrCat("the processes returned ", results.size(),
                                             " values, interpreter.run_parallel has ",
                                             run->num_results, " results"));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const TensorType& want = function->parameter_types()[static_cast<size_t>(run->results_begin) + i];
    if (results[i].type() != want) {
      return absl::InvalidArgumentError(StrCat("interpreter.run_parallel result ", i, " is ",
                                               want.ToString(), ", its process returned ",
                                               results[i].type().ToString()));
    }
    parameters[static_cast<size_t>(run->results_begin) + i] = std::move(results[i]);
  }
  return checked->Run(parameters);
}

}  // namespace accy

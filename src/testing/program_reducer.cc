// Failing-program reduction (program_reducer.h).
#include "src/testing/program_reducer.h"

#include <algorithm>
#include <vector>

#include "src/testing/differential_runner.h"

namespace accy::fuzz {

FuzzProgram Prune(const FuzzProgram& program) {
  std::vector<bool> live(program.values.size(), false);
  for (int id : program.outputs) live[static_cast<size_t>(id)] = true;
  std::vector<bool> keep(program.ops.size(), false);
  for (size_t i = program.ops.size(); i-- > 0;) {
    const FuzzOp& op = program.ops[i];
    for (int r : op.results) keep[i] = keep[i] || live[static_cast<size_t>(r)];
    if (!keep[i]) continue;
    for (int id : op.operands) live[static_cast<size_t>(id)] = true;
  }
  FuzzProgram out;
  out.seed = program.seed;
  out.values = program.values;
  out.outputs = program.outputs;
  for (size_t p = 0; p < program.parameters.size(); ++p) {
    if (!live[static_cast<size_t>(program.parameters[p])]) continue;
    out.parameters.push_back(program.parameters[p]);
    out.inputs.push_back(program.inputs[p]);
  }
  for (size_t i = 0; i < program.ops.size(); ++i) {
    if (keep[i]) out.ops.push_back(program.ops[i]);
  }
  return out;
}

namespace {

// `program` with op `index` replaced by parameters holding its results' reference values;
// false when the reference cannot evaluate them.
bool ReplaceByParameters(const FuzzProgram& program, size_t index, FuzzProgram* out) {
  FuzzProgram probe = program;
  probe.outputs = program.ops[index].results;
  StatusOr<std::vector<Tensor>> values = Runner::Reference(Prune(probe));
  if (!values.ok()) return false;
  *out = program;
  const FuzzOp& op = program.ops[index];
  for (size_t r = 0; r < op.results.size(); ++r) {
    out->parameters.push_back(op.results[r]);
    out->inputs.push_back((*values)[r]);
    out->values[static_cast<size_t>(op.results[r])].producer = -1;
  }
  out->ops.erase(out->ops.begin() + static_cast<std::ptrdiff_t>(index));
  *out = Prune(*out);
  return true;
}

}  // namespace

FuzzProgram ReduceProgram(const FuzzProgram& program, const FailurePredicate& still_fails,
                          int max_candidates) {
  FuzzProgram best = Prune(program);
  if (!still_fails(best)) best = program;
  int budget = max_candidates;
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (size_t o = 0; best.outputs.size() > 1 && o < best.outputs.size() && budget > 0;) {
      FuzzProgram candidate = best;
      candidate.outputs.erase(candidate.outputs.begin() + static_cast<std::ptrdiff_t>(o));
      candidate = Prune(candidate);
      --budget;
      if (still_fails(candidate)) {
        best = std::move(candidate);
        progress = true;
      } else {
        ++o;
      }
    }
    // Later ops first: replacing the producers of the failing op keeps it, and each kept
    // candidate removes everything only it needed.
    for (size_t i = best.ops.size(); i-- > 0 && budget > 0;) {
      if (i >= best.ops.size()) continue;
      FuzzProgram candidate;
      if (!ReplaceByParameters(best, i, &candidate) || candidate.ops.empty()) continue;
      --budget;
      if (still_fails(candidate)) {
        best = std::move(candidate);
        progress = true;
      }
    }
  }
  return best;
}

}  // namespace accy::fuzz

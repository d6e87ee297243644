// `accy plan`: parse a StableHLO file and print the schedule plan of one function (PlanFunction:
// work items in execution order with kinds, ops, bytes, element ops and dependencies) as text,
// JSON or Graphviz DOT.
#include <cstdio>
#include <string>

#include "accy/planner.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/transforms/graph_pipeline.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace accy::tools {
namespace {

constexpr char kUsage[] =
    "usage: accy plan FILE.mlir [--function NAME] [--format text|json|dot] [--dot]\n"
    "                 [--graph-passes]\n"
    "  Prints the plan of the function (default @main, or the module's only function): one work\n"
    "  item per line (text), a JSON object, or a Graphviz graph (--dot is --format dot; render\n"
    "  with `dot -Tsvg`).\n"
    "  --graph-passes  plan the module after the graph passes Engine::Compile runs first\n"
    "                  (src/transforms/graph_pipeline.h: layout chains, splat constants, CSE,\n"
    "                  ...), i.e. the items a compiled executable runs; without it the module\n"
    "                  is planned as written\n";

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += StrCat("\\", std::string(1, c));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

std::string PlanJson(const std::string& function, const PlanSummary& plan) {
  std::string out = StrCat("{\n  \"function\": ", JsonString(function), ",\n  \"items\": [");
  for (size_t i = 0; i < plan.items.size(); ++i) {
    const PlannedWorkItem& item = plan.items[i];
    std::string ops, deps;
    for (size_t k = 0; k < item.ops.size(); ++k)
      ops += StrCat(k ? ", " : "", JsonString(item.ops[k]));
    for (size_t k = 0; k < item.dependencies.size(); ++k)
      deps += StrCat(k ? ", " : "", item.dependencies[k]);
    out += StrCat(i ? "," : "", "\n    {\"position\": ", i, ", \"kind\": ", JsonString(item.kind),
                  ", \"ops\": [", ops, "], \"output_type\": ", JsonString(item.output_type),
                  ", \"read_bytes\": ", item.static_read_bytes,
                  ", \"write_bytes\": ", item.static_write_bytes,
                  ", \"element_ops\": ", item.estimated_element_ops, ", \"dependencies\": [", deps,
                  "]}");
  }
  out += StrCat(plan.items.empty() ? "" : "\n  ",
                "],\n  \"scheduled_op_count\": ", plan.scheduled_op_count,
                ",\n  \"total_static_elements\": ", plan.total_static_elements, "\n}\n");
  return out;
}

}  // namespace

int PlanCommand(std::span<const std::string> args) {
  const OptionSpec specs[] = {
      {"function", true, false}, {"format", true, false}, {"dot"}, {"graph-passes"}};
  StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok()) return ReportUsage("plan", std::string(parsed.status().message()), kUsage);
  if (parsed->help) {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  if (parsed->positional.size() != 1) {
    return ReportUsage("plan", "expected one FILE.mlir", kUsage);
  }
  const std::string format = parsed->Has("dot") ? "dot" : parsed->Get("format", "text");
  if (parsed->Has("dot") && parsed->Has("format") && parsed->Get("format") != "dot") {
    return ReportUsage("plan", "--dot contradicts --format " + parsed->Get("format"), kUsage);
  }
  if (format != "text" && format != "json" && format != "dot") {
    return ReportUsage("plan", "--format takes text, json or dot, got '" + format + "'", kUsage);
  }

  StatusOr<std::unique_ptr<Module>> module = LoadModule(parsed->positional[0]);
  if (!module.ok()) return ReportError("plan", module.status());
  StatusOr<std::string> function = ChooseFunction(**module, parsed->Get("function"));
  if (!function.ok()) return ReportError("plan", function.status());
  if (parsed->Has("graph-passes")) {
    passes::WorkLedger ledger;
    passes::AnalysisCache cache(&ledger);
    if (Status status = RunGraphPipeline(**module, GraphPipelineOptions(), cache); !status.ok()) {
      return ReportError("plan", status);
    }
  }
  StatusOr<PlanSummary> plan = PlanFunction(**module, *function);
  if (!plan.ok()) return ReportError("plan", plan.status());
  if (format == "dot") {
    std::printf("%s", plan->dot.c_str());
  } else if (format == "json") {
    std::printf("%s", PlanJson(*function, *plan).c_str());
  } else {
    std::printf("%s", plan->text.c_str());
  }
  return kExitOk;
}

}  // namespace accy::tools

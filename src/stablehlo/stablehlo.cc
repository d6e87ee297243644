// The public entries of StableHLO import (include/accy/stablehlo.h): split the text, parse each
// chunk (parser.h) and build its module (importer.h).
#include "accy/stablehlo.h"

#include <utility>

#include "src/stablehlo/importer.h"
#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

struct Chunk {
  std::string_view text;
  int first_line;
};

// MLIR's -split-input-file: a line starting with `// -----` ends a chunk (the line itself
// belongs to none).
std::vector<Chunk> SplitChunks(std::string_view text) {
  std::vector<Chunk> chunks;
  size_t chunk_begin = 0;
  int chunk_line = 1;
  size_t line_begin = 0;
  int line = 1;
  while (line_begin <= text.size()) {
    size_t line_end = text.find('\n', line_begin);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view content = text.substr(line_begin, line_end - line_begin);
    while (!content.empty() && (content.front() == ' ' || content.front() == '\t')) {
      content.remove_prefix(1);
    }
    if (content.starts_with("// -----")) {
      chunks.push_back({text.substr(chunk_begin, line_begin - chunk_begin), chunk_line});
      chunk_begin = line_end + 1;
      chunk_line = line + 1;
    }
    if (line_end == text.size()) break;
    line_begin = line_end + 1;
    ++line;
  }
  if (chunk_begin <= text.size()) {
    chunks.push_back({text.substr(chunk_begin), chunk_line});
  } else {
    chunks.push_back({std::string_view(), chunk_line});
  }
  return chunks;
}

using stablehlo_internal::ConstantBudget;

StatusOr<ConstantBudget> BudgetFor(const ParseOptions& options) {
  if (options.max_constant_bytes <= 0 || options.max_total_constant_bytes <= 0) {
    return absl::InvalidArgumentError(StrCat(
        "ParseOptions: max_constant_bytes is ", options.max_constant_bytes,
        " and max_total_constant_bytes is ", options.max_total_constant_bytes,
        ", expected both > 0"));
  }
  return ConstantBudget{options};
}

StatusOr<StableHloProgram> ParseChunk(const Chunk& chunk, bool keep_checks,
                                      ConstantBudget* budget) {
  ACCY_ASSIGN_OR_RETURN(
      stablehlo_internal::ModuleSyntax syntax,
      stablehlo_internal::ParseModuleSyntax(chunk.text, chunk.first_line, budget));
  return stablehlo_internal::ImportModule(syntax, keep_checks, budget);
}

// Parses every chunk of `text` (one chunk unless `split`) with one budget.
StatusOr<std::vector<StableHloProgram>> ParseChunks(std::string_view text, bool split,
                                                    bool keep_checks,
                                                    const ParseOptions& options) {
  ACCY_ASSIGN_OR_RETURN(ConstantBudget budget, BudgetFor(options));
  std::vector<StableHloProgram> programs;
  const std::vector<Chunk> chunks = split ? SplitChunks(text) : std::vector<Chunk>{{text, 1}};
  for (const Chunk& chunk : chunks) {
    ACCY_ASSIGN_OR_RETURN(StableHloProgram program, ParseChunk(chunk, keep_checks, &budget));
    programs.push_back(std::move(program));
  }
  return programs;
}

}  // namespace

std::string_view CheckKindName(CheckKind kind) {
  switch (kind) {
    case CheckKind::kExpectEq:
      return "expect_eq";
    case CheckKind::kExpectClose:
      return "expect_close";
    case CheckKind::kExpectAlmostEq:
      return "expect_almost_eq";
    case CheckKind::kExpectEqConst:
      return "expect_eq_const";
    case CheckKind::kExpectCloseConst:
      return "expect_close_const";
    case CheckKind::kExpectAlmostEqConst:
      return "expect_almost_eq_const";
  }
  return "<invalid check kind>";
}

StatusOr<std::unique_ptr<Module>> ParseStableHlo(std::string_view text,
                                                 const ParseOptions& options) {
  ACCY_ASSIGN_OR_RETURN(std::vector<StableHloProgram> programs,
                        ParseChunks(text, /*split=*/false, /*keep_checks=*/false, options));
  return std::move(programs.front().module);
}

StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloSplit(std::string_view text,
                                                                   const ParseOptions& options) {
  ACCY_ASSIGN_OR_RETURN(std::vector<StableHloProgram> programs,
                        ParseChunks(text, /*split=*/true, /*keep_checks=*/false, options));
  std::vector<std::unique_ptr<Module>> modules;
  for (StableHloProgram& program : programs) modules.push_back(std::move(program.module));
  return modules;
}

StatusOr<StableHloProgram> ParseStableHloProgram(std::string_view text,
                                                 const ParseOptions& options) {
  ACCY_ASSIGN_OR_RETURN(std::vector<StableHloProgram> programs,
                        ParseChunks(text, /*split=*/false, /*keep_checks=*/true, options));
  return std::move(programs.front());
}

StatusOr<std::vector<StableHloProgram>> ParseStableHloProgramSplit(std::string_view text,
                                                                   const ParseOptions& options) {
  return ParseChunks(text, /*split=*/true, /*keep_checks=*/true, options);
}

}  // namespace accy

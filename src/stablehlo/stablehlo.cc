// The public entries of StableHLO import (include/accy/stablehlo.h): split the text, parse each
// chunk (parser.h) and build its module (importer.h).
#include "accy/stablehlo.h"

#include <utility>

#include "src/stablehlo/importer.h"
#include "src/stablehlo/parser.h"

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

StatusOr<StableHloProgram> ParseChunk(const Chunk& chunk, bool keep_checks) {
  ACCY_ASSIGN_OR_RETURN(stablehlo_internal::ModuleSyntax syntax,
                        stablehlo_internal::ParseModuleSyntax(chunk.text, chunk.first_line));
  return stablehlo_internal::ImportModule(syntax, keep_checks);
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

StatusOr<std::unique_ptr<Module>> ParseStableHlo(std::string_view text) {
  ACCY_ASSIGN_OR_RETURN(StableHloProgram program, ParseChunk({text, 1}, /*keep_checks=*/false));
  return std::move(program.module);
}

StatusOr<std::vector<std::unique_ptr<Module>>> ParseStableHloSplit(std::string_view text) {
  std::vector<std::unique_ptr<Module>> modules;
  for (const Chunk& chunk : SplitChunks(text)) {
    ACCY_ASSIGN_OR_RETURN(StableHloProgram program, ParseChunk(chunk, /*keep_checks=*/false));
    modules.push_back(std::move(program.module));
  }
  return modules;
}

StatusOr<StableHloProgram> ParseStableHloProgram(std::string_view text) {
  return ParseChunk({text, 1}, /*keep_checks=*/true);
}

StatusOr<std::vector<StableHloProgram>> ParseStableHloProgramSplit(std::string_view text) {
  std::vector<StableHloProgram> programs;
  for (const Chunk& chunk : SplitChunks(text)) {
    ACCY_ASSIGN_OR_RETURN(StableHloProgram program, ParseChunk(chunk, /*keep_checks=*/true));
    programs.push_back(std::move(program));
  }
  return programs;
}

}  // namespace accy

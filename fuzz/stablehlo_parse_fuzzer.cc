// libFuzzer target: StableHLO text import and the verifier (include/accy/stablehlo.h).
// Any bytes go to ParseStableHloProgramSplit (the `// -----` split form covers the single-module
// one). Properties beyond "no sanitizer report": a rejection is a documented input error with a
// message; every module that parses passes Verify, and its printed text (PrintModule) parses again
// and prints the same (the round trip tests/stablehlo/fuzz_test.cc checks on its own mutations).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using accy::fuzz::FuzzCheck;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  accy::StatusOr<std::vector<accy::StableHloProgram>> programs =
      accy::ParseStableHloProgramSplit(text);
  if (!programs.ok()) {
    FuzzCheck(accy::fuzz::IsDocumentedInputError(programs.status()),
              "parse error with an undocumented code or no message",
              programs.status().ToString());
    return 0;
  }
  for (const accy::StableHloProgram& program : *programs) {
    const accy::Status verified = accy::Verify(*program.module);
    FuzzCheck(verified.ok(), "a parsed module fails Verify", verified.ToString());
    const std::string printed = accy::PrintModule(*program.module);
    accy::StatusOr<std::unique_ptr<accy::Module>> again = accy::ParseStableHlo(printed);
    FuzzCheck(again.ok(), "printed module does not parse again",
              again.ok() ? printed : again.status().ToString() + "\n" + printed);
    FuzzCheck(accy::PrintModule(**again) == printed, "printed module does not round-trip", printed);
    const std::unique_ptr<accy::Module> copy = program.module->Clone();
    FuzzCheck(accy::PrintModule(*copy) == printed, "Module::Clone prints differently", printed);
  }
  return 0;
}

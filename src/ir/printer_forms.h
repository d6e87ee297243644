// ModulePrinter, the printer behind PrintModule (printer.cc): the text being built, the SSA names
// of the function being printed, and one member per form of the op table's `print` column
// (include/accy/ops.def), defined by concept in printer.cc, printer_generic_forms.cc and
// printer_custom_call.cc. Also the type spellings those forms share.
//
// Reads the module it prints, which the caller owns; one instance per print, not thread-safe
// itself (PrintModule makes one per call). Internal to src/ir.
#ifndef ACCY_SRC_IR_PRINTER_FORMS_H_
#define ACCY_SRC_IR_PRINTER_FORMS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "src/ir/printer_names.h"

namespace accy::printer_internal {

// Type spellings (printer.cc): a comma-separated list, the operand and result types of an op,
// MLIR's functional type `(a, b) -> r`, stablehlo's SameOperandsAndResultType directive (the one
// type, else the functional type), chlo's `operand types -> result type`, and `true`/`false`.
std::string TypeList(const std::vector<TensorType>& types);
std::vector<TensorType> OperandTypes(const Operation& op);
std::vector<TensorType> ResultTypes(const Operation& op);
std::string FunctionalType(const Operation& op);
std::string SameOperandsAndResultType(const Operation& op);
std::string ChloType(const Operation& op);
std::string Bool(bool value);

class ModulePrinter {
 public:
  // The module as StableHLO text (PrintModule's contract, include/accy/ir.h).
  std::string Print(const Module& module);

 private:
  void Indent(int depth) { out_.append(static_cast<size_t>(2 * depth), ' '); }

  void PrintFunction(const Function& function);
  std::string ArgumentDeclaration(const Value* arg) const;
  std::string Operands(const Operation& op) const;
  void AppendRegion(const Region& region, int depth, bool block_header);
  void PrintOp(const Operation& op, int depth);
  void PrintOpBody(const Operation& op, int depth);

  // An op form: prints `op` (called `name`, its qualified name) nested `depth` levels deep.
  using PrintForm = void (ModulePrinter::*)(const Operation& op, const std::string& name,
                                            int depth);
  // The form of the op table's `print` column for `kind`; null outside the table.
  static PrintForm FormOf(OpKind kind);

  // The op forms of the `print` column, one per row of include/accy/ops.def.
  // StableHLO's and CHLO's custom assembly syntax (printer.cc).
  void PrintConstant(const Operation& op, const std::string& name, int depth);
  void PrintSameType(const Operation& op, const std::string& name, int depth);
  void PrintReducePrecision(const Operation& op, const std::string& name, int depth);
  void PrintChlo(const Operation& op, const std::string& name, int depth);
  void PrintFunctional(const Operation& op, const std::string& name, int depth);
  void PrintCompare(const Operation& op, const std::string& name, int depth);
  void PrintSelect(const Operation& op, const std::string& name, int depth);
  void PrintBroadcastInDim(const Operation& op, const std::string& name, int depth);
  void PrintTranspose(const Operation& op, const std::string& name, int depth);
  void PrintReverse(const Operation& op, const std::string& name, int depth);
  void PrintSlice(const Operation& op, const std::string& name, int depth);
  void PrintPad(const Operation& op, const std::string& name, int depth);
  void PrintConcatenate(const Operation& op, const std::string& name, int depth);
  void PrintIota(const Operation& op, const std::string& name, int depth);
  void PrintDynamicSlice(const Operation& op, const std::string& name, int depth);
  void PrintConvolution(const Operation& op, const std::string& name, int depth);
  void PrintTopK(const Operation& op, const std::string& name, int depth);
  void PrintRngBitGenerator(const Operation& op, const std::string& name, int depth);
  void PrintReturn(const Operation& op, const std::string& name, int depth);
  void PrintDotGeneral(const Operation& op, const std::string& name, int depth);
  void PrintReduce(const Operation& op, const std::string& name, int depth);
  void PrintWhile(const Operation& op, const std::string& name, int depth);
  // MLIR's generic form (printer_generic_forms.cc).
  void PrintSort(const Operation& op, const std::string& name, int depth);
  void PrintTriangularSolve(const Operation& op, const std::string& name, int depth);
  void PrintBatchNorm(const Operation& op, const std::string& name, int depth);
  void PrintCase(const Operation& op, const std::string& name, int depth);
  void PrintCollective(const Operation& op, const std::string& name, int depth);
  void PrintGather(const Operation& op, const std::string& name, int depth);
  void PrintScatter(const Operation& op, const std::string& name, int depth);
  void PrintWindow(const Operation& op, const std::string& name, int depth);
  // stablehlo.custom_call (printer_custom_call.cc).
  void PrintCumsum(const Operation& op, const std::string& name, int depth);
  void PrintKernelCall(const Operation& op, const std::string& name, int depth);
  void PrintLapack(const Operation& op, const std::string& name, int depth);

  static std::string SliceRanges(const Operation& op);

  std::string out_;
  std::optional<SsaNames> names_;  // of the function being printed
};

}  // namespace accy::printer_internal

#endif  // ACCY_SRC_IR_PRINTER_FORMS_H_

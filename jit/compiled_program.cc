// CompiledProgram (compiled_program.h): the compile pipeline of one function, as a flat list of
// stages: emit every item into a module of its own -> merge items whose module text is the same
// (one kernel) -> JitCompiler::AddModules (caches, or O3 on the compile threads) -> Lookup.
#include "jit/compiled_program.h"

#include <chrono>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "jit/emitters.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"
#include "src/fusion/fusion_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

Status UnsupportedKind(size_t index, const WorkItem& item) {
  return absl::UnimplementedError(
      StrCat("jit: work item ", index, " (root ", item.root != nullptr ? item.root->name() : "?",
             ") has kind ", WorkKindName(item.kind), ", which has no JIT emitter yet"));
}

// The bitcode of `module` (what its kernel computes): an exact serialization, so equal bitcode
// is equal kernels; a fraction of the cost of printing IR text (the printer tracks columns per
// character), which every item of every Compile pays.
std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  llvm::WriteBitcodeToFile(module, stream);
  stream.flush();
  return text;
}

// The first 16 hex digits of the BLAKE3 digest of `text`.
std::string TextDigest(std::string_view text) {
  const auto digest = llvm::BLAKE3::hash<8>(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return hex;
}

StatusOr<int64_t> BufferBytes(const Value& value) {
  auto bytes = value.type().ByteSize();
  if (!bytes.ok()) return bytes.status();
  return static_cast<int64_t>(*bytes);
}

// Emits the kernel of plan item `index` (its epilogue alone when `library_output` is set).
StatusOr<KernelSignature> EmitItemKernel(size_t index, const WorkItem& item,
                                         const Value* library_output, const FusionPlan& fusion,
                                         llvm::Module& module, std::string_view symbol,
                                         const KernelTarget& target) {
  if (library_output != nullptr) {
    return EmitDotEpilogueKernel(item, *library_output, fusion, module, symbol);
  }
  switch (item.kind) {
    case WorkKind::kElementwiseSingle:
    case WorkKind::kElementwiseFusion:
      return EmitElementwiseKernel(item, fusion, module, symbol);
    case WorkKind::kShape:
      return EmitShapeKernel(item, fusion, module, symbol);
    case WorkKind::kReduction:
      return EmitReductionKernel(item, fusion, module, symbol);
    case WorkKind::kScan:
      return EmitScanKernel(item, fusion, module, symbol);
    case WorkKind::kRowPipeline:
      return EmitRowPipelineKernel(item, fusion, module, symbol, target);
    case WorkKind::kFlashAttention:
      return EmitFlashAttentionKernel(item, fusion, module, symbol, target);
    case WorkKind::kDotGeneral:
      return EmitDotGeneralKernel(item, fusion, module, symbol);
    case WorkKind::kConvolution:
      return EmitConvolutionKernel(item, fusion, module, symbol);
    case WorkKind::kReduceWindow:
      return EmitReduceWindowItemKernel(item, fusion, module, symbol);
    case WorkKind::kKernelCall:  // library kernels (kernels/), skipped by Engine::Compile
    case WorkKind::kTriangularSolve:
    case WorkKind::kRngBitGenerator:
    case WorkKind::kLapack:
    case WorkKind::kCollective:  // collective kernels (src/runtime/collective_kernel.h)
    case WorkKind::kIterate:     // while loops run their own executables (iterate_compile.h)
      return UnsupportedKind(index, item);
  }
  return UnsupportedKind(index, item);  // a value outside WorkKind
}

}  // namespace

StatusOr<std::unique_ptr<CompiledProgram>> CompiledProgram::Compile(
    const Function& function, const SchedulePlan& plan, const FusionPlan& fusion,
    const JitCompilerOptions& options, std::span<const bool> skip,
    std::span<const Value* const> library_outputs) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CompiledProgram> program(new CompiledProgram());
  ACCY_ASSIGN_OR_RETURN(program->compiler_, JitCompiler::Create(options));

  KernelTarget target;
  target.vector_bits = program->compiler_->isa() == Isa::kAvx512 ? 512
                       : program->compiler_->isa() == Isa::kAvx2 ? 256
                                                                 : 128;
  // Each item is emitted alone into a module of its own under one fixed symbol, so the text of
  // two items that compute the same thing on the same shapes is the same whatever their buffers
  // are; such items share one kernel. A kernel's symbol is the digest of that text: the same
  // kernel gets the same object cache entry in every program.
  constexpr std::string_view kEmitSymbol = "accy_kernel";
  // Keyed by the whole text, not the digest: two kernels whose digests collide get distinct
  // symbols instead of one kernel.
  std::map<std::string, std::string> symbol_of_text;
  std::set<std::string> symbols;
  std::vector<ModuleToCompile> modules;
  for (size_t i = 0; i < plan.items().size(); ++i) {
    if (i < skip.size() && skip[i]) continue;
    const WorkItem& item = plan.items()[i];
    CompiledItem compiled;
    compiled.item_index = static_cast<int64_t>(i);
    compiled.kind = item.kind;
    const Value* library_output = i < library_outputs.size() ? library_outputs[i] : nullptr;
    compiled.library_output = library_output;
    ModuleToCompile emitted;
    emitted.context = std::make_unique<llvm::LLVMContext>();
    emitted.module = std::make_unique<llvm::Module>(kEmitSymbol, *emitted.context);
    StatusOr<KernelSignature> signature = EmitItemKernel(i, item, library_output, fusion,
                                                         *emitted.module, kEmitSymbol, target);
    if (!signature.ok()) {
      emitted.module.reset();
      return signature.status();
    }
    std::string text = ModuleText(*emitted.module);
    auto [kernel, inserted] = symbol_of_text.emplace(std::move(text), "");
    if (inserted) {
      std::string symbol = StrCat("accy_k", TextDigest(kernel->first));
      for (int n = 1; !symbols.insert(symbol).second; ++n) {
        symbol = StrCat("accy_k", TextDigest(kernel->first), "_", n);
      }
      kernel->second = std::move(symbol);
    }
    compiled.symbol = kernel->second;
    if (inserted) {
      llvm::Function* function = emitted.module->getFunction(kEmitSymbol);
      ACCY_CHECK(function != nullptr);
      function->setName(compiled.symbol);
      emitted.module->setModuleIdentifier(compiled.symbol);
      modules.push_back(std::move(emitted));
    } else {
      emitted.module.reset();
    }
    compiled.inputs = std::move(signature->inputs);
    compiled.outputs = std::move(signature->outputs);
    compiled.launch.block_count = signature->block_count;
    compiled.launch.finish_block_count = signature->finish_block_count;
    compiled.block_size = signature->block_size;
    compiled.scratch_bytes = signature->scratch_bytes;
    for (const auto* list : {&compiled.inputs, &compiled.outputs}) {
      for (const Value* value : *list) {
        ACCY_ASSIGN_OR_RETURN(int64_t bytes, BufferBytes(*value));
        compiled.buffer_bytes.push_back(bytes);
      }
    }
    if (compiled.scratch_bytes > 0) compiled.buffer_bytes.push_back(compiled.scratch_bytes);
    program->items_.push_back(std::move(compiled));
  }
  program->distinct_kernels_ = static_cast<int64_t>(modules.size());
  if (!modules.empty()) ACCY_RETURN_IF_ERROR(program->compiler_->AddModules(std::move(modules)));
  for (CompiledItem& item : program->items_) {
    ACCY_ASSIGN_OR_RETURN(void* address, program->compiler_->Lookup(item.symbol));
    item.launch.function = reinterpret_cast<KernelFunction>(address);
  }
  program->compile_milliseconds_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return program;
}

Status CompiledProgram::RunItem(size_t i, void* const* buffers, const int64_t* buffer_bytes,
                                size_t buffer_count, const RunOptions& options) const {
  if (i >= items_.size()) {
    return absl::InvalidArgumentError(StrCat("jit: item ", i, " out of range (", items_.size(),
                                             " items)"));
  }
  const CompiledItem& item = items_[i];
  if (buffer_count != item.buffer_bytes.size()) {
    return absl::InvalidArgumentError(StrCat("jit: item ", i, " (", item.symbol, ") takes ",
                                             item.buffer_bytes.size(), " buffers, got ",
                                             buffer_count));
  }
  for (size_t k = 0; k < buffer_count; ++k) {
    if (buffer_bytes[k] < item.buffer_bytes[k] || (buffers[k] == nullptr && item.buffer_bytes[k] > 0)) {
      return absl::InvalidArgumentError(StrCat("jit: item ", i, " (", item.symbol, ") buffer ", k,
                                               " has ", buffer_bytes[k], " bytes, needs ",
                                               item.buffer_bytes[k]));
    }
  }
  RunKernel(item.launch, buffers, buffer_bytes, options);
  return absl::OkStatus();
}

}  // namespace accy::jit

// JitCompiler (jit_compiler.h): LLJIT session, host target machine, O3 pipeline with libmvec
// and SLEEF mappings, object cache and dumps. The only file that includes the ORC and PassBuilder
// headers.
#include "jit/jit_compiler.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "accy_jit_pipeline_hash.h"  // generated: kJitPipelineSourceHash
#include "jit/sleef_functions.h"
#include "jit/sort_runtime.h"
#include "jit/target_lowering.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "src/util/special_math.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// Bumped whenever emitted code changes meaning for the same IR (ABI, runtime helpers), so
// stale cache entries are never loaded. Changes to this file (the optimization pipeline, target
// options) need no bump: the key also holds kJitPipelineSourceHash, this file's SHA-256.
constexpr std::string_view kCacheFormatVersion = "accy-jit-cache-3";

// A cache entry is the object file followed by the BLAKE3 digest of its key and its bytes, so a
// truncated, overwritten or partly written entry is detected before LLVM parses it, and so is
// a whole valid entry under another key's name (a copied or swapped file, whose kernels' symbols
// would not be the ones looked up).
constexpr size_t kCacheDigestBytes = 16;

std::string CacheEntry(std::string_view key, std::string_view object) {
  llvm::BLAKE3 hasher;
  hasher.update(key);
  hasher.update(std::string_view("\0", 1));
  hasher.update(object);
  const auto digest = hasher.final<kCacheDigestBytes>();
  std::string entry(object);
  entry.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return entry;
}

// The object of the cache entry of `key`, or false when the entry is damaged or another key's.
bool ObjectOfCacheEntry(std::string_view key, std::string_view entry, std::string* object) {
  if (entry.size() <= kCacheDigestBytes) return false;
  const std::string_view body = entry.substr(0, entry.size() - kCacheDigestBytes);
  if (CacheEntry(key, body) != entry) return false;
  *object = std::string(body);
  return true;
}

Status LlvmError(std::string_view what, llvm::Error error) {
  return absl::InternalError(StrCat("jit: ", what, ": ", llvm::toString(std::move(error))));
}

// glibc's libmvec (x86-64): the vector variants of the libm functions the emitters call.
// LLVM 19's built-in LIBMVEC_X86 table has only sin/cos/tan/pow/exp/log and no AVX-512
// variants; this one adds tanh, expm1, log1p, cbrt, atan2 and the 512-bit `e` ISA.
struct MathFunction {
  const char* name;  // the double version; the float one appends "f"
  int arity;
};
constexpr MathFunction kVectorMath[] = {
    {"exp", 1},  {"expm1", 1}, {"log", 1},   {"log1p", 1}, {"tanh", 1},  {"sin", 1},
    {"cos", 1},  {"cbrt", 1},  {"pow", 2},   {"atan2", 2}, {"tan", 1},   {"asin", 1},
    {"acos", 1}, {"atan", 1},  {"sinh", 1},  {"cosh", 1},  {"asinh", 1}, {"acosh", 1},
    {"atanh", 1}, {"erf", 1},  {"erfc", 1},
};

// The special functions without a libm version that kernels call by these names
// (ElementwiseLowering::CallSpecialMath): double -> double, pure.
struct SpecialMathSymbol {
  const char* name;
  double (*function)(double);
};
constexpr SpecialMathSymbol kSpecialMath[] = {
    {"accy_erf_inv", &special::ErfInv},
    {"accy_lgamma", &special::Lgamma},
    {"accy_digamma", &special::Digamma},
    {"accy_bessel_i1e", &special::BesselI1e},
};

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string HexDigest(const llvm::BLAKE3Result<16>& digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view bytes) {
  // Unique per process and call: two engines of one process may write the same entry at once.
  static std::atomic<uint64_t> temp_counter{0};
  const std::filesystem::path temp =
      path.string() + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(temp_counter++);
  // On failure the temporary file is removed, so a failed write leaves the folder as it was.
  std::error_code error;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::filesystem::remove(temp, error);
      return absl::InternalError(StrCat("jit: cannot write ", temp.string()));
    }
  }
  std::filesystem::rename(temp, path, error);
  if (error) {
    const std::string reason = error.message();
    std::filesystem::remove(temp, error);
    return absl::InternalError(
        StrCat("jit: cannot rename ", temp.string(), " to ", path.string(), ": ", reason));
  }
  return absl::OkStatus();
}

Status EnsureDirectory(const std::string& dir, std::string_view role) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir)) {
    return absl::InvalidArgumentError(
        StrCat("jit: ", role, " '", dir, "' cannot be created: ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace

// True when LLVM X86 feature `name` belongs to a level above `cap`: every AVX-512 / AMX / AVX10
// feature above avx2, and the VEX-encoded AVX family too above x86-64. All of them are listed
// (not just the base feature) because "+avx512vl" would turn avx512f back on.
static bool AboveIsa(std::string_view name, Isa cap) {
  if (cap >= Isa::kAvx512) return false;
  const bool avx512_family = name.starts_with("avx512") || name.starts_with("amx") ||
                             name.starts_with("avx10") || name == "evex512";
  if (avx512_family) return true;
  if (cap >= Isa::kAvx2) return false;
  return name == "avx" || name == "avx2" || name == "fma" || name == "f16c" || name == "fma4" ||
         name == "xop" || name.starts_with("avxvnni") || name == "avxifma" ||
         name == "avxneconvert" || name == "vaes" || name == "vpclmulqdq" || name == "sha512" ||
         name == "sm3" || name == "sm4";
}

struct JitCompiler::Impl {
  JitCompilerOptions options;
  std::string cpu;
  std::string features;
  bool avx512 = false;
  bool intel_avx512 = false;
  // AVX-512F and VL: target primitives use vscalefps at every width (target_lowering.h).
  bool scalef = false;
  // FMA on: SLEEF's FMA variants (purecfma, avx2128, avx2, avx512f), else its non-FMA ones.
  bool fma = false;
  Isa isa = Isa::kX86_64;
  std::unique_ptr<llvm::TargetMachine> target_machine;
  // Makes the compile threads' own target machines (AddModules), equal to target_machine.
  std::optional<llvm::orc::JITTargetMachineBuilder> machine_builder;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  // VecDesc holds StringRefs: the names live here, as long as the compiler.
  std::vector<std::string> vector_names;
  std::vector<llvm::VecDesc> vector_descs;
  JitCompileStats stats;

  void BuildVectorMathTable();
  void PrepareModule(llvm::Module& module) const;
  // The cache key (hex digest) of a prepared module's bitcode.
  std::string CacheKey(std::string_view bitcode) const;
  // Optimizes `module` and generates its object with `machine`; dumps under `dump_stem` unless
  // empty. Safe on several threads at once for distinct modules and machines.
  StatusOr<std::string> CompileToObject(llvm::Module& module, llvm::TargetMachine& machine,
                                        std::string_view dump_stem, std::string_view text) const;
  Status Optimize(llvm::Module& module, llvm::TargetMachine& machine) const;
  StatusOr<std::string> EmitFile(llvm::Module& module, llvm::TargetMachine& machine,
                                 llvm::CodeGenFileType type) const;
  Status Dump(std::string_view stem, std::string_view suffix, std::string_view text) const;
};

void JitCompiler::Impl::BuildVectorMathTable() {
  struct VectorIsa {
    char letter;
    int bits;
  };
  std::vector<VectorIsa> isas = {{'b', 128}};
  if (features.find("+avx2") != std::string::npos) isas.push_back({'d', 256});
  if (avx512) isas.push_back({'e', 512});
  // Names first (stable storage), then descriptors pointing at them.
  struct Pending {
    size_t scalar, vector, prefix;
    unsigned lanes;
  };
  std::vector<Pending> pending;
  vector_names.reserve(std::size(kVectorMath) * isas.size() * 2 * 3 +
                       SleefFunctions().size() * 3 * 2 * 3 + 64);
  for (const MathFunction& fn : kVectorMath) {
    for (int is_float = 0; is_float < 2; ++is_float) {
      const std::string scalar = std::string(fn.name) + (is_float ? "f" : "");
      for (const VectorIsa& isa : isas) {
        const unsigned lanes = static_cast<unsigned>(isa.bits / (is_float ? 32 : 64));
        const std::string params(static_cast<size_t>(fn.arity), 'v');
        vector_names.push_back(scalar);
        const size_t s = vector_names.size() - 1;
        vector_names.push_back(StrCat("_ZGV", std::string(1, isa.letter), "N", lanes, params, "_",
                                      scalar));
        const size_t v = vector_names.size() - 1;
        vector_names.push_back(StrCat("_ZGV_LLVM_N", lanes, params));
        pending.push_back({s, v, vector_names.size() - 1, lanes});
      }
    }
  }
  // SLEEF (sleef_functions.h): kernels call the FMA scalar name, which PrepareModule renames
  // to the non-FMA one without FMA; each maps onto the same family's vector variants.
  struct SleefIsa {
    const char* name;
    int bits;
  };
  std::vector<SleefIsa> sleef_isas;
  if (fma) {
    sleef_isas.push_back({"avx2128", 128});
    if (features.find("+avx2") != std::string::npos) sleef_isas.push_back({"avx2", 256});
    if (avx512) sleef_isas.push_back({"avx512f", 512});
  } else {
    sleef_isas.push_back({"sse2", 128});
  }
  for (const SleefFunction& fn : SleefFunctions()) {
    for (int is_float = 0; is_float < 2; ++is_float) {
      for (const SleefIsa& isa : sleef_isas) {
        const int lanes = isa.bits / (is_float ? 32 : 64);
        vector_names.push_back(SleefScalarSymbol(fn, is_float != 0, fma));
        vector_names.push_back(SleefVectorSymbol(fn, is_float != 0, lanes, isa.name));
        vector_names.push_back(StrCat("_ZGV_LLVM_N", lanes, "v"));
        const size_t last = vector_names.size() - 1;
        pending.push_back({last - 2, last - 1, last, static_cast<unsigned>(lanes)});
      }
    }
  }
  // accy's own primitives (target_lowering.h), lowered after optimization.
  for (const VectorVariant& variant : VectorVariants()) {
    vector_names.push_back(variant.scalar_name);
    vector_names.push_back(variant.vector_name);
    vector_names.push_back(variant.vfabi_prefix);
    const size_t last = vector_names.size() - 1;
    pending.push_back({last - 2, last - 1, last, variant.lanes});
  }
  for (const Pending& p : pending) {
    vector_descs.emplace_back(vector_names[p.scalar], vector_names[p.vector],
                              llvm::ElementCount::getFixed(p.lanes), /*Masked=*/false,
                              vector_names[p.prefix]);
  }
}

void JitCompiler::Impl::PrepareModule(llvm::Module& module) const {
  module.setTargetTriple(target_machine->getTargetTriple().str());
  module.setDataLayout(target_machine->createDataLayout());
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) {
      // SLEEF's scalar FMA variant -> its non-FMA twin on a target without FMA.
      const llvm::StringRef name = function.getName();
      if (!fma && name.starts_with("Sleef_") && name.ends_with("purecfma")) {
        function.setName(name.drop_back(3).str());
      }
      continue;
    }
    function.addFnAttr("target-cpu", cpu);
    function.addFnAttr("target-features", features);
    if (intel_avx512) function.addFnAttr("prefer-vector-width", "512");
  }
}

Status JitCompiler::Impl::Optimize(llvm::Module& module, llvm::TargetMachine& machine) const {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&machine, tuning);
  llvm::TargetLibraryInfoImpl library_info(machine.getTargetTriple());
  library_info.addVectorizableFunctions(vector_descs);
  // Registered before the defaults so the vectorizer sees the libmvec mappings.
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library_info); });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel* const kLevels[] = {
      &llvm::OptimizationLevel::O0, &llvm::OptimizationLevel::O1, &llvm::OptimizationLevel::O2,
      &llvm::OptimizationLevel::O3};
  llvm::ModulePassManager passes =
      options.optimization_level == 0
          ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
          : builder.buildPerModuleDefaultPipeline(*kLevels[options.optimization_level]);
  // accy's primitives (target_lowering.h): vscalefps after the vectorizer widened their calls,
  // the portable sequence before, as ordinary IR.
  if (!scalef) LowerTargetPrimitives(module, false);
  passes.run(module, mam);
  if (scalef) LowerTargetPrimitives(module, true);
  return absl::OkStatus();
}

StatusOr<std::string> JitCompiler::Impl::EmitFile(llvm::Module& module,
                                                  llvm::TargetMachine& machine,
                                                  llvm::CodeGenFileType type) const {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type)) {
    return absl::InternalError("jit: the host target machine cannot emit this file type");
  }
  passes.run(module);
  return std::string(buffer.data(), buffer.size());
}

Status JitCompiler::Impl::Dump(std::string_view stem, std::string_view suffix,
                               std::string_view text) const {
  const std::filesystem::path path =
      std::filesystem::path(options.dump_dir) / StrCat(stem, suffix);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) return absl::InternalError(StrCat("jit: cannot write dump ", path.string()));
  return absl::OkStatus();
}

JitCompiler::JitCompiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// Destroying the LLJIT ends its execution session (LLJIT::~LLJIT calls endSession).
JitCompiler::~JitCompiler() = default;

StatusOr<std::unique_ptr<JitCompiler>> JitCompiler::Create(const JitCompilerOptions& options) {
  InitializeLlvmOnce();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.optimization_level < 0 || options.optimization_level > 3) {
    return absl::InvalidArgumentError(StrCat("JitCompiler: optimization_level ",
                                             options.optimization_level, " is outside 0-3"));
  }
  // Engines pass the folder EngineOptions resolved; a JitCompiler made directly (benchmarks and
  // JIT tests, through CompiledProgram) falls back to the variable itself.
  if (impl->options.dump_dir.empty()) {
    if (const char* env = std::getenv("ACCY_DUMP_DIR"); env != nullptr) impl->options.dump_dir = env;
  }
  if (!impl->options.cache_dir.empty()) {
    ACCY_RETURN_IF_ERROR(EnsureDirectory(impl->options.cache_dir, "cache_dir"));
  }
  if (!impl->options.dump_dir.empty()) {
    ACCY_RETURN_IF_ERROR(EnsureDirectory(impl->options.dump_dir, "dump_dir"));
  }

  // The process cap (ACCY_MAX_ISA) holds for every compiler, whatever the options ask.
  ACCY_ASSIGN_OR_RETURN(Isa process_isa, ProcessIsa());
  impl->options.max_isa = std::min(impl->options.max_isa, process_isa);
  impl->cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> feature_list;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    const std::string name = std::string(entry.getKey());
    const bool on = entry.getValue() && !AboveIsa(name, impl->options.max_isa);
    feature_list.push_back(StrCat(on ? "+" : "-", name));
  }
  std::sort(feature_list.begin(), feature_list.end());
  llvm::SubtargetFeatures subtarget_features;
  for (const std::string& feature : feature_list) subtarget_features.AddFeature(feature);
  impl->features = subtarget_features.getString();
  impl->avx512 = std::find(feature_list.begin(), feature_list.end(), "+avx512f") !=
                 feature_list.end();
  auto has = [&](const char* feature) {
    return std::find(feature_list.begin(), feature_list.end(), feature) != feature_list.end();
  };
  impl->scalef = impl->avx512 && has("+avx512vl");
  impl->fma = has("+fma");
  impl->isa = impl->avx512                        ? Isa::kAvx512
              : has("+avx2") && has("+fma")       ? Isa::kAvx2
                                                  : Isa::kX86_64;
  // AMD parts (znver4/5) already choose their vector width; Intel AVX-512 parts default to
  // 256 bits unless asked (docs/isa.md).
  impl->intel_avx512 = impl->avx512 && impl->cpu.rfind("znver", 0) != 0;

  auto detected = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!detected) return LlvmError("detecting the host target", detected.takeError());
  llvm::orc::JITTargetMachineBuilder machine_builder = std::move(*detected);
  machine_builder.setCPU(impl->cpu);
  machine_builder.getFeatures() = subtarget_features;
  static constexpr llvm::CodeGenOptLevel kCodeGenLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less, llvm::CodeGenOptLevel::Default,
      llvm::CodeGenOptLevel::Aggressive};
  machine_builder.setCodeGenOptLevel(kCodeGenLevels[options.optimization_level]);
  machine_builder.setRelocationModel(llvm::Reloc::PIC_);
  machine_builder.setCodeModel(llvm::CodeModel::Small);
  auto target_machine = machine_builder.createTargetMachine();
  if (!target_machine) return LlvmError("creating the target machine", target_machine.takeError());
  impl->target_machine = std::move(*target_machine);
  impl->machine_builder = machine_builder;

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine_builder).create();
  if (!jit) return LlvmError("creating the LLJIT session", jit.takeError());
  impl->jit = std::move(*jit);
  const char prefix = impl->jit->getDataLayout().getGlobalPrefix();
  auto libmvec = llvm::orc::DynamicLibrarySearchGenerator::Load("libmvec.so.1", prefix);
  if (!libmvec) return LlvmError("loading glibc's libmvec.so.1", libmvec.takeError());
  impl->jit->getMainJITDylib().addGenerator(std::move(*libmvec));
  auto sleef = llvm::orc::DynamicLibrarySearchGenerator::Load(kSleefLibrary, prefix);
  if (!sleef) return LlvmError("loading SLEEF's libsleef.so.3 (libsleef-dev)", sleef.takeError());
  impl->jit->getMainJITDylib().addGenerator(std::move(*sleef));
  llvm::orc::SymbolMap special_math;
  for (const SpecialMathSymbol& symbol : kSpecialMath) {
    special_math[impl->jit->mangleAndIntern(symbol.name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(symbol.function),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error error =
          impl->jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(special_math)))) {
    return LlvmError("defining the special-function symbols", std::move(error));
  }
  // The runtime functions sort kernels call (sort_runtime.h), by name: objects refer to the
  // names, so cached objects stay valid in any process.
  llvm::orc::SymbolMap runtime;
  for (const SortRuntimeSymbol& symbol : kSortRuntimeSymbols) {
    runtime[impl->jit->mangleAndIntern(symbol.name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(symbol.address), llvm::JITSymbolFlags::Exported);
  }
  if (llvm::Error error =
          impl->jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    return LlvmError("defining the sort runtime symbols", std::move(error));
  }
  impl->BuildVectorMathTable();
  return std::unique_ptr<JitCompiler>(new JitCompiler(std::move(impl)));
}

Status JitCompiler::AddModule(std::unique_ptr<llvm::LLVMContext> context,
                              std::unique_ptr<llvm::Module> module) {
  std::vector<ModuleToCompile> modules(1);
  modules[0].context = std::move(context);
  modules[0].module = std::move(module);
  return AddModules(std::move(modules));
}

std::string JitCompiler::Impl::CacheKey(std::string_view bitcode) const {
  const std::string key_material =
      StrCat(bitcode, std::string(1, '\0'), cpu, std::string(1, '\0'), features,
             std::string(1, '\0'), LLVM_VERSION_STRING, std::string(1, '\0'), kCacheFormatVersion,
             std::string(1, '\0'), kJitPipelineSourceHash, std::string(1, '\0'),
             options.optimization_level);
  return HexDigest(llvm::BLAKE3::hash<16>(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t*>(key_material.data()), key_material.size())));
}

StatusOr<std::string> JitCompiler::Impl::CompileToObject(llvm::Module& module,
                                                         llvm::TargetMachine& machine,
                                                         std::string_view dump_stem,
                                                         std::string_view text) const {
  const bool dump = !dump_stem.empty();
  if (dump) ACCY_RETURN_IF_ERROR(Dump(dump_stem, ".before.ll", text));
  ACCY_RETURN_IF_ERROR(Optimize(module, machine));
  if (dump) {
    std::string optimized;
    llvm::raw_string_ostream stream(optimized);
    module.print(stream, nullptr);
    ACCY_RETURN_IF_ERROR(Dump(dump_stem, ".after.ll", optimized));
    // Code generation rewrites IR (CodeGenPrepare): the assembly comes from a copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    ACCY_ASSIGN_OR_RETURN(std::string assembly,
                          EmitFile(*copy, machine, llvm::CodeGenFileType::AssemblyFile));
    ACCY_RETURN_IF_ERROR(Dump(dump_stem, ".s", assembly));
  }
  return EmitFile(module, machine, llvm::CodeGenFileType::ObjectFile);
}

Status JitCompiler::AddModules(std::vector<ModuleToCompile> modules) {
  const auto start = std::chrono::steady_clock::now();
  Impl& impl = *impl_;
  // Each module dies before its context, whatever path leaves this function.
  struct ReleaseInOrder {
    std::vector<ModuleToCompile>& modules;
    ~ReleaseInOrder() {
      for (ModuleToCompile& entry : modules) {
        entry.module.reset();
        entry.context.reset();
      }
    }
  } release{modules};
  struct Pending {
    std::string name;
    std::string text;
    std::string key;
    std::filesystem::path cache_path;
    std::string dump_stem;  // empty: no dump
    std::string object;
    bool cached = false;   // found in the memory or disk cache
    bool compiled = false;
    Status status;
  };
  std::vector<Pending> pending(modules.size());

  // Prepare, verify and look every module up in the caches (memory first, then disk).
  std::vector<size_t> to_compile;
  for (size_t i = 0; i < modules.size(); ++i) {
    llvm::Module& module = *modules[i].module;
    Pending& p = pending[i];
    p.name = module.getName().str();
    impl.PrepareModule(module);
    {
      std::string problems;
      llvm::raw_string_ostream stream(problems);
      if (llvm::verifyModule(module, &stream)) {
        return absl::InternalError(StrCat("jit: module '", p.name, "' is invalid: ", problems));
      }
    }
    // The key hashes the module's bitcode: an exact serialization, and a fraction of the cost
    // of printing IR text (the printer tracks columns per character), which a cache hit would
    // pay on every kernel. The text is printed only for a dump.
    {
      std::string bitcode;
      llvm::raw_string_ostream stream(bitcode);
      llvm::WriteBitcodeToFile(module, stream);
      stream.flush();
      p.key = impl.CacheKey(bitcode);
    }
    if (!impl.options.dump_dir.empty()) {
      llvm::raw_string_ostream stream(p.text);
      module.print(stream, nullptr);
    }
    if (impl.options.object_cache != nullptr && impl.options.object_cache->Find(p.key, &p.object)) {
      p.cached = true;
    } else if (!impl.options.cache_dir.empty()) {
      p.cache_path = std::filesystem::path(impl.options.cache_dir) / StrCat("accy-", p.key, ".o");
      auto entry = llvm::MemoryBuffer::getFile(p.cache_path.string());
      if (entry) {
        // A damaged entry (or another key's) is ignored: the module is compiled below and the entry
        // rewritten.
        p.cached = ObjectOfCacheEntry(p.key, (*entry)->getBuffer(), &p.object);
        if (!p.cached) {
          std::error_code ignored;
          std::filesystem::remove(p.cache_path, ignored);
        }
      }
    }
    if (!p.cached) {
      // Process-wide numbering: several compilers may dump into one folder.
      static std::atomic<int64_t> dump_counter{0};
      if (!impl.options.dump_dir.empty()) p.dump_stem = StrCat(dump_counter++, "-", p.name);
      to_compile.push_back(i);
    }
  }

  // Optimization and code generation, one module per thread at a time; a module, its context
  // and a target machine are only ever touched by one thread.
  std::atomic<size_t> next{0};
  auto work = [&](llvm::TargetMachine& machine) {
    for (size_t k = next++; k < to_compile.size(); k = next++) {
      Pending& p = pending[to_compile[k]];
      StatusOr<std::string> object =
          impl.CompileToObject(*modules[to_compile[k]].module, machine, p.dump_stem, p.text);
      if (object.ok()) {
        p.object = *std::move(object);
        p.compiled = true;
      } else {
        p.status = object.status();
      }
    }
  };
  const size_t threads = std::min<size_t>(
      static_cast<size_t>(std::max(1, impl.options.compile_threads)), to_compile.size());
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (size_t t = 1; t < threads; ++t) {
    auto machine = impl.machine_builder->createTargetMachine();
    if (!machine) return LlvmError("creating a compile thread's target machine", machine.takeError());
    machines.push_back(std::move(*machine));
  }
  {
    std::vector<std::thread> workers;
    for (auto& machine : machines) workers.emplace_back(work, std::ref(*machine));
    work(*impl.target_machine);
    for (std::thread& worker : workers) worker.join();
  }

  // Objects into the caches and the dylib, in order.
  for (size_t i = 0; i < modules.size(); ++i) {
    Pending& p = pending[i];
    ACCY_RETURN_IF_ERROR(p.status);
    if (p.compiled) {
      if (!p.cache_path.empty()) {
        ACCY_RETURN_IF_ERROR(WriteFileAtomically(p.cache_path, CacheEntry(p.key, p.object)));
      }
      if (impl.options.object_cache != nullptr) impl.options.object_cache->Insert(p.key, p.object);
    }
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(p.object, p.name);
    if (llvm::Error error = impl.jit->addObjectFile(std::move(buffer))) {
      if (!p.cached) {
        return LlvmError(StrCat("adding the object of module '", p.name, "'"), std::move(error));
      }
      // A cached object LLVM refuses is dropped and the module compiled here instead.
      llvm::consumeError(std::move(error));
      if (!p.cache_path.empty()) {
        std::error_code ignored;
        std::filesystem::remove(p.cache_path, ignored);
      }
      ACCY_ASSIGN_OR_RETURN(p.object, impl.CompileToObject(*modules[i].module,
                                                           *impl.target_machine, "", p.text));
      p.cached = false;
      if (!p.cache_path.empty()) {
        ACCY_RETURN_IF_ERROR(WriteFileAtomically(p.cache_path, CacheEntry(p.key, p.object)));
      }
      if (llvm::Error again = impl.jit->addObjectFile(
              llvm::MemoryBuffer::getMemBufferCopy(p.object, p.name))) {
        return LlvmError(StrCat("adding the object of module '", p.name, "'"), std::move(again));
      }
    }
    modules[i].module.reset();
    modules[i].context.reset();
    if (p.cached) {
      ++impl.stats.modules_from_cache;
    } else {
      ++impl.stats.modules_compiled;
    }
  }
  impl.stats.total_milliseconds +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return absl::OkStatus();
}

StatusOr<void*> JitCompiler::Lookup(std::string_view name) {
  auto address = impl_->jit->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address) {
    return absl::NotFoundError(StrCat("jit: symbol '", name, "' not found: ",
                                      llvm::toString(address.takeError())));
  }
  return address->toPtr<void*>();
}

bool KernelObjectCache::Find(const std::string& key, std::string* object) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  *object = it->second;
  return true;
}

void KernelObjectCache::Insert(const std::string& key, std::string object) {
  std::lock_guard<std::mutex> lock(mutex_);
  objects_.emplace(key, std::move(object));
}

int64_t KernelObjectCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(objects_.size());
}

std::string LlvmVersion() { return LLVM_VERSION_STRING; }
std::string LlvmHostCpuName() { return llvm::sys::getHostCPUName().str(); }

const std::string& JitCompiler::cpu_name() const { return impl_->cpu; }
Isa JitCompiler::isa() const { return impl_->isa; }
const std::string& JitCompiler::cpu_features() const { return impl_->features; }
bool JitCompiler::has_avx512() const { return impl_->avx512; }
const JitCompileStats& JitCompiler::stats() const { return impl_->stats; }

}  // namespace accy::jit

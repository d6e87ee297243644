// JitCompiler: the one wrapper around LLVM ORC (LLJIT) in accy. It owns the execution session,
// the host target machine and the main dylib; modules are optimized at O3 for the host CPU,
// compiled to objects (or loaded from the on-disk object cache) and linked into the dylib.
// LLVM types appear only as forward declarations here; llvm::Error becomes accy::Status at this
// edge. Not thread-safe: one thread adds modules and looks symbols up (AddModules runs LLVM on
// worker threads of its own inside the call); the compiled code may then run on any number of
// threads while the JitCompiler is alive. KernelObjectCache is the exception: one cache may be
// shared by any number of compilers on any threads.
#ifndef ACCY_JIT_JIT_COMPILER_H_
#define ACCY_JIT_JIT_COMPILER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "accy/isa.h"
#include "accy/status.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace accy::jit {

// Object files in memory, keyed by the same digest as the on-disk cache (JitCompilerOptions::
// cache_dir): the module's bitcode, the CPU, its features, LLVM's version, the cache format, the JIT
// pipeline's source hash and the optimization level. An Engine owns one and hands it to every
// compiler it makes, so the kernels a while's cond and body share with the enclosing function,
// or a second program shares with the first, are compiled once per engine even without a
// cache_dir. Thread-safe; entries live as long as the cache (bounded by the distinct kernels
// the engine compiled; objects are a few KiB each).
class KernelObjectCache {
 public:
  // The object stored under `key`, or false.
  bool Find(const std::string& key, std::string* object) const;
  // Stores `object` under `key` (a second insert of a key keeps the first object: both are the
  // same compilation of the same text).
  void Insert(const std::string& key, std::string object);
  int64_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> objects_;
};

struct JitCompilerOptions {
  // Directory of the object cache; empty (the default) disables it, so a library user never gets
  // files written behind their back (the CLI passes ~/.cache/accy). Objects are keyed by a
  // BLAKE3 hash of the unoptimized module text, the host CPU name and features, the LLVM version
  // and the accy emitter version; a hit skips optimization and code generation. Each entry carries
  // a digest of its bytes: a damaged entry (or one LLVM refuses) is ignored, the module compiled
  // again (counted in modules_compiled) and the entry rewritten.
  std::string cache_dir;
  // Directory for dumps; empty means the environment variable ACCY_DUMP_DIR if set, else none.
  // (An Engine passes its EngineOptions::dump_dir, which Engine::Create resolved the same way.)
  // Each freshly compiled module writes <n>-<module>.before.ll, .after.ll (after O3) and .s.
  std::string dump_dir;
  // LLVM optimization level 0-3 (default 3): the new pass manager's O0..O3 pipeline and the
  // matching code generation level. Part of the object cache key.
  int optimization_level = 3;
  // The highest ISA level compiled code may use (include/accy/isa.h): the host's features above
  // it are turned off ("-avx512f", ... for avx2; "-avx", "-avx2", "-fma", ... for x86-64), so the
  // code runs and is tuned as on a host of that level. Part of the object cache key (through
  // the features). Never above ProcessIsa() (ACCY_MAX_ISA); default: the process ISA.
  Isa max_isa = Isa::kAvx512;
  // Threads AddModules may run LLVM's optimization and code generation on, one module per
  // thread at a time (each thread with its own target machine; modules have their own
  // contexts). 1 (the default) compiles on the calling thread only. Values below 1 count as 1.
  int compile_threads = 1;
  // An in-memory object cache shared with other compilers (null: none), consulted before
  // cache_dir and filled by every module compiled. Not owned; must outlive the compiler's
  // AddModules calls.
  KernelObjectCache* object_cache = nullptr;
};

// One module for AddModules with the context it lives in (the module dies first).
struct ModuleToCompile {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

// Counters of what AddModule did, for tests and compile-time reports.
struct JitCompileStats {
  int64_t modules_compiled = 0;    // optimized and compiled by LLVM
  int64_t modules_from_cache = 0;  // loaded from cache_dir or the in-memory object cache
  double total_milliseconds = 0;   // wall time spent in AddModule
};

// LLVM's version ("19.1.7") and the host CPU name LLVM tunes for ("znver3").
std::string LlvmVersion();
std::string LlvmHostCpuName();

class JitCompiler {
 public:
  // Initializes the native target (once per process), builds the host target machine (CPU name
  // and features from llvm::sys::getHostCPUName/getHostCPUFeatures, O3 code generation) and the
  // LLJIT session with the process's symbols and glibc's libmvec (vector math) visible.
  // Errors: kInternal with LLVM's message when the host target or libmvec.so.1 is unavailable;
  // kInvalidArgument when a cache or dump directory cannot be created.
  static StatusOr<std::unique_ptr<JitCompiler>> Create(const JitCompilerOptions& options = {});
  // Ends the execution session (LLJIT's destructor); the compiled code becomes invalid.
  ~JitCompiler();
  JitCompiler(const JitCompiler&) = delete;
  JitCompiler& operator=(const JitCompiler&) = delete;

  // Sets `module`'s triple, data layout and per-function target attributes ("target-cpu",
  // "target-features", and "prefer-vector-width"="512" on Intel AVX-512 hosts, where LLVM
  // otherwise stays at 256 bits), verifies it, then loads its object from the cache or runs the
  // O3 pipeline (loop and SLP vectorizers, libmvec mappings for libm calls) and code generation,
  // and adds the object to the main dylib. Takes ownership of both. Errors: kInternal naming the
  // module with LLVM's message (verifier failure, code generation, duplicate definition).
  Status AddModule(std::unique_ptr<llvm::LLVMContext> context,
                   std::unique_ptr<llvm::Module> module);
  // AddModule for each of `modules`: the ones found in no cache are optimized and compiled on up
  // to JitCompilerOptions::compile_threads threads at once; every object is then added to the
  // dylib in order. The symbols of all modules must be distinct. Errors: the first failing
  // module's (in order), as AddModule; the modules before it stay added.
  Status AddModules(std::vector<ModuleToCompile> modules);

  // The address of symbol `name` of an added module. kNotFound when it is not defined.
  StatusOr<void*> Lookup(std::string_view name);

  const std::string& cpu_name() const;
  // Comma-separated "+feature"/"-feature" list, sorted (part of the cache key).
  const std::string& cpu_features() const;
  // True when compiled code may use 512-bit vectors (AVX-512F on the host, not capped).
  bool has_avx512() const;
  // The ISA level compiled code targets: the host's features under JitCompilerOptions::max_isa.
  Isa isa() const;
  const JitCompileStats& stats() const;

 private:
  struct Impl;
  explicit JitCompiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accy::jit

#endif  // ACCY_JIT_JIT_COMPILER_H_

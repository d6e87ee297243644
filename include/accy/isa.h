// The target instruction set: what the host CPU offers, the process-wide cap (ACCY_MAX_ISA) and
// the level both code generators use. One notion for the JIT's LLVM target features and
// oneDNN's maximum ISA (docs/isa.md). Pure functions over CPUID and the environment, read once
// per process; thread-safe.
#ifndef ACCY_ISA_H_
#define ACCY_ISA_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "accy/status.h"

namespace accy {

// x86-64 vector ISA levels, ordered: a higher level includes the lower ones.
enum class Isa : uint8_t {
  kX86_64 = 0,  // "x86-64": SSE2-SSE4.2 only (no AVX2 code); 4 f32 lanes
  kAvx2 = 1,    // "avx2": AVX2 + FMA + F16C; 8 f32 lanes (AMD Zen 3, Intel Haswell and later)
  kAvx512 = 2,  // "avx512": AVX-512 F/BW/DQ/VL; 16 f32 lanes (AMD Zen 4/5, Intel Skylake-X ...)
};

// "x86-64", "avx2", "avx512".
std::string_view IsaName(Isa isa);
// Inverse of IsaName (case-insensitive; "avx512" also as "avx512_core", "x86-64" as "sse4.2").
// kInvalidArgument naming `text` and the accepted values.
StatusOr<Isa> ParseIsa(std::string_view text);
// The highest level the host CPU supports (CPUID, via the compiler's __builtin_cpu_supports).
Isa HostIsa();
// The process cap from the environment variable ACCY_MAX_ISA (an IsaName), read at the first
// call; kAvx512 (no cap) when it is unset or empty. kInvalidArgument naming the variable and its
// value when that is not an ISA name (every call then returns the same error).
StatusOr<Isa> ProcessIsaCap();
// The level accy generates code for in this process: min(HostIsa(), ProcessIsaCap()). Errors as
// ProcessIsaCap.
StatusOr<Isa> ProcessIsa();
// One line naming the host CPU: its brand string, family and model, and HostIsa(), e.g.
// "AMD EPYC (family 25 model 1), host ISA avx2".
std::string HostCpuDescription();

}  // namespace accy

#endif  // ACCY_ISA_H_

// oneDNN's side of the target ISA (include/accy/isa.h): the process cap applied before oneDNN's
// first kernel, and what oneDNN reports using. No oneDNN header here (the CLI and benchmarks
// include it); thread-safe.
#ifndef ACCY_KERNELS_ONEDNN_ISA_H_
#define ACCY_KERNELS_ONEDNN_ISA_H_

#include <string>

#include "accy/isa.h"

namespace accy::kernels {

// Caps oneDNN at ProcessIsa() (dnnl::set_max_cpu_isa, dev_guide_cpu_dispatcher_control.html)
// when that is below the host's; once per process, before any primitive is created (CpuEngine
// calls it, and so does Engine::Create). oneDNN's cap is process-wide and fixed after its first
// kernel, which is why ACCY_MAX_ISA is a process setting. Returns the process ISA; errors:
// ProcessIsa's kInvalidArgument, or kFailedPrecondition when oneDNN refused the cap (it had
// already dispatched a kernel, e.g. one created directly through the oneDNN API).
StatusOr<Isa> ApplyOneDnnIsaCap();
// oneDNN's effective ISA (dnnl::get_effective_cpu_isa): "avx2", "avx512_core_bf16", ...
std::string OneDnnEffectiveIsa();
// True when oneDNN's effective ISA includes avx512_core (its bf16 primitives and fast gelu
// post-ops need it).
bool OneDnnHasAvx512Core();
// True when the CPU's vendor (cpuid leaf 0) is "GenuineIntel": oneDNN 2.6's brgemm matmul
// reads 4 KiB-strided plain weights at half speed there (onednn_dot_general.cc
// PaddedWeightsDesc), which was not seen on the AMD AVX-512 hosts.
bool HostIsIntel();
// The associativity (ways) of the CPU's level-1 data cache, from cpuid (Intel's leaf 4, AMD's
// leaf 0x80000005 ECX[23:16]); 0 when the CPU reports none. Zen 2-4: 8; Zen 5: 12. Read once.
// The tiled gemm's padded weight copy depends on it (gemm_tiles_dot_general.cc).
int HostL1dWays();
// oneDNN's version, "2.6.3 (<git hash>)".
std::string OneDnnVersion();

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_ISA_H_

// oneDNN ISA cap and report (kernels/onednn_isa.h).
#include "kernels/onednn_isa.h"

#include <cpuid.h>

#include <cstring>
#include <string_view>

#include "oneapi/dnnl/dnnl.hpp"
#include "src/util/str_cat.h"

namespace accy::kernels {

StatusOr<Isa> ApplyOneDnnIsaCap() {
  static const StatusOr<Isa> applied = []() -> StatusOr<Isa> {
    ACCY_ASSIGN_OR_RETURN(Isa isa, ProcessIsa());
    if (isa >= HostIsa()) return isa;
    const dnnl::cpu_isa cap = isa == Isa::kAvx2 ? dnnl::cpu_isa::avx2 : dnnl::cpu_isa::sse41;
    if (dnnl_set_max_cpu_isa(static_cast<dnnl_cpu_isa_t>(cap)) != dnnl_success) {
      return absl::FailedPreconditionError(
          StrCat("oneDNN refused the ISA cap ", IsaName(isa),
                 " (it had already dispatched a kernel); its ISA stays ", OneDnnEffectiveIsa()));
    }
    return isa;
  }();
  return applied;
}

std::string OneDnnEffectiveIsa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return StrCat("isa#", static_cast<int>(dnnl::get_effective_cpu_isa()));
  }
}

bool OneDnnHasAvx512Core() {
  (void)ApplyOneDnnIsaCap();  // the effective ISA is fixed by then
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned core = static_cast<unsigned>(dnnl_cpu_isa_avx512_core);
  return (isa & core) == core;
}

bool HostIsIntel() {
  unsigned int max_leaf = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx) == 0) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::string_view(vendor) == "GenuineIntel";
}

int HostL1dWays() {
  static const int ways = [] {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (HostIsIntel()) {
      // Leaf 4 lists the caches: type in EAX[4:0] (1 = data), level in EAX[7:5], ways - 1 in
      // EBX[31:22] (Intel SDM vol. 2A, CPUID).
      for (unsigned int sub = 0; sub < 16; ++sub) {
        if (__get_cpuid_count(4, sub, &eax, &ebx, &ecx, &edx) == 0 || (eax & 31) == 0) break;
        if ((eax & 31) == 1 && ((eax >> 5) & 7) == 1) return static_cast<int>((ebx >> 22) + 1);
      }
      return 0;
    }
    // AMD's L1 cache leaf: the data cache's associativity in ECX[23:16] (AMD APM vol. 3, CPUID
    // Fn8000_0005; 0xFF is fully associative).
    if (__get_cpuid(0x80000005, &eax, &ebx, &ecx, &edx) == 0) return 0;
    return static_cast<int>((ecx >> 16) & 0xff);
  }();
  return ways;
}

std::string OneDnnVersion() {
  const dnnl_version_t* v = dnnl_version();
  return StrCat(v->major, ".", v->minor, ".", v->patch, " (", v->hash, ")");
}

}  // namespace accy::kernels

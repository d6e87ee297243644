// Target ISA detection and the ACCY_MAX_ISA cap (include/accy/isa.h).
#include "accy/isa.h"

#include <cpuid.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "src/util/str_cat.h"

namespace accy {

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kX86_64:
      return "x86-64";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

StatusOr<Isa> ParseIsa(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "avx512" || lower == "avx512_core") return Isa::kAvx512;
  if (lower == "avx2") return Isa::kAvx2;
  if (lower == "x86-64" || lower == "sse4.2" || lower == "sse41" || lower == "sse4_1") {
    return Isa::kX86_64;
  }
  return absl::InvalidArgumentError(
      StrCat("'", std::string(text), "' is not an ISA level (expected avx512, avx2 or x86-64)"));
}

Isa HostIsa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
      return Isa::kAvx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
    return Isa::kX86_64;
  }();
  return isa;
}

StatusOr<Isa> ProcessIsaCap() {
  static const StatusOr<Isa> cap = []() -> StatusOr<Isa> {
    const char* env = std::getenv("ACCY_MAX_ISA");
    if (env == nullptr || *env == '\0') return Isa::kAvx512;
    StatusOr<Isa> parsed = ParseIsa(env);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          StrCat("environment variable ACCY_MAX_ISA: ", parsed.status().message()));
    }
    return parsed;
  }();
  return cap;
}

StatusOr<Isa> ProcessIsa() {
  ACCY_ASSIGN_OR_RETURN(Isa cap, ProcessIsaCap());
  return std::min(HostIsa(), cap);
}

std::string HostCpuDescription() {
  unsigned int regs[12] = {};
  std::string brand;
  unsigned int max_leaf = __get_cpuid_max(0x80000000, nullptr);
  if (max_leaf >= 0x80000004) {
    for (unsigned int leaf = 0; leaf < 3; ++leaf) {
      __get_cpuid(0x80000002 + leaf, &regs[leaf * 4], &regs[leaf * 4 + 1], &regs[leaf * 4 + 2],
                  &regs[leaf * 4 + 3]);
    }
    brand.assign(reinterpret_cast<const char*>(regs), sizeof(regs));
    brand = brand.c_str();  // up to the first NUL
    while (!brand.empty() && brand.back() == ' ') brand.pop_back();
    while (!brand.empty() && brand.front() == ' ') brand.erase(brand.begin());
  }
  if (brand.empty()) brand = "unknown x86-64 CPU";
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    const unsigned int family = ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff);
    const unsigned int model = ((eax >> 4) & 0xf) | ((eax >> 12) & 0xf0);
    brand += StrCat(" (family ", family, " model ", model, ")");
  }
  return StrCat(brand, ", host ISA ", IsaName(HostIsa()));
}

}  // namespace accy

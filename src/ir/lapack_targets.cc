// The LAPACK target table (lapack_targets.h). Target names follow jaxlib's registrations
// (jaxlib/cpu/lapack.cc: "lapack_" + type prefix + routine + "_ffi").
#include "src/ir/lapack_targets.h"

#include <string>

#include "src/util/str_cat.h"

namespace accy {
namespace {

struct RoutineRow {
  LapackRoutine routine;
  std::string_view name;
};
constexpr RoutineRow kRoutines[] = {
    {LapackRoutine::kPotrf, "potrf"},
    {LapackRoutine::kTrsm, "trsm"},
    {LapackRoutine::kGetrf, "getrf"},
    {LapackRoutine::kGeqrf, "geqrf"},
    {LapackRoutine::kOrgqr, "orgqr"},
    {LapackRoutine::kSyevd, "syevd"},
    {LapackRoutine::kGesdd, "gesdd"},
};

constexpr std::string_view kPotrfFields[] = {"uplo"};
constexpr std::string_view kTrsmFields[] = {"diag", "side", "trans_x", "uplo"};
constexpr std::string_view kSyevdFields[] = {"mode", "uplo"};
constexpr std::string_view kGesddFields[] = {"mode"};

constexpr std::string_view kBound =
    "lapack_{s,d}potrf_ffi, lapack_{s,d}trsm_ffi, lapack_{s,d}getrf_ffi, "
    "lapack_{s,d}geqrf_ffi, lapack_{s,d}orgqr_ffi, lapack_{s,d}syevd_ffi, "
    "lapack_{s,d}gesdd_ffi";

Status NotSupported(std::string_view target, std::string_view why) {
  return absl::UnimplementedError(StrCat("custom_call target @", target, " is not supported: ",
                                         why, " (accy binds ", kBound, ")"));
}

}  // namespace

bool IsLapackTargetName(std::string_view target) { return target.starts_with("lapack_"); }

StatusOr<LapackTarget> ParseLapackTarget(std::string_view target) {
  std::string_view rest = target;
  if (!rest.starts_with("lapack_") || rest.size() < 8) {
    return NotSupported(target, "not a LAPACK target");
  }
  rest.remove_prefix(7);
  const char prefix = rest[0];
  rest.remove_prefix(1);
  const bool ffi = rest.ends_with("_ffi");
  if (ffi) rest.remove_suffix(4);
  if (prefix == 'c' || prefix == 'z') {
    return NotSupported(target, "complex element types (c, z) have no accy type");
  }
  LapackTarget parsed;
  if (prefix == 's') {
    parsed.element_type = ElementType::kF32;
  } else if (prefix == 'd') {
    parsed.element_type = ElementType::kF64;
  } else {
    return NotSupported(target, "the type prefix is not s or d");
  }
  for (const RoutineRow& row : kRoutines) {
    if (rest != row.name) continue;
    if (!ffi) {
      return NotSupported(target, "the pre-FFI form (custom_call api_version 2, JAX before "
                                  "2024); export with a current JAX for the _ffi target");
    }
    parsed.routine = row.routine;
    return parsed;
  }
  return NotSupported(target, StrCat("LAPACK routine '", rest, "' is not bound"));
}

std::string_view LapackRoutineName(LapackRoutine routine) {
  for (const RoutineRow& row : kRoutines) {
    if (row.routine == routine) return row.name;
  }
  return "?";
}

std::span<const std::string_view> LapackConfigFields(LapackRoutine routine) {
  switch (routine) {
    case LapackRoutine::kPotrf:
      return kPotrfFields;
    case LapackRoutine::kTrsm:
      return kTrsmFields;
    case LapackRoutine::kGetrf:
    case LapackRoutine::kGeqrf:
    case LapackRoutine::kOrgqr:
      return {};
    case LapackRoutine::kSyevd:
      return kSyevdFields;
    case LapackRoutine::kGesdd:
      return kGesddFields;
  }
  return {};
}

bool IsLapackConfigValue(LapackRoutine routine, std::string_view field, int64_t code) {
  if (field == "uplo") return code == 'L' || code == 'U';
  if (field == "side") return code == 'L' || code == 'R';
  if (field == "trans_x") return code == 'N' || code == 'T' || code == 'C';
  if (field == "diag") return code == 'N' || code == 'U';
  if (field == "mode" && routine == LapackRoutine::kGesdd) {
    return code == 'A' || code == 'S' || code == 'N';
  }
  if (field == "mode") return code == 'V' || code == 'N';
  return false;
}

std::string_view LapackConfigValues(LapackRoutine routine, std::string_view field) {
  if (field == "uplo") return "'L' = 76 or 'U' = 85";
  if (field == "side") return "'L' = 76 or 'R' = 82";
  if (field == "trans_x") return "'N' = 78, 'T' = 84 or 'C' = 67";
  if (field == "diag") return "'N' = 78 or 'U' = 85";
  if (field == "mode" && routine == LapackRoutine::kGesdd) {
    return "'A' = 65, 'S' = 83 or 'N' = 78";
  }
  if (field == "mode") return "'V' = 86 or 'N' = 78";
  return "none";
}

bool IsLapackMatrix(LapackRoutine routine, bool is_result, size_t index) {
  switch (routine) {
    case LapackRoutine::kPotrf:
    case LapackRoutine::kGetrf:
    case LapackRoutine::kGeqrf:
    case LapackRoutine::kOrgqr:
    case LapackRoutine::kSyevd:
      return index == 0;
    case LapackRoutine::kGesdd:  // a | a, s, u, vt, info
      return is_result ? index == 0 || index == 2 || index == 3 : index == 0;
    case LapackRoutine::kTrsm:
      return is_result ? index == 0 : index < 2;
  }
  return false;
}

std::vector<int64_t> LapackLayout(int64_t rank, bool matrix) {
  std::vector<int64_t> layout;
  if (matrix && rank >= 2) {
    layout = {rank - 2, rank - 1};
    for (int64_t d = rank - 3; d >= 0; --d) layout.push_back(d);
    return layout;
  }
  for (int64_t d = rank - 1; d >= 0; --d) layout.push_back(d);
  return layout;
}

}  // namespace accy

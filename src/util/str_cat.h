// accy::StrCat: absl::StrCat that also takes std::string_view.
//
// Debian 12's abseil is built with its own absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0),
// so absl::StrCat rejects std::string_view arguments; this wrapper converts them.
#ifndef ACCY_SRC_UTIL_STR_CAT_H_
#define ACCY_SRC_UTIL_STR_CAT_H_

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace accy {
namespace str_cat_internal {

template <typename T>
decltype(auto) Adapt(const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return absl::string_view(value.data(), value.size());
  } else {
    return (value);
  }
}

}  // namespace str_cat_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(str_cat_internal::Adapt(args)...);
}

}  // namespace accy

#endif  // ACCY_SRC_UTIL_STR_CAT_H_

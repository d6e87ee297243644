// libFuzzer target: the .npy reader of `accy run` (tools/npy.h). Any bytes go to ParseNpy.
// Properties beyond "no sanitizer report": a rejection is kInvalidArgument with a message; an
// accepted array serializes (SerializeNpy) to bytes that parse to the same type and data bytes; and
// ConvertNpyInput to its own type and (for f32/u16 arrays) to bf16 of the same shape succeeds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "accy/tensor.h"
#include "fuzz/fuzz_check.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using accy::fuzz::FuzzCheck;
  accy::StatusOr<accy::Tensor> array = accy::tools::ParseNpy(std::span<const uint8_t>(data, size));
  if (!array.ok()) {
    FuzzCheck(array.status().code() == absl::StatusCode::kInvalidArgument &&
                  !array.status().message().empty(),
              "ParseNpy error is not kInvalidArgument with a message", array.status().ToString());
    return 0;
  }
  const std::string bytes = accy::tools::SerializeNpy(*array);
  accy::StatusOr<accy::Tensor> again = accy::tools::ParseNpy(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  FuzzCheck(again.ok(), "SerializeNpy output does not parse",
            again.ok() ? "" : again.status().ToString());
  FuzzCheck(again->type() == array->type(), "round trip changes the type", array->type().ToString());
  const std::span<const uint8_t> before = array->bytes();
  const std::span<const uint8_t> after = again->bytes();
  FuzzCheck(std::equal(before.begin(), before.end(), after.begin(), after.end()),
            "round trip changes the data bytes");
  accy::StatusOr<accy::Tensor> same = accy::tools::ConvertNpyInput(*array, array->type());
  FuzzCheck(same.ok(), "ConvertNpyInput to the array's own type fails",
            same.ok() ? "" : same.status().ToString());
  const accy::ElementType element = array->type().element_type();
  if (element == accy::ElementType::kF32 || element == accy::ElementType::kU16) {
    accy::StatusOr<accy::TensorType> bf16 =
        accy::TensorType::Create(accy::ElementType::kBF16, array->type().dims());
    FuzzCheck(bf16.ok(), "bf16 type of an accepted shape is rejected");
    accy::StatusOr<accy::Tensor> converted = accy::tools::ConvertNpyInput(*array, *bf16);
    FuzzCheck(converted.ok(), "ConvertNpyInput to bf16 fails",
              converted.ok() ? "" : converted.status().ToString());
  }
  return 0;
}

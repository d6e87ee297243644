// NumPy .npy files <-> accy::Tensor, for `accy run`'s inputs and outputs.
//
// A small, strict implementation of the NumPy format (numpy/lib/format.py, "NPY format"):
// versions 1.0 and 2.0, little-endian or byte-order-free dtypes, C order. dtypes: <f2 <f4 <f8
// |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 (numpy writes '|' for one-byte types, '<' otherwise).
// bf16 has no NumPy dtype: bf16 tensors are written as <f4 (exact, every bf16 is an f32), and
// ConvertNpyInput reads a bf16 parameter from <f4 (rounded to nearest even) or from <u2 (raw
// bf16 bit patterns). Stateless and thread-safe; the caller owns buffers and tensors.
#ifndef ACCY_TOOLS_NPY_H_
#define ACCY_TOOLS_NPY_H_

#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <string_view>

#include "accy/status.h"
#include "accy/tensor.h"

namespace accy::tools {

// The dtype string of `type` ("<f4", "|b1", ...); bf16 maps to "<f4" (see above).
std::string_view NpyDescr(ElementType type);

// Parses a whole .npy file. kInvalidArgument, naming what is wrong, for: a bad magic string, a
// version other than 1.0/2.0, a malformed header dictionary (keys descr, fortran_order, shape,
// each once), an unsupported or big-endian dtype, Fortran order, a negative or overflowing shape,
// a data size that differs from the shape's, an i1 byte other than 0/1.
StatusOr<Tensor> ParseNpy(std::span<const uint8_t> bytes);
// Reads one .npy file from `in` as ParseNpy parses it, with bounded memory: the preamble, then the
// header, then exactly the data bytes the header declares, and it needs the stream to end there.
// Input that is not .npy (even an endless stream such as /dev/zero) fails after its first 12
// bytes; a stream longer than its header declares fails after one byte more ("... the file has
// more"). Errors as ParseNpy's.
StatusOr<Tensor> ReadNpy(std::istream& in);
// Serializes `tensor` (version 1.0, or 2.0 when the header needs it; header padded to 64 bytes).
std::string SerializeNpy(const Tensor& tensor);

// File forms: kNotFound when the file cannot be read, kInvalidArgument for an empty path, a
// directory, or as ParseNpy (the message starts with the path); kPermissionDenied / kInternal
// when writing fails.
StatusOr<Tensor> ReadNpyFile(const std::string& path);
Status WriteNpyFile(const std::string& path, const Tensor& tensor);

// Makes `array` (read from a .npy) the input of a parameter of type `parameter`: the same type
// as is; for a bf16 parameter, an f32 array rounded to nearest even or a u16 array of bit
// patterns. kInvalidArgument naming both types otherwise (shape or element type mismatch).
StatusOr<Tensor> ConvertNpyInput(const Tensor& array, const TensorType& parameter);

// ReadNpyFile then ConvertNpyInput for each of `paths` (as many as `types`): a function's
// inputs. Errors: ReadNpyFile's; kInvalidArgument "input I (PATH): ..." for a conversion.
StatusOr<std::vector<Tensor>> ReadNpyInputs(std::span<const std::string> paths,
                                            std::span<const TensorType> types);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_NPY_H_

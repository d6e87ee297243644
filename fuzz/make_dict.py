#!/usr/bin/env python3
"""Writes the libFuzzer dictionary of StableHLO tokens (fuzz/stablehlo.dict is its output).

Op names come from include/accy/ops.def (every row's name, as `stablehlo.NAME` and
`"stablehlo.NAME"`), attribute names, enum values, types and keywords from the lists below
(the custom assembly formats of stablehlo/dialect/StablehloOps.td, accy/ir.h's attribute table).
Usage: make_dict.py include/accy/ops.def > fuzz/stablehlo.dict
"""
import re
import sys

ATTRIBUTES = """value comparison_direction compare_type dimensions broadcast_dimensions
permutation start_indices limit_indices strides edge_padding_low edge_padding_high
interior_padding iota_dimension dimension lhs_batching_dimensions rhs_batching_dimensions
lhs_contracting_dimensions rhs_contracting_dimensions precision_config dot_dimension_numbers
dimension_numbers offset_dims collapsed_slice_dims start_index_map index_vector_dim
operand_batching_dims start_indices_batching_dims slice_sizes indices_are_sorted unique_indices
update_window_dims inserted_window_dims scatter_dims_to_operand_dims input_batching_dims
scatter_indices_batching_dims window_dimensions window_strides base_dilations window_dilations
padding lhs_dilation rhs_dilation feature_group_count batch_group_count window_reversal
is_stable fft_type rng_algorithm call_target_name backend_config has_side_effect api_version
output_operand_aliases operand_index output_tuple_indices operand_tuple_indices
accy.version accy.operand_effects accy.dimension accy.result_aliases
mhlo.num_partitions mhlo.num_replicas mhlo.sharding jax.result_info jax.arg_info
sym_visibility sym_name arg_attrs res_attrs""".split()

TOKENS = """module func.func func.return func.call return call public private attributes loc
#loc dense array<i64: array<i1: tensor< x ?x f16 bf16 f32 f64 i1 i8 i16 i32 i64 ui8 ui16 ui32 ui64
complex<f32> f8E4M3FN i4 !stablehlo.token tuple< EQ NE GE GT LE LT FLOAT TOTALORDER SIGNED
UNSIGNED DEFAULT HIGH HIGHEST true false inf nan 0x7FC00000 0x -> ( ) { } [ ] < > : , = %
%arg0 %0 %1 @main @f ^bb0 #stablehlo.gather< #stablehlo.scatter< #stablehlo.dot<
#stablehlo.conv< #stablehlo.output_operand_alias< #stablehlo.comparison_direction<
#stablehlo.precision< #stablehlo<comparison_direction #stablehlo.conv<raw applies across
dimensions init: contracting_dims batching_dims precision dims low high interior sizes
window strides rhs_dilate lhs_dilate pad stride reverse cond do x [b, 0, 1, f] [0, 1, i, o]
[b, 0, 1, f] // ----- check.expect_eq check.expect_close check.expect_almost_eq
check.expect_eq_const check.expect_close_const check.expect_almost_eq_const @check.expect_eq
@accy.cumsum""".split()


def escape(token):
    return '"' + token.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    rows = open(sys.argv[1]).read()
    ops = re.findall(r'^ACCY_OP\(\w+,\s*"([a-z_]+)"', rows, flags=re.M)
    tokens = []
    for op in ops:
        tokens += [f"stablehlo.{op}", f'"stablehlo.{op}"']
    tokens += ["stablehlo.return", "stablehlo.dot", "stablehlo.custom_call"]
    tokens += ATTRIBUTES + TOKENS
    seen = set()
    print("# StableHLO tokens for the libFuzzer targets; written by fuzz/make_dict.py from "
          "include/accy/ops.def.")
    for token in tokens:
        if token not in seen:
            seen.add(token)
            print(escape(token))


if __name__ == "__main__":
    main()

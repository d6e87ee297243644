func.func @main(%x: tensor<1x16x16x32xf32>, %w: tensor<3x3x32x32xf32>, %s: tensor<f32>) -> tensor<1x16x16x32xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x16x16x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x16x16x32xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<1x16x16x32xf32>
  %y = stablehlo.add %c, %b : tensor<1x16x16x32xf32>
  return %y : tensor<1x16x16x32xf32>
}

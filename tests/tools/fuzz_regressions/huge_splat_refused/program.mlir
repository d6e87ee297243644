func.func @main() -> tensor<1000000x1000000xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<1000000x1000000xf32>
  return %0 : tensor<1000000x1000000xf32>
}

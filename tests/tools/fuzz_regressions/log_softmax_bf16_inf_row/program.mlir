module @fuzz {
  func.func public @main(%arg0: tensor<16x11x16xbf16>) -> tensor<16x11x16xbf16> {
    %0 = stablehlo.custom_call @accy.nn.log_softmax(%arg0) {accy.axis = -1 : i64, accy.operand_effects = ["read"], accy.version = 1 : i64} : (tensor<16x11x16xbf16>) -> tensor<16x11x16xbf16>
    return %0 : tensor<16x11x16xbf16>
  }
}

// cnn_train_step.mlir: one SGD training step of a small CNN (issue #17). Hand-written (JAX is not
// installable here) in the form JAX 0.4 (~0.4.30, CPU) exports for
//
//   def loss_fn(params, x, labels):
//     w1, b1, w2, b2 = params
//     y = lax.conv_general_dilated(x, w1, (1, 1), 'VALID',
//                                  dimension_numbers=('NHWC', 'HWIO', 'NHWC')) + b1
//     y = jax.nn.relu(y)
//     y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')
//     logits = y.reshape(32, -1) @ w2 + b2
//     return jnp.mean(-jnp.sum(labels * jax.nn.log_softmax(logits), axis=-1))
//
//   @jax.jit
//   def train_step(params, x, labels):
//     loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
//     return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss
//
//   print(train_step.lower((w1, b1, w2, b2), x, labels).as_text())
//
// Model: conv 3x3, 1 -> 32 channels, VALID, stride 1 (28x28 -> 26x26) + bias, relu, max pool 2x2
// stride 2 VALID (-> 13x13x32 = 5408), dense 5408 -> 10 + bias, log_softmax, mean cross-entropy
// over one-hot labels, SGD with learning rate 0.1 (a constant).
// Parameters: %arg0 conv kernel f32[3,3,1,32] (HWIO), %arg1 conv bias f32[32], %arg2 dense kernel
// f32[5408,10], %arg3 dense bias f32[10], %arg4 images f32[32,28,28,1] (NHWC), %arg5 one-hot
// labels f32[32,10]. Results: the four updated parameters (same shapes), then the loss f32[].
// Forms follow JAX's rules: relu's custom_jvp (call @relu for the primal, compare GT + select for
// the gradient), log_softmax as a jitted function split by linearize into its primal
// (@log_softmax, returning its residuals exp(shifted) and sum) and its transpose
// (@log_softmax_0), implicit size-1 broadcasts reduced back by reduce + reshape (_unbroadcast),
// the dense kernel gradient as dot_general + transpose, the conv kernel gradient as a convolution
// with batch and feature swapped (_conv_general_dilated_transpose_rhs: window strides and
// rhs_dilation swapped, both 1 here, padding 0), and the max-pool gradient as the CPU lowering of
// select_and_scatter_add (expand_padding: pad with -inf, select_and_scatter GE/add, slice).
module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3x1x32xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<32xf32> {mhlo.layout_mode = "default"}, %arg2: tensor<5408x10xf32> {mhlo.layout_mode = "default"}, %arg3: tensor<10xf32> {mhlo.layout_mode = "default"}, %arg4: tensor<32x28x28x1xf32> {mhlo.layout_mode = "default"}, %arg5: tensor<32x10xf32> {mhlo.layout_mode = "default"}) -> (tensor<3x3x1x32xf32> {jax.result_info = "[0][0]", mhlo.layout_mode = "default"}, tensor<32xf32> {jax.result_info = "[0][1]", mhlo.layout_mode = "default"}, tensor<5408x10xf32> {jax.result_info = "[0][2]", mhlo.layout_mode = "default"}, tensor<10xf32> {jax.result_info = "[0][3]", mhlo.layout_mode = "default"}, tensor<f32> {jax.result_info = "[1]", mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %cst_1 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %0 = stablehlo.convolution(%arg4, %arg0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<32x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<32x26x26x32xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [3] : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x32xf32>) -> tensor<32x26x26x32xf32>
    %3 = stablehlo.add %0, %2 : tensor<32x26x26x32xf32>
    %4 = call @relu(%3) : (tensor<32x26x26x32xf32>) -> tensor<32x26x26x32xf32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x26x26x32xf32>
    %6 = stablehlo.compare  GT, %3, %5,  FLOAT : (tensor<32x26x26x32xf32>, tensor<32x26x26x32xf32>) -> tensor<32x26x26x32xi1>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%4, %7) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %59 = stablehlo.maximum %arg6, %arg7 : tensor<f32>
      stablehlo.return %59 : tensor<f32>
    }) : (tensor<32x26x26x32xf32>, tensor<f32>) -> tensor<32x13x13x32xf32>
    %9 = stablehlo.reshape %8 : (tensor<32x13x13x32xf32>) -> tensor<32x5408xf32>
    %10 = stablehlo.dot_general %9, %arg2, contracting_dims = [1] x [0] : (tensor<32x5408xf32>, tensor<5408x10xf32>) -> tensor<32x10xf32>
    %11 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<32x10xf32>
    %13 = stablehlo.add %10, %12 : tensor<32x10xf32>
    %14:3 = call @log_softmax(%13) : (tensor<32x10xf32>) -> (tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x1xf32>)
    %15 = stablehlo.multiply %arg5, %14#0 : tensor<32x10xf32>
    %16 = stablehlo.reduce(%15 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<32x10xf32>, tensor<f32>) -> tensor<32xf32>
    %17 = stablehlo.negate %16 : tensor<32xf32>
    %18 = stablehlo.reduce(%17 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<32xf32>, tensor<f32>) -> tensor<f32>
    %19 = stablehlo.divide %18, %cst_1 : tensor<f32>
    %20 = stablehlo.divide %cst_2, %cst_1 : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %22 = stablehlo.negate %21 : tensor<32xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0] : (tensor<32xf32>) -> tensor<32x10xf32>
    %24 = stablehlo.multiply %arg5, %23 : tensor<32x10xf32>
    %25 = call @log_softmax_0(%14#1, %14#2, %24) : (tensor<32x10xf32>, tensor<32x1xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
    %26 = stablehlo.reduce(%25 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<32x10xf32>, tensor<f32>) -> tensor<10xf32>
    %27 = stablehlo.reshape %26 : (tensor<10xf32>) -> tensor<1x10xf32>
    %28 = stablehlo.reduce(%27 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1x10xf32>, tensor<f32>) -> tensor<10xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0] : (tensor<10xf32>) -> tensor<10xf32>
    %30 = stablehlo.dot_general %25, %9, contracting_dims = [0] x [0] : (tensor<32x10xf32>, tensor<32x5408xf32>) -> tensor<10x5408xf32>
    %31 = stablehlo.transpose %30, dims = [1, 0] : (tensor<10x5408xf32>) -> tensor<5408x10xf32>
    %32 = stablehlo.dot_general %25, %arg2, contracting_dims = [1] x [1] : (tensor<32x10xf32>, tensor<5408x10xf32>) -> tensor<32x5408xf32>
    %33 = stablehlo.reshape %32 : (tensor<32x5408xf32>) -> tensor<32x13x13x32xf32>
    %34 = stablehlo.pad %4, %cst_0, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<32x26x26x32xf32>, tensor<f32>) -> tensor<32x26x26x32xf32>
    %35 = "stablehlo.select_and_scatter"(%34, %33, %cst) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %59 = stablehlo.compare  GE, %arg6, %arg7,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %59 : tensor<i1>
    }, {
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %59 = stablehlo.add %arg6, %arg7 : tensor<f32>
      stablehlo.return %59 : tensor<f32>
    }) : (tensor<32x26x26x32xf32>, tensor<32x13x13x32xf32>, tensor<f32>) -> tensor<32x26x26x32xf32>
    %36 = stablehlo.slice %35 [0:32, 0:26, 0:26, 0:32] : (tensor<32x26x26x32xf32>) -> tensor<32x26x26x32xf32>
    %37 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x26x26x32xf32>
    %38 = stablehlo.select %6, %36, %37 : tensor<32x26x26x32xi1>, tensor<32x26x26x32xf32>
    %39 = stablehlo.reduce(%38 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<32x26x26x32xf32>, tensor<f32>) -> tensor<32xf32>
    %40 = stablehlo.reshape %39 : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
    %41 = stablehlo.reduce(%40 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0] : (tensor<32xf32>) -> tensor<32xf32>
    %43 = stablehlo.convolution(%arg4, %38) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<32x28x28x1xf32>, tensor<32x26x26x32xf32>) -> tensor<3x3x1x32xf32>
    %44 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3x3x1x32xf32>
    %45 = stablehlo.multiply %44, %43 : tensor<3x3x1x32xf32>
    %46 = stablehlo.subtract %arg0, %45 : tensor<3x3x1x32xf32>
    %47 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %48 = stablehlo.multiply %47, %42 : tensor<32xf32>
    %49 = stablehlo.subtract %arg1, %48 : tensor<32xf32>
    %50 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<5408x10xf32>
    %51 = stablehlo.multiply %50, %31 : tensor<5408x10xf32>
    %52 = stablehlo.subtract %arg2, %51 : tensor<5408x10xf32>
    %53 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %54 = stablehlo.multiply %53, %29 : tensor<10xf32>
    %55 = stablehlo.subtract %arg3, %54 : tensor<10xf32>
    return %46, %49, %52, %55, %19 : tensor<3x3x1x32xf32>, tensor<32xf32>, tensor<5408x10xf32>, tensor<10xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<32x26x26x32xf32>) -> tensor<32x26x26x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x26x26x32xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<32x26x26x32xf32>
    return %1 : tensor<32x26x26x32xf32>
  }
  func.func private @log_softmax(%arg0: tensor<32x10xf32>) -> (tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x1xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<32x10xf32>, tensor<f32>) -> tensor<32xf32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<32xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<32xf32>) -> tensor<32x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<32x1xf32>) -> tensor<32x10xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<32x10xf32>
    %6 = stablehlo.exponential %5 : tensor<32x10xf32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<32x10xf32>, tensor<f32>) -> tensor<32xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<32xf32>) -> tensor<32x1xf32>
    %9 = stablehlo.log %8 : tensor<32x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<32x1xf32>) -> tensor<32x10xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<32x10xf32>
    return %11, %6, %8 : tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x1xf32>
  }
  func.func private @log_softmax_0(%arg0: tensor<32x10xf32>, %arg1: tensor<32x1xf32>, %arg2: tensor<32x10xf32>) -> tensor<32x10xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.negate %arg2 : tensor<32x10xf32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<32x10xf32>, tensor<f32>) -> tensor<32xf32>
    %2 = stablehlo.reshape %1 : (tensor<32xf32>) -> tensor<32x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<32x1xf32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<32x1xf32>, tensor<f32>) -> tensor<32xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<32xf32>) -> tensor<32xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<32xf32>) -> tensor<32x10xf32>
    %7 = stablehlo.multiply %6, %arg0 : tensor<32x10xf32>
    %8 = stablehlo.add %arg2, %7 : tensor<32x10xf32>
    return %8 : tensor<32x10xf32>
  }
}

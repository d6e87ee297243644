#!/usr/bin/env python3
"""Rewrites ../shared/models/jax_resnet_50.mlir (Flax, NHWC activations, HWIO kernels) into the
same network in PyTorch's layout: NCHW activations and OIHW kernels, convolutions with
dim_numbers [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], batch-norm broadcasts along dim 1 and
pooling windows over dims 2 and 3, as torch_xla / torch-mlir export NCHW models. The image
input and both outputs already are NCHW in the Flax export (it transposes on the way in and
out); those transposes become identity reshapes. The two programs compute the same function:
feed the NCHW one the NHWC one's inputs with every kernel transposed HWIO -> OIHW
(`--inputs IN OUT` does that for make_inputs.py's .npy files).

usage: resnet_to_nchw.py NHWC.mlir NCHW.mlir [--inputs IN_DIR OUT_DIR]
Used to measure issue 17's "a NCHW program runs as fast as the NHWC one" (bench/README.md).
"""
import os
import re
import sys

TYPE = re.compile(r"tensor<1x(\d+)x(\d+)x(\d+)xf32>")


def nchw(match):
    h, w, c = match.group(1), match.group(2), match.group(3)
    return f"tensor<1x{c}x{h}x{w}xf32>"


def oihw(type_text):
    h, w, i, o = re.match(r"tensor<(\d+)x(\d+)x(\d+)x(\d+)xf32>", type_text).groups()
    return f"tensor<{o}x{i}x{h}x{w}xf32>"


def permute_list(text):
    """[n, h, w, c]-ordered 4 entries -> [n, c, h, w] (entries separated by ', ')."""
    parts = [p.strip() for p in text.split(",")]
    return ", ".join([parts[0], parts[3], parts[1], parts[2]])


def convert(src):
    lines = src.split("\n")
    kernels = set()
    conv = re.compile(r"stablehlo\.convolution\((%[\w]+), (%[\w]+)\)")
    for line in lines:
        m = conv.search(line)
        if m:
            kernels.add(m.group(2))
    out = []
    for line in lines:
        if "func.func public @main" in line:
            head, _, rest = line.partition("(")
            params, _, tail = rest.rpartition(") -> ")
            new_params = []
            for p in params.split(", %"):
                name, _, ty = p.partition(": ")
                full = name if name.startswith("%") else "%" + name
                if full in kernels:
                    ty = oihw(ty)
                elif full != "%arg0":
                    ty = TYPE.sub(nchw, ty)
                new_params.append(f"{full}: {ty}")
            line = f"{head}({', '.join(new_params)}) -> {tail}"
            out.append(line)
            continue
        if "stablehlo.transpose" in line:
            # The Flax export's own layout changes: NCHW in and out here, so identities.
            m = re.match(r"(\s*%\w+) = stablehlo\.transpose (%\w+), dims = \[[^\]]*\] : "
                         r"\((tensor<[^>]*>)\) -> (tensor<[^>]*>)", line)
            name, operand, in_type, out_type = m.groups()
            if operand == "%arg0":
                line = f"{name} = stablehlo.reshape {operand} : ({in_type}) -> {in_type}"
            else:
                nchw_type = TYPE.sub(nchw, in_type)
                line = f"{name} = stablehlo.reshape {operand} : ({nchw_type}) -> {out_type}"
            out.append(line)
            continue
        if line.strip().startswith("return") and "1x2048x7x7" in line:
            out.append(line)  # already NCHW
            continue
        m = conv.search(line)
        if m:
            line = line.replace("dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
                                "dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]")
            sig = re.search(r": \((tensor<[^>]*>), (tensor<[^>]*>)\) -> (tensor<[^>]*>)$", line)
            lhs, rhs, res = sig.groups()
            new_sig = f": ({TYPE.sub(nchw, lhs)}, {oihw(rhs)}) -> {TYPE.sub(nchw, res)}"
            line = line[:sig.start()] + new_sig
            out.append(line)
            continue
        line = re.sub(r"(broadcast_in_dim %\w+, dims = )\[3\]", r"\1[1]", line)
        line = re.sub(r"(window_dimensions|window_strides) = array<i64: ([^>]*)>",
                      lambda m: f"{m.group(1)} = array<i64: {permute_list(m.group(2))}>", line)
        line = re.sub(r"padding = dense<\[(\[[^\]]*\]), (\[[^\]]*\]), (\[[^\]]*\]), (\[[^\]]*\])\]>",
                      lambda m: f"padding = dense<[{m.group(1)}, {m.group(4)}, {m.group(2)}, "
                                f"{m.group(3)}]>", line)
        line = TYPE.sub(nchw, line)
        out.append(line)
    return "\n".join(out), kernels


def main(argv):
    if len(argv) not in (3, 6) or (len(argv) == 6 and argv[3] != "--inputs"):
        sys.exit(__doc__)
    src = open(argv[1]).read()
    text, kernels = convert(src)
    open(argv[2], "w").write(text)
    if len(argv) == 6:
        import numpy as np
        in_dir, out_dir = argv[4], argv[5]
        os.makedirs(out_dir, exist_ok=True)
        # make_inputs.py writes parameter i as in{i}.npy.
        sig = re.search(r"func\.func public @main\(([^)]*)\)", src).group(1)
        names = ["%" + p.partition(":")[0].lstrip("%") for p in sig.split(", %")]
        for position, name in enumerate(names):
            f = f"in{position}.npy"
            a = np.load(os.path.join(in_dir, f))
            if name in kernels:
                a = np.ascontiguousarray(a.transpose(3, 2, 0, 1))
            np.save(os.path.join(out_dir, f), a)


if __name__ == "__main__":
    main(sys.argv)

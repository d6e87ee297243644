"""The comparison workloads for the peers: inputs (fixed seed), float64 references, and the
PyTorch eager, TorchScript (trace + freeze) and NumPy implementations. The same programs as
bench/workloads.cc (accy's side); parameter order matches accy's "main" parameters, so that
in{i}.npy is parameter i for every engine.

Semantics (all f32):
  chain_4m     y = tanh(a*b + c) * 0.5 + a over [4M]
  softmax      softmax over the last dim of [4096, 1024]
  layer_norm   layer norm over the last dim of [4096, 1024], eps 1e-5, * gamma + beta
  matmul_1024  [1024, 1024] @ [1024, 1024]
  mlp_b64      784-512-512-10, relu between layers, batch 64; weights stored [in, out]
  block_s128   the pre-LN GPT-2-small block of `accy demo` (tools/transformer_block.h): causal
               12-head attention, GELU (tanh form) MLP of width 3072, batch 1, sequence 128
  sort_1m      stable ascending sort of [2^20] (accy: jax.numpy.sort's comparator)
  sort_rows    stable ascending sort of each row of [4096, 1024]
  top_k        the 8 largest of each row of [4096, 1024], largest first, and their indices
               (the check compares the values)
"""
import math

import numpy as np

WORKLOADS = ["chain_4m", "softmax", "layer_norm", "matmul_1024", "block_s128", "mlp_b64",
             "sort_1m", "sort_rows", "top_k"]

# Max |result - reference| / max(1, max |reference|) each engine must meet before it is timed.
TOLERANCE = {"chain_4m": 1e-5, "softmax": 1e-5, "layer_norm": 1e-4, "matmul_1024": 1e-4,
             "block_s128": 1e-3, "mlp_b64": 1e-4, "sort_1m": 0.0, "sort_rows": 0.0, "top_k": 0.0}
TOP_K = 8

D, HEADS, HEAD_DIM, WIDTH, SEQ = 768, 12, 64, 3072, 128
BLOCK_PARAMS = [("x", (SEQ, D)), ("ln1_gamma", (D,)), ("ln1_beta", (D,)), ("w_q", (D, D)),
                ("b_q", (D,)), ("w_k", (D, D)), ("b_k", (D,)), ("w_v", (D, D)), ("b_v", (D,)),
                ("w_o", (D, D)), ("b_o", (D,)), ("ln2_gamma", (D,)), ("ln2_beta", (D,)),
                ("w_fc", (D, WIDTH)), ("b_fc", (WIDTH,)), ("w_proj", (WIDTH, D)),
                ("b_proj", (D,))]


def make_inputs(name, seed=0):
    """The f32 inputs of workload `name`, in accy's parameter order."""
    rng = np.random.default_rng(seed)
    normal = lambda *shape: rng.standard_normal(shape, dtype=np.float32)
    if name == "chain_4m":
        return [normal(4 << 20) for _ in range(3)]
    if name in ("softmax", "sort_rows", "top_k"):
        return [normal(4096, 1024)]
    if name == "sort_1m":
        return [normal(1 << 20)]
    if name == "layer_norm":
        return [normal(4096, 1024), normal(1024), normal(1024)]
    if name == "matmul_1024":
        return [normal(1024, 1024), normal(1024, 1024)]
    if name == "mlp_b64":
        widths = [784, 512, 512, 10]
        out = [normal(64, 784)]
        for i in range(3):
            bound = 1 / math.sqrt(widths[i])
            out.append(rng.uniform(-bound, bound, (widths[i], widths[i + 1])).astype(np.float32))
            out.append(rng.uniform(-bound, bound, (widths[i + 1],)).astype(np.float32))
        return out
    if name == "block_s128":
        out = []
        for pname, shape in BLOCK_PARAMS:
            if pname == "x":
                out.append(normal(*shape))
            elif "gamma" in pname:
                out.append((1 + 0.02 * normal(*shape)).astype(np.float32))
            else:
                out.append((0.02 * normal(*shape)).astype(np.float32))
        return out
    raise KeyError(name)


# ---- float64 references (NumPy) and the NumPy peer (same code in f32) ------------------------
def _layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + x.dtype.type(eps)) * gamma + beta


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _gelu_tanh(x):
    t = x.dtype.type
    return t(0.5) * x * (t(1) + np.tanh(t(math.sqrt(2 / math.pi)) * (x + t(0.044715) * x * x * x)))


def _block(p):
    (x, g1, be1, wq, bq, wk, bk, wv, bv, wo, bo, g2, be2, wfc, bfc, wproj, bproj) = p
    t = x.dtype.type
    h = _layer_norm(x, g1, be1)
    heads = lambda y: y.reshape(SEQ, HEADS, HEAD_DIM).transpose(1, 0, 2)
    q, k, v = heads(h @ wq + bq), heads(h @ wk + bk), heads(h @ wv + bv)
    scores = (q @ k.transpose(0, 2, 1)) * t(1 / math.sqrt(HEAD_DIM))
    mask = np.triu(np.ones((SEQ, SEQ), dtype=bool), 1)
    scores = np.where(mask, t(-np.inf), scores)
    a = (_softmax(scores) @ v).transpose(1, 0, 2).reshape(SEQ, D)
    x1 = x + a @ wo + bo
    return x1 + _gelu_tanh(_layer_norm(x1, g2, be2) @ wfc + bfc) @ wproj + bproj


def numpy_fn(name, inputs):
    """A zero-argument callable computing workload `name` with NumPy on `inputs` (their dtype)."""
    p = inputs
    if name == "chain_4m":
        a, b, c = p
        half = a.dtype.type(0.5)
        return lambda: np.tanh(a * b + c) * half + a
    if name == "softmax":
        return lambda: _softmax(p[0])
    if name == "layer_norm":
        return lambda: _layer_norm(*p)
    if name == "matmul_1024":
        return lambda: p[0] @ p[1]
    if name == "mlp_b64":
        x, w1, b1, w2, b2, w3, b3 = p
        return lambda: np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0) @ w3 + b3
    if name == "block_s128":
        return lambda: _block(p)
    if name in ("sort_1m", "sort_rows"):
        return lambda: np.sort(p[0], axis=-1, kind="stable")
    if name == "top_k":
        return lambda: _top_k(p[0], TOP_K)
    raise KeyError(name)


def _top_k(x, k):
    """(values, indices) of the k largest of each row, largest first."""
    n = x.shape[-1]
    part = np.argpartition(x, n - k, axis=-1)[:, n - k:]
    values = np.take_along_axis(x, part, axis=-1)
    order = np.argsort(-values, axis=-1, kind="stable")
    return np.take_along_axis(values, order, axis=-1), np.take_along_axis(part, order, axis=-1)


def reference(name, inputs):
    """The float64 result of workload `name` (NumPy in double precision; top_k: its values)."""
    return first_result(numpy_fn(name, [x.astype(np.float64) for x in inputs])())


def first_result(out):
    """The checked result of an engine's output: the first of a tuple (top_k's values)."""
    return out[0] if isinstance(out, tuple) else out


# ---- PyTorch --------------------------------------------------------------------------------
def torch_module(name, inputs):
    """(nn.Module in eval mode, its forward inputs as tensors): the idiomatic PyTorch form of
    the workload, weights as parameters (nn.Linear holds them [out, in]), x as the input."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    t = [torch.from_numpy(x) for x in inputs]

    class Chain(nn.Module):
        def forward(self, a, b, c):
            return torch.tanh(a * b + c) * 0.5 + a

    class Softmax(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=-1)

    class Sort(nn.Module):
        def forward(self, x):
            return torch.sort(x, dim=-1, stable=True)[0]

    class TopK(nn.Module):
        def forward(self, x):
            values, indices = torch.topk(x, TOP_K, dim=-1)
            return values, indices

    class MatMul(nn.Module):
        def forward(self, a, b):
            return torch.mm(a, b)

    def linear(w, b):
        layer = nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            layer.weight.copy_(w.t())
            layer.bias.copy_(b)
        return layer

    def layer_norm(gamma, beta):
        ln = nn.LayerNorm(gamma.shape[0], eps=1e-5)
        with torch.no_grad():
            ln.weight.copy_(gamma)
            ln.bias.copy_(beta)
        return ln

    class Block(nn.Module):
        # The anchors' GPT-2 block (perf-anchors/bench_torch.py): fused qkv Linear.
        def __init__(self, p):
            super().__init__()
            (_, g1, be1, wq, bq, wk, bk, wv, bv, wo, bo, g2, be2, wfc, bfc, wproj, bproj) = p
            self.ln1, self.ln2 = layer_norm(g1, be1), layer_norm(g2, be2)
            self.qkv = linear(torch.cat([wq, wk, wv], dim=1), torch.cat([bq, bk, bv]))
            self.proj, self.fc1, self.fc2 = linear(wo, bo), linear(wfc, bfc), linear(wproj, bproj)
            self.register_buffer("mask", torch.ones(SEQ, SEQ, dtype=torch.bool).tril())

        def forward(self, x):
            bn, sn, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
            q = q.view(bn, sn, HEADS, HEAD_DIM).transpose(1, 2)
            k = k.view(bn, sn, HEADS, HEAD_DIM).transpose(1, 2)
            v = v.view(bn, sn, HEADS, HEAD_DIM).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(HEAD_DIM))
            att = att.masked_fill(~self.mask[:sn, :sn], float("-inf"))
            o = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(bn, sn, D)
            x = x + self.proj(o)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    if name == "chain_4m":
        return Chain().eval(), tuple(t)
    if name == "softmax":
        return Softmax().eval(), (t[0],)
    if name == "layer_norm":
        return layer_norm(t[1], t[2]).eval(), (t[0],)
    if name == "matmul_1024":
        return MatMul().eval(), (t[0], t[1])
    if name == "mlp_b64":
        mlp = nn.Sequential(linear(t[1], t[2]), nn.ReLU(), linear(t[3], t[4]), nn.ReLU(),
                            linear(t[5], t[6]))
        return mlp.eval(), (t[0],)
    if name == "block_s128":
        return Block(t).eval(), (t[0].unsqueeze(0),)
    if name in ("sort_1m", "sort_rows"):
        return Sort().eval(), (t[0],)
    if name == "top_k":
        return TopK().eval(), (t[0],)
    raise KeyError(name)

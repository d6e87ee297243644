#!/usr/bin/env python3
"""PyTorch eager peer of cnn_train_step.mlir (issue #17): one SGD step of the same small CNN.

Same shapes and math: images f32[32,28,28,1] (NHWC, as the program takes them), conv 3x3 1->32
VALID stride 1 + bias, relu, max pool 2x2 stride 2 VALID, flatten (5408), dense 10 + bias,
log_softmax, mean cross-entropy over one-hot labels f32[32,10], backward, then
`p -= 0.1 * p.grad` under torch.no_grad(). The parameters live in torch's own layouts (conv
weight OIHW [32,1,3,3], dense weight [10,5408] with its inputs in (c, h, w) flatten order, as an
NCHW model has them); the NHWC images are permuted to NCHW inside the step and made contiguous
(--layout nchw, default: a 0.1 MB copy) or passed as the zero-copy permuted view, i.e.
channels_last (--layout channels_last); the two time within ~5% of each other on Zen 4.
Conversion to and from the program's layouts (HWIO kernel, (h, w, c)-ordered dense rows)
happens only when loading/dumping .npy files, outside the timing.

Usage (from /work/main):
  torch_cnn_train_step.py THREADS RUNS [--layout nchw|channels_last] [--malloc keep|default]
                          [--inputs DIR]
      times the step (3 warm-up steps, then RUNS steps each from the same parameters),
      prints the median ms. --malloc keep (the default) sets glibc's mmap threshold to 32 MiB and
      its trim threshold to 1 GiB (mallopt), so the activations freed after a step are reused
      warm by the next instead of being mapped and page-faulted again (Zen 4, 1 thread: ~7.4 ms
      -> ~2.8 ms); --malloc default measures glibc as is. Inputs are DIR/in0..in5.npy if
      given, else --make-inputs' values.
  torch_cnn_train_step.py --make-inputs DIR [--seed S]
      writes the program's 6 inputs in its parameter order: in0 conv kernel [3,3,1,32] He
      (N(0, sqrt(2/9))), in1 conv bias N(0, 0.05), in2 dense kernel [5408,10] He (N(0,
      sqrt(2/5408))), in3 dense bias N(0, 0.05), in4 images uniform [0, 1), in5 one-hot labels.
  torch_cnn_train_step.py --dump DIR [--inputs DIR2]
      runs one step on DIR2's (or fresh seeded) inputs and writes DIR/in0..in5.npy and the
      step's results in the program's layouts as DIR/out0..out4.npy (w1', b1', w2', b2', loss).
Run as: OMP_WAIT_POLICY=PASSIVE ATEN_CPU_CAPABILITY=avx512 env -u OPENBLAS_CORETYPE \
  -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/models/torch_cnn_train_step.py 1 50
(Do not export OMP_WAIT_POLICY=PASSIVE to accy: it slows accy's 2-thread run ~2.7 -> ~3.4 ms.)
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

N, H, W, C, K, OC, NCLS = 32, 28, 28, 1, 3, 32, 10
PH, PW = (H - K + 1) // 2, (W - K + 1) // 2  # 13 x 13
FLAT = PH * PW * OC  # 5408
LR = 0.1


def keep_freed_memory():
    """glibc: serve the step's 2.8 MB activations from the heap and never trim it, so steps after
    the first reuse warm pages (by default each large tensor is a fresh mmap whose first touch
    costs ~6-13 us per 4 KiB page on these VMs: perf-anchors README). Returns mallopt's status."""
    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_mmap_threshold = -1, -3
    return (libc.mallopt(m_mmap_threshold, 32 << 20) == 1 and  # the largest glibc accepts
            libc.mallopt(m_trim_threshold, 1 << 30) == 1)


def make_inputs(seed):
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((K, K, C, OC)) * np.sqrt(2.0 / (K * K * C))).astype(np.float32)
    b1 = (rng.standard_normal(OC) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((FLAT, NCLS)) * np.sqrt(2.0 / FLAT)).astype(np.float32)
    b2 = (rng.standard_normal(NCLS) * 0.05).astype(np.float32)
    x = rng.random((N, H, W, C), dtype=np.float32)
    labels = np.eye(NCLS, dtype=np.float32)[rng.integers(0, NCLS, N)]
    return [w1, b1, w2, b2, x, labels]


def load_inputs(folder):
    return [np.load(os.path.join(folder, f"in{i}.npy")) for i in range(6)]


# Program layout <-> torch layout. Dense rows: program (h, w, c), torch (c, h, w).
def to_torch(w1, b1, w2, b2):
    tw1 = torch.from_numpy(np.ascontiguousarray(w1.transpose(3, 2, 0, 1)))  # HWIO -> OIHW
    w2chw = w2.reshape(PH, PW, OC, NCLS).transpose(2, 0, 1, 3).reshape(FLAT, NCLS)
    tw2 = torch.from_numpy(np.ascontiguousarray(w2chw.T))  # [10, 5408] for F.linear
    return [t.clone().requires_grad_(True) for t in
            (tw1, torch.from_numpy(b1.copy()), tw2, torch.from_numpy(b2.copy()))]


def from_torch(tw1, tb1, tw2, tb2):
    w1 = tw1.detach().numpy().transpose(2, 3, 1, 0)  # OIHW -> HWIO
    w2 = (tw2.detach().numpy().T.reshape(OC, PH, PW, NCLS).transpose(1, 2, 0, 3)
          .reshape(FLAT, NCLS))
    return [np.ascontiguousarray(a) for a in (w1, tb1.detach().numpy(), w2, tb2.detach().numpy())]


def train_step(params, x_nhwc, labels, layout):
    w1, b1, w2, b2 = params
    x = x_nhwc.permute(0, 3, 1, 2)  # NCHW view with channels_last strides
    if layout == "nchw":
        x = x.contiguous()
    y = F.relu(F.conv2d(x, w1, b1))  # [32, 32, 26, 26]
    y = F.max_pool2d(y, 2, 2)  # [32, 32, 13, 13]
    logits = F.linear(y.reshape(N, FLAT), w2, b2)
    loss = -(labels * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad = None
    return loss.detach()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("threads", nargs="?", type=int)
    ap.add_argument("runs", nargs="?", type=int)
    ap.add_argument("--layout", choices=["nchw", "channels_last"], default="nchw")
    ap.add_argument("--inputs")
    ap.add_argument("--make-inputs")
    ap.add_argument("--dump")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--malloc", choices=["keep", "default"], default="keep",
                    help="keep (default): mallopt so freed activations stay mapped; default: "
                         "glibc as is (each step page-faults its large tensors afresh)")
    a = ap.parse_args()
    if a.malloc == "keep" and not keep_freed_memory():
        sys.exit("mallopt failed")
    if a.make_inputs:
        os.makedirs(a.make_inputs, exist_ok=True)
        for i, v in enumerate(make_inputs(a.seed)):
            np.save(os.path.join(a.make_inputs, f"in{i}.npy"), v)
        return
    inputs = load_inputs(a.inputs) if a.inputs else make_inputs(a.seed)
    x, labels = torch.from_numpy(inputs[4]), torch.from_numpy(inputs[5])
    if a.dump:
        torch.set_num_threads(a.threads or 1)
        os.makedirs(a.dump, exist_ok=True)
        params = to_torch(*inputs[:4])
        loss = train_step(params, x, labels, a.layout)
        for i, v in enumerate(inputs):
            np.save(os.path.join(a.dump, f"in{i}.npy"), v)
        for i, v in enumerate(from_torch(*params) + [loss.numpy().astype(np.float32)]):
            np.save(os.path.join(a.dump, f"out{i}.npy"), v)
        print(f"wrote {a.dump}/in0..5.npy, out0..4.npy; loss {float(loss):.6f}")
        return
    if a.threads is None or a.runs is None:
        sys.exit("usage: torch_cnn_train_step.py THREADS RUNS [--layout L] [--inputs DIR]")
    torch.set_num_threads(a.threads)
    start = to_torch(*inputs[:4])
    params = [p.detach().clone().requires_grad_(True) for p in start]

    def reset():  # every timed step starts from the same parameters (as accy bench's runs do)
        with torch.no_grad():
            for p, s in zip(params, start):
                p.copy_(s)

    for _ in range(3):
        reset(); train_step(params, x, labels, a.layout)
    ts = []
    for _ in range(a.runs):
        reset()
        t0 = time.perf_counter(); train_step(params, x, labels, a.layout)
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    print(f"torch eager cnn train step b{N} ({a.layout}, malloc {a.malloc}): median {ts[len(ts)//2]:.3f} ms, "
          f"min {ts[0]:.3f} ms ({a.threads} threads)")


if __name__ == "__main__":
    main()

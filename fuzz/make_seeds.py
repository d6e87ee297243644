#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer targets (fuzz/*_fuzzer.cc), one folder per target.

- stablehlo_parse_fuzzer: every chunk of every conformance .mlir file (split at lines starting
  with `// -----`, as ParseStableHloSplit does) up to --parse-max-len bytes, plus the model files
  of ../shared/models whole (libFuzzer reads only their first -max_len bytes: the prefix still
  exercises the real-model syntax up to the cut).
- compile_run_fuzzer: the conformance chunks up to --run-max-len bytes (one module each, what
  that target parses). The models are left out: each is far over the target's size limits.
- npy_fuzzer: small .npy files of every dtype the reader knows, versions 1.0 and 2.0, shapes
  (), (0,), (3,), (2, 3), written here without numpy (the format is numpy/lib/format.py's).
File names are the SHA-1 of the content (duplicates collapse), as libFuzzer names its units.
Usage: make_seeds.py --conformance DIR --models DIR --out DIR
"""
import argparse
import hashlib
import pathlib
import struct


def write_unit(folder, data):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def chunks(text):
    current = []
    for line in text.splitlines(keepends=True):
        if line.startswith("// -----"):
            yield "".join(current)
            current = []
        else:
            current.append(line)
    yield "".join(current)


NPY_DTYPES = {  # descr: (struct format of one element, sample values)
    "<f2": ("<e", [0.0, -1.5, 65504.0]), "<f4": ("<f", [1.0, -0.0, float("nan")]),
    "<f8": ("<d", [2.5, float("inf"), -3.0]), "|b1": ("<B", [0, 1, 1]),
    "|i1": ("<b", [-128, 0, 127]), "<i2": ("<h", [-1, 2, 3]), "<i4": ("<i", [7, -8, 9]),
    "<i8": ("<q", [-(2**63), 0, 2**63 - 1]), "|u1": ("<B", [0, 255, 1]),
    "<u2": ("<H", [0x3F80, 0, 65535]), "<u4": ("<I", [1, 2, 3]), "<u8": ("<Q", [0, 1, 2**64 - 1]),
}


def npy_file(descr, shape, major):
    element_format, samples = NPY_DTYPES[descr]
    count = 1
    for dim in shape:
        count *= dim
    # Python's repr of the tuple, as numpy writes it: (), (3,), (2, 3).
    shape_text = repr(tuple(shape))
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}"
    length_size = 2 if major == 1 else 4
    prefix = 6 + 2 + length_size
    padded = len(header) + 1
    padded += (-(prefix + padded)) % 64
    header = header.ljust(padded - 1) + "\n"
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    data = b"".join(struct.pack(element_format, samples[i % len(samples)]) for i in range(count))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode("latin1") + data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--conformance", type=pathlib.Path, required=True)
    parser.add_argument("--models", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--parse-max-len", type=int, default=65536)
    parser.add_argument("--run-max-len", type=int, default=16384)
    args = parser.parse_args()

    parse_dir = args.out / "stablehlo_parse_fuzzer"
    run_dir = args.out / "compile_run_fuzzer"
    npy_dir = args.out / "npy_fuzzer"
    for path in sorted(args.conformance.rglob("*.mlir")):
        for chunk in chunks(path.read_text(encoding="utf-8", errors="replace")):
            data = chunk.encode("utf-8")
            if not data.strip():
                continue
            if len(data) <= args.parse_max_len:
                write_unit(parse_dir, data)
            if len(data) <= args.run_max_len:
                write_unit(run_dir, data)
    for path in sorted(args.models.glob("*.mlir")):
        write_unit(parse_dir, path.read_bytes())
    for descr in NPY_DTYPES:
        for shape in [(), (0,), (3,), (2, 3)]:
            for major in (1, 2):
                write_unit(npy_dir, npy_file(descr, shape, major))
    for folder in (parse_dir, run_dir, npy_dir):
        print(f"{folder}: {sum(1 for _ in folder.iterdir())} seeds")


if __name__ == "__main__":
    main()

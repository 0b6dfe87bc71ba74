#!/usr/bin/python3
"""bench/make_transformers.py — the transformer-scale bench models of issue 27 (section 3).

Writes bench/models/<model>/{base.onnx, qat.onnx, input.npy, info.txt} (git-ignored, seeded,
never downloaded) for
  vit_b16     torchvision's vit_b_16 (random init, seeded; the zero-initialised head re-drawn
              with std 0.02 so the output is not constant), input [1, 3, 224, 224]
  bert_base   a BERT-base-like encoder written here: input LayerNorm, 12 post-LN layers, hidden
              768, 12 heads, FFN 3072, exact (Erf) GELU, no mask; input [1, 128, 768] (the
              embedded sequence; token ids and the embedding table are left out so every model
              takes one float32 input, as qreport run and bench/ort_bench.js expect)
  gpt2_small  a GPT-2-small-like decoder written here: 12 pre-LN blocks, hidden 768, 12 heads,
              FFN 3072, tanh GELU, causal (additive -10000 mask), final LayerNorm and an LM head
              to a vocabulary of 8192 (MatMul, no bias); input [1, 128, 768] (the embedded
              sequence), output [1, 128, 8192]
exported with torch.onnx.export (opset 17, constant folding), and for each its int8 QDQ twin
qat.onnx made the way ONNX Runtime's quantize_static makes them: per-channel symmetric int8
weights, per-tensor asymmetric uint8 activations on every MatMul/Gemm/Conv input, int32 Gemm/Conv
biases, min/max calibration over CALIB seeded inputs, ORT's QDQ names. The quantization is
fixtures/make_transformer_pairs.py's (static_int8, calibrate: ORT through node,
$ORT_NODE_MODULES), imported, not rewritten. Weights use torch's default init for the Linear
layers of vit_b_16 and N(0, 0.02) (BERT/GPT-2's) for the models written here.

usage: /usr/bin/python3 bench/make_transformers.py [--models vit_b16,bert_base,gpt2_small] [--force]
                                                   [--workdir DIR] [--threads N]
Skips a model whose four files exist unless --force. About 1-2 minutes per model on one core.
"""
import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'fixtures'))
import make_transformer_pairs as mtp  # noqa: E402

MODELS = ('vit_b16', 'bert_base', 'gpt2_small')
SEQ, HID, HEADS, FFN, LAYERS, VOCAB = 128, 768, 12, 3072, 12, 8192
CALIB = 4


class Attn(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(HID, HID) for _ in range(4))
        self.hd = HID // HEADS
        if causal:
            self.register_buffer('mask', torch.triu(torch.full((SEQ, SEQ), -10000.0), diagonal=1))
        else:
            self.mask = None

    def forward(self, x):
        b, s, _ = x.shape

        def split(t):
            return t.reshape(b, s, HEADS, self.hd).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        sc = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.hd)
        if self.mask is not None:
            sc = sc + self.mask
        o = torch.matmul(torch.softmax(sc, dim=-1), v).transpose(1, 2).reshape(b, s, HID)
        return self.o(o)


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.att, self.ln1 = Attn(False), nn.LayerNorm(HID, eps=1e-12)
        self.fc1, self.fc2, self.ln2 = nn.Linear(HID, FFN), nn.Linear(FFN, HID), nn.LayerNorm(HID, eps=1e-12)

    def forward(self, x):
        x = self.ln1(x + self.att(x))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(HID, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer() for _ in range(LAYERS))

    def forward(self, x):
        x = self.ln(x)
        for layer in self.layers:
            x = layer(x)
        return x


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.att = nn.LayerNorm(HID), Attn(True)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(HID), nn.Linear(HID, FFN), nn.Linear(FFN, HID)

    def forward(self, x):
        x = x + self.att(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate='tanh'))


class Gpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Gpt2Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(HID)
        self.head = nn.Linear(HID, VOCAB, bias=False)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def init_bert_style(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                m.weight.normal_(0.0, 0.02)
                if m.bias is not None:
                    m.bias.normal_(0.0, 0.02)
            elif isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn(HID))
                m.bias.copy_(0.05 * torch.randn(HID))


def build(name):
    """(module, input, calibration inputs [CALIB, ...]) for one model, seeded."""
    if name == 'vit_b16':
        import torchvision
        torch.manual_seed(2027)
        m = torchvision.models.vit_b_16(weights=None)
        with torch.no_grad():
            m.heads.head.weight.normal_(0.0, 0.02)
            m.heads.head.bias.normal_(0.0, 0.02)
            m.class_token.normal_(0.0, 0.02)
        shape, seed = (1, 3, 224, 224), 3027
    elif name == 'bert_base':
        torch.manual_seed(2127)
        m = Bert()
        init_bert_style(m)
        shape, seed = (1, SEQ, HID), 3127
    elif name == 'gpt2_small':
        torch.manual_seed(2227)
        m = Gpt2()
        init_bert_style(m)
        shape, seed = (1, SEQ, HID), 3227
    else:
        raise SystemExit(f'make_transformers: unknown model {name!r} (known: {", ".join(MODELS)})')
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape).astype(np.float32)
    calib = r.standard_normal((CALIB,) + shape).astype(np.float32)
    return m.eval(), x, calib


def make(name, outdir, work):
    t0 = time.time()
    m, x, calib = build(name)
    os.makedirs(outdir, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    base_path = os.path.join(outdir, 'base.onnx')
    # not under no_grad: with grad off, nn.MultiheadAttention (vit_b_16) takes its fused fast
    # path (aten::_native_multi_head_attention), which torch 1.13 cannot export
    torch.onnx.export(m, (torch.from_numpy(x),), base_path, opset_version=17, do_constant_folding=True,
                      input_names=['input'], output_names=['output'])
    base = onnx.load(base_path)
    acts = mtp.quant_acts(base, mtp.QUANT_OPS, act_outputs=False, softmax_input=False)
    rng = mtp.calibrate(base, calib, work, only=set(acts))
    qat = mtp.static_int8(base, rng, mtp.QUANT_OPS, act_outputs=False, softmax_input=False)
    onnx.save(qat, os.path.join(outdir, 'qat.onnx'))
    np.save(os.path.join(outdir, 'input.npy'), x)
    ops = {}
    for n in base.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    n_w = sum(1 for n in qat.graph.node if n.op_type == 'DequantizeLinear' and n.input[0].endswith('_quantized'))
    with open(os.path.join(outdir, 'info.txt'), 'w', newline='\n') as f:
        f.write(f'{name}: made by bench/make_transformers.py (torch {torch.__version__}, onnx {onnx.__version__})\n'
                f'base.onnx: {len(base.graph.node)} nodes, {os.path.getsize(base_path)} bytes; '
                f'ops {" ".join(f"{k}:{v}" for k, v in sorted(ops.items()))}\n'
                f'qat.onnx: {len(qat.graph.node)} nodes, {os.path.getsize(os.path.join(outdir, "qat.onnx"))} bytes; '
                f'{len(acts)} activation quantizers (uint8 per-tensor, min/max over {CALIB} seeded inputs), '
                f'{n_w} quantized weights/biases (int8 per-channel symmetric, int32 biases)\n'
                f'input.npy: {list(x.shape)} float32\n'
                f'seconds: {time.time() - t0:.1f}\n')
    print(f'{name}: {len(base.graph.node)} nodes, {len(acts)} activation quantizers, {time.time() - t0:.0f} s', flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--models', default=','.join(MODELS))
    ap.add_argument('--force', action='store_true')
    ap.add_argument('--workdir')
    ap.add_argument('--threads', type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    work = args.workdir or tempfile.mkdtemp(prefix='make_transformers_')
    for name in args.models.split(','):
        out = os.path.join(HERE, 'models', name)
        if not args.force and all(os.path.exists(os.path.join(out, f))
                                  for f in ('base.onnx', 'qat.onnx', 'input.npy', 'info.txt')):
            print(f'{name}: exists (--force regenerates)')
            continue
        make(name, out, os.path.join(work, name))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Generate the benchmark models of `make bench` into bench/models/ (git-ignored).

Usage: /usr/bin/python3 bench/make_models.py [--outdir DIR] [--models resnet18,mobilenetv2] [--force] [--threads N]

For each model (torchvision 0.14 quantizable ResNet-18 and MobileNetV2, random init,
seeded, 1000 classes) it writes DIR/<model>/

  base.onnx    float model, opset 13, input "input" 1x3x224x224, output "output"
  qat.onnx     the same network after QAT, exported with fake quantization as
               QuantizeLinear/DequantizeLinear pairs (QDQ); per-tensor scales and zero
               points rewritten from shape [1] to scalars (see scalar_qparams)
  qat.pt       the QAT module's state_dict (fake quantization on, observers frozen) for
               bench/pyflow.py, the Python workflow the benchmark compares runall with
  input.npy    "bad case" input: of 6 seeded candidates, the one with the largest
               L1 difference between the float and the QAT model outputs (torch)
  info.txt     what was trained and measured (accuracy, steps, seconds)

Steps (everything seeded; torch uses --threads threads, default 2):
  1. float training on a synthetic task so that activations depend on the input:
     three coloured Gaussian blobs in three quadrants on noise, label = quadrant
     (0..3) of the brightest blob. Trained at 64x64 (the networks are fully
     convolutional up to the global pooling) to keep each model at about a minute,
     then the BatchNorm running statistics are re-estimated on 224x224 batches.
  2. eval-mode fusion (torchvision's fuse_model: Conv+BN(+ReLU) -> Conv(+ReLU) with
     BN folded into the weights), then eager-mode QAT (torch.ao.quantization.prepare_qat)
     with the fbgemm QAT qconfig: per-channel symmetric int8 weights
     (MovingAveragePerChannelMinMaxObserver), per-tensor affine uint8 activations
     (MovingAverageMinMaxObserver). One deviation from get_default_qat_qconfig('fbgemm'):
     activations use the full 0..255 range instead of reduce_range's 0..127, because
     torch.onnx exports 0..127 as QuantizeLinear -> Clip -> DequantizeLinear, which is
     not a QDQ pair (neither ONNX Runtime nor qreport would fuse it).
  3. a few QAT training steps at 64x64, observers calibrated on a 224x224 batch and
     frozen, then export. base.onnx is the same QAT module with fake quantization
     disabled, i.e. the float twin carrying the QAT-trained weights: with every
     quantizer disabled the two models are equivalent (`qreport match` checks that).

Trust check (issue 20; not in `make bench`'s default set: `--models resnet18_qatbn,mobilenetv2_qatbn`):
`resnet18_qatbn` and `mobilenetv2_qatbn` are the same networks after the same float training
(same seeds as resnet18 / mobilenetv2), but QAT'd the way the issue's user did it:
  2'. fuse_model(is_qat=True) (torch.ao.quantization.fuse_modules_qat: ConvBn2d / ConvBnReLU2d
     QAT modules, BatchNorm NOT folded), prepare_qat with the same qconfig, BN statistics frozen
     (freeze_bn_stats: the 224x224 estimates of step 1 are kept, gamma/beta still train), a few
     QAT steps, observers calibrated on a 224x224 batch and frozen. qat.onnx is that module's
     export: each fused conv is Conv(fake-quantized w * bn_scale, zero bias) -> Div(bn_scale) ->
     BatchNormalization (-> Relu); where no activation follows (ResNet's conv2 and downsample
     convs, MobileNetV2's linear projections) the Div output carries the conv's node name.
  3'. base.onnx is the float model a user keeps next to it: the original (unfused) torchvision
     network carrying the QAT-trained weights (each ConvBn QAT module's conv weight and BN
     parameters/statistics copied into the float Conv2d and its BatchNorm2d; no fake quantization
     anywhere), exported in eval mode, so torch's exporter folds every BN into its Conv and the
     float Conv keeps the QAT Conv's node name. The script checks in torch that it computes the
     QAT module's function with fake quantization disabled (max |diff| / output range < 1e-4).
  input.npy: the bad case of the same 6 candidates (float model vs QAT module).
These two pairs are for `bench/trust.sh` (issue 20's scenario on real models), not for timing.
`--threads N` sets torch's thread count (default 2; bench/README's trust results were made with
`--threads 1`; results across thread counts may differ in the last bits).

Also the transformer pairs of the fixtures (fixtures/tpairs/, make_transformer_pairs.py):
`transformer` (static int8 QDQ twin) and `transformer_int4` (int4 MatMulNBits twin) are
copied as base.onnx / qat.onnx / input.npy (no training: they are the checked-in fixtures).

Follows fixtures/make_quant_pairs.py (eager-mode QAT, FakeQuantize modules, torch.onnx
export); opset 13 and 224x224 inputs as in the issue's benchmark section.
"""
import argparse
import copy
import os
import sys
import time

import numpy as np
import onnx
import torch
import torch.ao.quantization as tq
import torch.nn.intrinsic.qat  # noqa: F401  (ConvBn2d, ConvBnReLU2d, freeze_bn_stats)
import torch.nn.functional as F
import torchvision.models.quantization as tvq

OPSET = 13
H_EXPORT = 224
H_TRAIN = 64
STEPS = {"resnet18": (16, 3), "mobilenetv2": (30, 5)}   # (float, QAT) training steps: < 2 min in all
BATCH = 16
MODELS = ("resnet18", "mobilenetv2")
QATBN = {"resnet18_qatbn": "resnet18", "mobilenetv2_qatbn": "mobilenetv2"}   # trust check (issue 20): name -> network
FIXTURE_PAIRS = {"transformer": "static_int8", "transformer_int4": "int4_nbits"}   # bench name -> fixtures/tpairs/<pair>
SEEDS = {"resnet18": 7101, "mobilenetv2": 7201}
EVAL_SEED = 7301
CAND_SEED = 7401
N_CAND = 6


def make_batch(rng, n, h):
    """n inputs of 3 x h x h and their labels: three blobs (sizes relative to h) in three
    different quadrants on N(0, 0.3) noise; label = quadrant (row-major) of the brightest."""
    yy, xx = np.mgrid[0:h, 0:h].astype(np.float32) / h
    x = rng.normal(0.0, 0.3, size=(n, 3, h, h)).astype(np.float32)
    lab = np.zeros(n, np.int64)
    for i in range(n):
        quads = rng.permutation(4)[:3]
        amps = (rng.uniform(1.6, 2.6), rng.uniform(0.3, 1.2), rng.uniform(0.3, 1.2))
        for q, a in zip(quads, amps):
            cy = (q // 2) * 0.5 + rng.uniform(0.1, 0.4)
            cx = (q % 2) * 0.5 + rng.uniform(0.1, 0.4)
            sig = rng.uniform(0.06, 0.12)
            col = (rng.dirichlet(np.ones(3)) * 3.0).astype(np.float32)
            blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sig * sig))
            x[i] += a * col[:, None, None] * blob[None]
        lab[i] = quads[0]
    return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(lab)


def build(name):
    if name == "resnet18":
        return tvq.resnet18(weights=None, quantize=False)
    return tvq.mobilenet_v2(weights=None, quantize=False)


def accuracy(model, rng, h=H_EXPORT, n=8):
    model.eval()
    x, y = make_batch(rng, n, h)
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def train_steps(model, rng, steps, lr):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    loss = None
    for _ in range(steps):
        x, y = make_batch(rng, BATCH, H_TRAIN)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss)


def recalibrate_bn(model, rng, batches=2, n=8):
    """Re-estimates BatchNorm running statistics at the export resolution (cumulative average)."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(make_batch(rng, n, H_EXPORT)[0])


def export(model, path):
    model.eval()
    torch.onnx.export(model, (torch.zeros(1, 3, H_EXPORT, H_EXPORT),), path, opset_version=OPSET,
                      do_constant_folding=True, input_names=["input"], output_names=["output"])


def scalar_qparams(path):
    """Rewrites the per-tensor scales and zero points of the QuantizeLinear/DequantizeLinear nodes
    from shape [1] (how torch.onnx exports FakeQuantize's buffers) to scalars, as ONNX Runtime's
    own quantizer writes them: ONNX Runtime 1.30 fuses DQ-Add-Q into QLinearAdd and then rejects
    the [1]-shaped ones ("Scale and Zero-point must be a scalar"). Same values, same semantics."""
    m = onnx.load(path)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    src = {n.output[0]: n.input[0] for n in g.node if n.op_type == "Identity"}
    n_fixed = 0
    for n in g.node:
        if n.op_type not in ("QuantizeLinear", "DequantizeLinear"):
            continue
        for name in n.input[1:3]:
            while name in src:
                name = src[name]
            t = inits.get(name)
            if t is not None and list(t.dims) == [1]:
                del t.dims[:]
                n_fixed += 1
    if n_fixed:
        for vi in list(g.value_info):             # stale shapes of the shared zero points' Identity outputs
            if vi.name in src:
                g.value_info.remove(vi)
        onnx.checker.check_model(m)
        onnx.save(m, path)


def float_twin(float_model, qat):
    """The float network a user has next to a fused-ConvBn QAT model: float_model (unfused, the
    architecture before fuse_model) with every parameter and BN statistic taken from qat. A
    ConvBn QAT module at path P provides the Conv2d at P (weight, bias) and the BatchNorm2d that
    follows it in registration order (the module fuse_model replaced by an Identity); every other
    parameter/buffer (fc) has the same name in both."""
    f = copy.deepcopy(float_model)
    fm, qm = dict(f.named_modules()), dict(qat.named_modules())
    qsd = qat.state_dict()
    convbn = (torch.nn.intrinsic.qat.ConvBn2d, torch.nn.intrinsic.qat.ConvBnReLU2d)
    src = {}                    # float module path -> QAT module that carries its values
    pending = None
    for path, m in f.named_modules():
        if isinstance(m, torch.nn.Conv2d) and isinstance(qm.get(path), convbn):
            assert pending is None, path
            pending = qm[path]
            src[path] = pending
        elif isinstance(m, torch.nn.BatchNorm2d):
            assert pending is not None and isinstance(qm.get(path), torch.nn.Identity), path
            src[path] = pending.bn
            pending = None
    assert pending is None
    with torch.no_grad():
        for key, v in f.state_dict().items():
            path, attr = key.rsplit(".", 1)
            if path in src:
                v.copy_(getattr(src[path], attr))
            else:
                v.copy_(qsd[key])
    assert len(src) and all(not isinstance(m, torch.nn.BatchNorm2d) or p in src for p, m in fm.items())
    return f


def make_qatbn(name, outdir, log):
    """resnet18_qatbn / mobilenetv2_qatbn: fused ConvBn QAT (BN not folded) vs the float model (see the docstring)."""
    t0 = time.time()
    net = QATBN[name]
    seed = SEEDS[net]
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build(net)
    n_float, n_qat = STEPS[net]
    loss = train_steps(model, rng, n_float, 1e-3)
    recalibrate_bn(model, rng)
    model.eval()
    acc_float = accuracy(model, np.random.default_rng(EVAL_SEED))

    q = copy.deepcopy(model)
    q.train()
    q.fuse_model(is_qat=True)
    act = tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                    dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False)
    q.qconfig = tq.QConfig(activation=act, weight=tq.default_per_channel_weight_fake_quant)
    tq.prepare_qat(q, inplace=True)
    q.train()
    q.apply(torch.nn.intrinsic.qat.freeze_bn_stats)
    qat_loss = train_steps(q, rng, n_qat, 1e-4)
    q.eval()
    with torch.no_grad():
        q(make_batch(rng, 4, H_EXPORT)[0])      # observers still enabled: ranges at 224x224
    q.apply(tq.disable_observer)
    acc_qat = accuracy(q, np.random.default_rng(EVAL_SEED))

    f = float_twin(model, q).eval()
    cand, _ = make_batch(np.random.default_rng(CAND_SEED), N_CAND, H_EXPORT)
    with torch.no_grad():
        yf = f(cand)
        q.apply(tq.disable_fake_quant)
        yoff = q(cand)
        q.apply(tq.enable_fake_quant)
        yq = q(cand)
    rel = float((yf - yoff).abs().max() / (yf.max() - yf.min()))
    assert rel < 1e-4, f"{name}: float twin differs from the QAT module without fake quantization: {rel:.3g}"

    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    export(q, os.path.join(d, "qat.onnx"))
    scalar_qparams(os.path.join(d, "qat.onnx"))
    export(f, os.path.join(d, "base.onnx"))
    ops_q = [n.op_type for n in onnx.load(os.path.join(d, "qat.onnx")).graph.node]
    ops_b = [n.op_type for n in onnx.load(os.path.join(d, "base.onnx")).graph.node]
    assert "BatchNormalization" not in ops_b and ops_q.count("BatchNormalization") == ops_q.count("Div") > 0
    l1 = (yf - yq).abs().mean(dim=1)
    worst = int(l1.argmax())
    np.save(os.path.join(d, "input.npy"), np.ascontiguousarray(cand[worst:worst + 1].numpy(), dtype=np.float32))
    info = (f"{name}: torchvision {net} (quantizable), seed {seed}; float training {n_float} steps x {BATCH} at "
            f"{H_TRAIN}x{H_TRAIN}, last loss {loss:.3f}, accuracy at 224x224 {acc_float:.2f}; fused ConvBn QAT "
            f"(fuse_model(is_qat=True), BN stats frozen) {n_qat} steps, last loss {qat_loss:.3f}, accuracy at "
            f"224x224 {acc_qat:.2f}; qat.onnx: {ops_q.count('Conv')} Conv, {ops_q.count('Div')} Div, "
            f"{ops_q.count('BatchNormalization')} BatchNormalization; base.onnx (float twin, BN folded by the "
            f"exporter): {ops_b.count('Conv')} Conv; float twin vs QAT module without fake quant (torch): max |diff| "
            f"/ range {rel:.2g}; bad case: candidate {worst} of {N_CAND}, output L1 {float(l1[worst]):.4g}; "
            f"{time.time() - t0:.0f} s")
    with open(os.path.join(d, "info.txt"), "w") as fo:
        fo.write(info + "\n")
    log(info)


def make_one(name, outdir, log):
    t0 = time.time()
    tm = {}

    def lap(what):
        tm[what] = time.time() - t0 - sum(tm.values())

    seed = SEEDS[name]
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build(name)
    n_float, n_qat = STEPS[name]
    loss = train_steps(model, rng, n_float, 1e-3)
    lap("float training")
    recalibrate_bn(model, rng)
    acc_train = accuracy(model, np.random.default_rng(EVAL_SEED), H_TRAIN, 32)
    acc_float = accuracy(model, np.random.default_rng(EVAL_SEED))
    lap("BN statistics, accuracy")

    # QAT: fold BN (eval-mode fusion), prepare, train a few steps, calibrate at 224, freeze.
    q = copy.deepcopy(model).eval()
    q.fuse_model(is_qat=False)
    act = tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                    dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False)
    q.qconfig = tq.QConfig(activation=act, weight=tq.default_per_channel_weight_fake_quant)
    q.train()
    tq.prepare_qat(q, inplace=True)
    qat_loss = train_steps(q, rng, n_qat, 1e-4)
    lap("QAT training")
    q.eval()
    with torch.no_grad():
        q(make_batch(rng, 4, H_EXPORT)[0])      # observers still enabled: ranges at 224x224
    q.apply(tq.disable_observer)
    acc_qat = accuracy(q, np.random.default_rng(EVAL_SEED))
    lap("calibration, accuracy")

    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    # The QAT module itself (fake quantization on, observers frozen), for bench/pyflow.py: the
    # Python workflow a user of the seeds writes runs on it, not on the exported ONNX.
    torch.save(q.state_dict(), os.path.join(d, "qat.pt"))
    export(q, os.path.join(d, "qat.onnx"))
    scalar_qparams(os.path.join(d, "qat.onnx"))
    q.apply(tq.disable_fake_quant)
    export(q, os.path.join(d, "base.onnx"))
    lap("export")
    # Bad case: of N_CAND candidates, the largest L1 between the float twin and the QAT model.
    cand, _ = make_batch(np.random.default_rng(CAND_SEED), N_CAND, H_EXPORT)
    with torch.no_grad():
        yf = q(cand)
        q.apply(tq.enable_fake_quant)
        yq = q(cand)
    l1 = (yf - yq).abs().mean(dim=1)
    worst = int(l1.argmax())
    np.save(os.path.join(d, "input.npy"), np.ascontiguousarray(cand[worst:worst + 1].numpy(), dtype=np.float32))
    lap("bad case")
    info = (f"{name}: torchvision {name} (quantizable), seed {seed}; float training {n_float} steps x {BATCH} at "
            f"{H_TRAIN}x{H_TRAIN}, last loss {loss:.3f}, accuracy (4 classes) {acc_train:.2f} at {H_TRAIN}x{H_TRAIN}, "
            f"{acc_float:.2f} at 224x224; QAT {n_qat} steps, last loss {qat_loss:.3f}, accuracy at 224x224 "
            f"{acc_qat:.2f}; bad case: candidate {worst} of {N_CAND}, output L1 {float(l1[worst]):.4g}; "
            f"{time.time() - t0:.0f} s (" + ", ".join(f"{k} {v:.0f} s" for k, v in tm.items()) + ")")
    with open(os.path.join(d, "info.txt"), "w") as f:
        f.write(info + "\n")
    log(info)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--outdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
    ap.add_argument("--models", default=",".join(MODELS + tuple(FIXTURE_PAIRS)))
    ap.add_argument("--force", action="store_true", help="regenerate models that already exist")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    for name in args.models.split(","):
        if name in FIXTURE_PAIRS:
            src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "tpairs",
                               FIXTURE_PAIRS[name])
            d = os.path.join(args.outdir, name)
            os.makedirs(d, exist_ok=True)
            for s, t in (("base.onnx", "base.onnx"), ("analysis.onnx", "qat.onnx"), ("input.npy", "input.npy")):
                with open(os.path.join(src, s), "rb") as fi, open(os.path.join(d, t), "wb") as fo:
                    fo.write(fi.read())
            print(f"{name}: copied from {src}")
            continue
        known = MODELS + tuple(FIXTURE_PAIRS) + tuple(QATBN)
        if name not in known:
            sys.exit(f"make_models.py: unknown model '{name}' (known: {', '.join(known)})")
        d = os.path.join(args.outdir, name)
        want = ("base.onnx", "qat.onnx", "input.npy") + (("qat.pt",) if name in MODELS else ())
        if not args.force and all(os.path.exists(os.path.join(d, f)) for f in want):
            print(f"{name}: present in {d} (--force regenerates)")
            continue
        (make_qatbn if name in QATBN else make_one)(name, args.outdir, print)


if __name__ == "__main__":
    main()

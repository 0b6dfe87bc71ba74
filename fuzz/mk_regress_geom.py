#!/usr/bin/python3
# fuzz/mk_regress_geom.py — writes the window-geometry regressions tests/regress/onnx_run-*-2147483647
# (pools whose kernel_shape / dilations / strides are 2^31 - 1; a depthwise QLinearConv with such a
# dilation). Usage: /usr/bin/python3 fuzz/mk_regress_geom.py tests/regress  (needs python3-onnx).
import onnx, numpy as np, sys
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]
BIG = 2147483647

def save(name, nodes, inputs, outputs, inits=(), ms=False):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    ops = [h.make_opsetid("", 17)]
    if ms: ops += [h.make_opsetid("com.microsoft", 1), h.make_opsetid("qreport.int", 1)]
    m = h.make_model(g, opset_imports=ops, producer_name="qreport-regress")
    m.ir_version = 8
    onnx.save(m, f"{out}/onnx_run-{name}")

vi = h.make_tensor_value_info
# float MaxPool, SAME_UPPER, kernel [2^31-1, 2] on 1x3x32x32 (the fuzz timeout)
save("maxpool-same-upper-kernel-2147483647",
     [h.make_node("MaxPool", ["x"], ["y"], auto_pad="SAME_UPPER", kernel_shape=[BIG, 2])],
     [vi("x", T.FLOAT, [1, 3, 32, 32])], [vi("y", T.FLOAT, None)])
# the same with Indices (the N-d path), and 3-D
save("maxpool-indices-kernel-2147483647",
     [h.make_node("MaxPool", ["x"], ["y", "i"], auto_pad="SAME_LOWER", kernel_shape=[2, BIG, 3])],
     [vi("x", T.FLOAT, [1, 2, 8, 16, 16])], [vi("y", T.FLOAT, None), vi("i", T.INT64, None)])
# AveragePool count_include_pad (padded extent clipped) and LpPool
save("averagepool-count-include-pad-kernel-2147483647",
     [h.make_node("AveragePool", ["x"], ["y"], auto_pad="SAME_UPPER", count_include_pad=1, kernel_shape=[3, BIG])],
     [vi("x", T.FLOAT, [1, 3, 32, 32])], [vi("y", T.FLOAT, None)])
save("lppool-kernel-2147483647",
     [h.make_node("LpPool", ["x"], ["y"], auto_pad="SAME_UPPER", p=2, kernel_shape=[BIG, BIG])],
     [vi("x", T.FLOAT, [1, 3, 32, 32])], [vi("y", T.FLOAT, None)])
# uint8 MaxPool (ONNX MaxPool on 8-bit) and the integer QMaxPool / QLinearAveragePool
save("maxpool-uint8-same-lower-kernel-2147483647",
     [h.make_node("MaxPool", ["x"], ["y"], auto_pad="SAME_LOWER", kernel_shape=[BIG, 2], dilations=[1, 3])],
     [vi("x", T.UINT8, [1, 3, 32, 32])], [vi("y", T.UINT8, None)])
sc = [nh.from_array(np.array(0.5, np.float32), "s"), nh.from_array(np.array(3, np.uint8), "z")]
save("qmaxpool-kernel-2147483647",
     [h.make_node("QMaxPool", ["x", "s", "z", "s", "z"], ["y"], domain="qreport.int", auto_pad="SAME_UPPER",
                  kernel_shape=[BIG, 3])],
     [vi("x", T.UINT8, [1, 3, 32, 32])], [vi("y", T.UINT8, None)], sc, ms=True)
save("qmaxpool-stride-dilation-2147483647",
     [h.make_node("QMaxPool", ["x", "s", "z", "s", "z"], ["y"], domain="qreport.int", kernel_shape=[2, 2],
                  strides=[1, BIG], dilations=[BIG, 1], pads=[BIG, 0, 0, 0])],
     [vi("x", T.UINT8, [1, 3, 32, 32])], [vi("y", T.UINT8, None)], sc, ms=True)
save("qlinearaveragepool-kernel-2147483647",
     [h.make_node("QLinearAveragePool", ["x", "s", "z", "s", "z"], ["y"], domain="com.microsoft",
                  auto_pad="SAME_UPPER", count_include_pad=1, kernel_shape=[BIG, 3])],
     [vi("x", T.UINT8, [1, 3, 32, 32])], [vi("y", T.UINT8, None)], sc, ms=True)
# depthwise QLinearConv with a dilation of 2^31-1 (its padded planes would be tens of GB)
C = 4
w = nh.from_array(np.arange(C * 2, dtype=np.int8).reshape(C, 1, 1, 2) - 3, "w")
qc = [nh.from_array(np.array(0.5, np.float32), "s"), nh.from_array(np.array(3, np.uint8), "z"),
      nh.from_array(np.array(0.25, np.float32), "ws"), nh.from_array(np.array(0, np.int8), "wz"), w]
save("qlinearconv-depthwise-dilation-2147483647",
     [h.make_node("QLinearConv", ["x", "s", "z", "w", "ws", "wz", "s", "z"], ["y"], group=C, dilations=[1, BIG],
                  pads=[0, BIG, 0, 0])],
     [vi("x", T.UINT8, [1, C, 8, 8])], [vi("y", T.UINT8, None)], qc)

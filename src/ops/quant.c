/* ops/quant — QuantizeLinear / DequantizeLinear and the QOperator / integer ops. */

static const QrOpDef qr_ops_quant[] = {
    { NULL, NULL, 0, 0, 0, 0, NULL, NULL, 0 },   /* placeholder until the first op lands */
};
